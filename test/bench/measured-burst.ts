import { monotonicMs } from "./clock.js";
import { JobTracker } from "./job-tracker.js";
import { countErrors, formatErrors, runClosedLoop, runOpenLoop } from "./load.js";
import { cpuSince, cpuSnapshot, type ProcessRef } from "./proc-stats.js";
import type { Progress } from "./progress.js";
import { percentile } from "./stats.js";
import { SUBMITTERS } from "./workload.js";

/** What one burst measured. */
export interface BurstRun {
  jobsPerSecond: number;
  submitsPerSecond: number;
  p50Ms: number;
  p99Ms: number;
  /** CPU ms per 1000 jobs, by process. */
  cpuPer1000: Map<string, number>;
  /** First submit and last completion, on the monotonic clock (for the profiles). */
  startMs: number;
  endMs: number;
}

/**
 * The tracker of the burst running now. The nodes or the Worker report every job they
 * start and finish to `onStarted`/`onFinished` for the whole scenario; each burst gets a
 * fresh tracker, so a burst counts its own jobs only.
 */
export class BurstTracking {
  current = new JobTracker();
  readonly onStarted = (id: string, at: number) => this.current.started(id, at);
  readonly onFinished = (id: string, at: number) => this.current.completed(id, at);
}

export interface BurstRequest {
  tracking: BurstTracking;
  /** Submits job `index` and answers its id. */
  submitOne: (index: number) => Promise<string>;
  /** The processes whose CPU time the burst reads. */
  measured: readonly ProcessRef[];
  jobs: number;
  /** For the progress line and a failure's message. */
  label: string;
  progress: Progress;
  signal: AbortSignal;
  /**
   * Submits at this steady rate (an open loop, each job due at `start + index / rate`)
   * instead of as fast as they are answered; latency is then from each submit's due time.
   */
  ratePerSecond?: number;
}

/** Unanswered submits at most in a steady run: past this the service is not keeping up, and the run fails. */
const STEADY_MAX_IN_FLIGHT = 512;

/**
 * One run of no-op jobs end to end: `jobs` submits from SUBMITTERS clients as fast as
 * they are answered (a burst), or at `ratePerSecond`, until the last job is completed.
 * Answers what it measured, or why it did not complete.
 */
export async function measuredBurst(request: BurstRequest): Promise<BurstRun | { failure: string }> {
  const { tracking, submitOne, measured, jobs, label, progress, signal } = request;
  progress.step(`${label}, ${jobs} jobs`);
  tracking.current = new JobTracker();
  const tracker = tracking.current;
  const ticker = setInterval(
    () => progress.update(`${tracker.sentAt.size}/${jobs} submitted, ${tracker.completedCount} completed`),
    250,
  );
  const before = cpuSnapshot(measured);
  const started = monotonicMs();
  try {
    const rate = request.ratePerSecond;
    const submitted =
      rate === undefined
        ? await runClosedLoop({ concurrency: SUBMITTERS, requests: jobs, signal }, async (index) => {
            const sentAt = monotonicMs();
            tracker.submitted(await submitOne(index), sentAt);
          })
        : await runOpenLoop(
            { ratePerSecond: rate, durationMs: (jobs * 1000) / rate, maxInFlight: STEADY_MAX_IN_FLIGHT, signal },
            async (index, intendedAtMs) => tracker.submitted(await submitOne(index), intendedAtMs),
          );
    const submitsDone = monotonicMs();
    const shed = "shed" in submitted ? submitted.shed : 0;
    if (countErrors(submitted.errors) > 0 || shed > 0)
      return {
        failure: `${label}: submits failed: ${formatErrors(submitted.errors)}${shed > 0 ? `, ${shed} not sent (${STEADY_MAX_IN_FLIGHT} unanswered)` : ""} (${submitted.errorSamples.join("; ")})`,
      };
    const timeoutMs = Math.max(60_000, jobs * 100);
    if (!(await tracker.waitForCompleted(jobs, timeoutMs, signal)))
      return { failure: `${label}: ${tracker.completedCount} of ${jobs} jobs completed within ${timeoutMs / 1000} s` };
    const cpu = cpuSince(before, measured);
    const latencies = tracker.submitToStartMs().sort((a, b) => a - b);
    return {
      jobsPerSecond: (jobs * 1000) / (tracker.lastCompletedAtMs - started),
      submitsPerSecond: (jobs * 1000) / (submitsDone - started),
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
      cpuPer1000: new Map([...cpu].map(([name, ms]) => [name, (ms * 1000) / jobs])),
      startMs: started,
      endMs: tracker.lastCompletedAtMs,
    };
  } finally {
    clearInterval(ticker);
  }
}
