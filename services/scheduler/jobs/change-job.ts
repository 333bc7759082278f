import { isTerminal } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { encodeJson, subjects, type Versioned } from "../../../shared/nats/index.js";
import type { JobRecord } from "../../../shared/records/index.js";
import type { SchedulerContext } from "../scheduler-context.js";
import { jobsFinished, runSeconds, startLatencySeconds } from "../scheduler-metrics.js";
import { releaseKeySlot } from "./key-quotas.js";

/**
 * Applies one transition to a job by compare-and-set (retried on conflict, re-checking the
 * source state each time); a job that ended is announced (the log streams' `end`). `known`: the record as the caller just read
 * it, where the first try starts instead of a read. Throws the transition's AppError, or
 * `resource.not_found` when the job does not exist.
 */
export async function changeJob(
  ctx: SchedulerContext,
  jobKey: string,
  transition: (job: JobRecord) => JobRecord | Promise<JobRecord>,
  known?: Versioned<JobRecord>,
): Promise<{ before: JobRecord; after: JobRecord; revision: number }> {
  let before: JobRecord | undefined;
  const stored = await ctx.store.jobs.mutate(
    jobKey,
    (job) => {
      before = job;
      return transition(job);
    },
    known,
  );
  if (!stored || !before) throw new AppError("resource.not_found", "No such job.");
  const after = stored.value;
  if (after.state !== before.state) {
    if (isTerminal(after.state)) jobsFinished.inc({ state: after.state });
    observeTimes(ctx.clock.now(), before, after);
    // Awaited, so the slot is free by the time the caller that ended the job is answered.
    if (isTerminal(after.state) && !isTerminal(before.state)) await releaseKeySlot(ctx, after);
  }
  // The end of a job is what a log stream waits for (its `end` event); other changes announce nothing.
  if (after.state !== before.state && isTerminal(after.state)) {
    ctx.nc.publish(
      subjects.jobTransitioned(after.job_id),
      encodeJson({
        app_id: after.app_id,
        business_id: after.business_id,
        job_id: after.job_id,
        state: after.state,
        attempt: after.attempt,
      }),
    );
  }
  return { before, after, revision: stored.revision };
}

/**
 * The job's submit→start and run times, observed by the replica that recorded the change: a
 * start written with its attempt's end (decision 0095) counts for both.
 */
function observeTimes(nowMs: number, before: JobRecord, after: JobRecord): void {
  const started = before.started_at === null && after.started_at !== null;
  if (started) {
    startLatencySeconds.observe(Math.max(0, Date.parse(after.started_at!) - Date.parse(after.queued_at)) / 1000);
  }
  if (isTerminal(after.state) && (before.state === "running" || started) && after.started_at !== null) {
    runSeconds.observe({ state: after.state }, Math.max(0, nowMs - Date.parse(after.started_at)) / 1000);
  }
}
