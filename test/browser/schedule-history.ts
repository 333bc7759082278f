import type { ComputeClient } from "../harness/client.js";
import type { FakeNode } from "../harness/fake-node.js";
import type { ManualClock } from "../harness/manual-clock.js";

export const DAY_MS = 86_400_000;
const POLL_INTERVAL_MS = 100;
const TICK_TIMEOUT_MS = 20_000;

/** One run of a schedule in the past: when it ticked, its log, how long it ran and how it ended. */
export interface PastRun {
  daysAgo: number;
  ranMs: number;
  outcome: "succeeded" | "failed";
  exitCode: number;
  error?: { code: string; message: string };
  lines: [stream: "stdout" | "stderr", text: string][];
}

/** 02:00 UTC on the day `daysAgo` days before now. */
export function tickOf(daysAgo: number): number {
  const day = new Date(Date.now() - daysAgo * DAY_MS);
  return Date.UTC(day.getUTCFullYear(), day.getUTCMonth(), day.getUTCDate(), 2);
}

/** A cron expression that ticks at 02:00 UTC on exactly the days of `runs` (all within the last four weeks). */
export function cronOf(runs: readonly PastRun[]): string {
  return `0 2 ${runs.map((run) => new Date(tickOf(run.daysAgo)).getUTCDate()).join(",")} * *`;
}

/** The id of the job the schedule made for `tick`, once it has (read from the schedule, as a user would: the id's last character is the scheduler's). */
async function untilMade(user: ComputeClient, scheduleId: string, tick: number): Promise<string> {
  const deadline = Date.now() + TICK_TIMEOUT_MS;
  const tickAt = new Date(tick).toISOString();
  while (Date.now() < deadline) {
    const found = await user.call("retrieveSchedule", { schedule_id: scheduleId }).catch(() => null);
    if (found?.schedule.last_run_at === tickAt && found.schedule.last_job_id) return found.schedule.last_job_id;
    await new Promise((resolve) => setTimeout(resolve, POLL_INTERVAL_MS));
  }
  throw new Error(`the schedule ${scheduleId} did not make the job of ${tickAt} within ${TICK_TIMEOUT_MS} ms`);
}

/**
 * Plays a schedule's past runs, oldest first, with the scheduler's clock moved by hand:
 * the clock goes to each tick, the schedule makes its job, `node` runs it (its log lines
 * timed as it runs) for `ranMs` and reports its end. Answers each run's job id. The
 * schedule must tick on the runs' days only (`cronOf`) and the clock start before them.
 */
export async function playPastRuns(
  user: ComputeClient,
  clock: ManualClock,
  node: FakeNode,
  scheduleId: string,
  runs: readonly PastRun[],
): Promise<Map<PastRun, string>> {
  const jobs = new Map<PastRun, string>();
  for (const run of runs) {
    const tick = tickOf(run.daysAgo);
    clock.advance(tick + 1000 - clock.now());
    const jobId = await untilMade(user, scheduleId, tick);
    await node.take(jobId);
    const at = (index: number) => new Date(clock.now() + index * 1000).toISOString();
    await node.client.call("pushLogs", {
      job_id: jobId,
      attempt: 1,
      lines: run.lines.map(([stream, line], index) => ({ seq: index + 1, stream, line, ts: at(index) })),
    });
    clock.advance(run.ranMs);
    await node.client.call("result", {
      job_id: jobId,
      attempt: 1,
      outcome: run.outcome,
      exit_code: run.exitCode,
      ...(run.error ? { error: run.error } : {}),
    });
    node.running.delete(jobId);
    jobs.set(run, jobId);
  }
  return jobs;
}
