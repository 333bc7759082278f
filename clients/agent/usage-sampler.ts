import type { JobUsage } from "../../shared/contract/index.js";
import { CLOCK_TICKS_PER_SECOND, processGroupMembers, readMemoryKb } from "./proc.js";

export const SAMPLE_INTERVAL_MS = 500;

/**
 * Measures a job's process group from `/proc` every 500 ms: CPU time (user + system) of
 * every process seen, and the peak memory (the larger of the group's summed resident set
 * at any sample and any one process's own high-water mark). Sampling misses processes
 * that live less than an interval and the last interval of each, so CPU time is a lower
 * bound. Without `/proc` (not Linux), or when the command ended before the first
 * sample, nothing is measured.
 */
export class UsageSampler {
  /** Latest CPU ticks per process, keyed by pid and start time (a pid can be reused). */
  private readonly cpuTicks = new Map<string, number>();
  private peakKb = 0;
  private measured = false;
  private timer: NodeJS.Timeout | undefined;
  private sampling: Promise<void> = Promise.resolve();

  constructor(private readonly pgid: number) {}

  start(): void {
    this.sample();
    this.timer = setInterval(() => this.sample(), SAMPLE_INTERVAL_MS);
    this.timer.unref();
  }

  /** Takes a last sample and returns what was measured (only the fields it could measure). */
  async stop(): Promise<Pick<JobUsage, "cpu_seconds" | "peak_memory_mb">> {
    clearInterval(this.timer);
    this.sample();
    await this.sampling;
    if (!this.measured) return {};
    const ticks = [...this.cpuTicks.values()].reduce((sum, value) => sum + value, 0);
    return { cpu_seconds: ticks / CLOCK_TICKS_PER_SECOND, peak_memory_mb: Math.round((this.peakKb / 1024) * 10) / 10 };
  }

  private sample(): void {
    this.sampling = this.sampling.then(async () => {
      const members = await processGroupMembers(this.pgid);
      // A command that ended before the first sample reports no CPU or memory rather than zeros.
      if (members === null || members.length === 0) return;
      this.measured = true;
      let rssKb = 0;
      for (const member of members) {
        const key = `${member.pid}@${member.startTicks}`;
        this.cpuTicks.set(key, Math.max(this.cpuTicks.get(key) ?? 0, member.utimeTicks + member.stimeTicks));
        const memory = await readMemoryKb(member.pid);
        if (memory) {
          rssKb += memory.rssKb;
          this.peakKb = Math.max(this.peakKb, memory.peakKb);
        }
      }
      this.peakKb = Math.max(this.peakKb, rssKb);
    });
  }
}
