import type { NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "pino";
import { isTerminal } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { encodeJson, subjects, type Versioned } from "../../shared/nats/index.js";
import type { JobRecord } from "../../shared/records/index.js";
import type { Clock } from "../../shared/runtime/index.js";
import type { ClusterView } from "./cluster-view.js";
import type { ConcurrencyCounts } from "./concurrency-keys.js";
import type { SchedulerConfig } from "./config.js";
import type { QueueDepthGuard } from "./job-queue.js";
import type { JobsWatch } from "./jobs-watch.js";
import type { AllocationWriter } from "./reservations.js";
import { releaseKeySlot } from "./key-quotas.js";
import type { SchedulerStore } from "./scheduler-store.js";
import { jobsFinished, runSeconds, startLatencySeconds } from "./scheduler-metrics.js";

/** What the scheduler's handlers and loops share. */
export interface SchedulerContext {
  nc: NatsConnection;
  logger: Logger;
  clock: Clock;
  config: Readonly<SchedulerConfig>;
  store: SchedulerStore;
  view: ClusterView;
  /** The one writer of each node's allocation record in this replica (reserve, release). */
  allocations: AllocationWriter;
  /** The replica's watch of the job bucket; `caughtUp()` gives read-your-writes to a request served from a picture kept from it. */
  jobsWatch: JobsWatch;
  /** The bound on waiting jobs, checked by submit and retry. */
  queueDepth: QueueDepthGuard;
  /** Jobs assigned or running per concurrency key (the active jobs' index). */
  concurrency: ConcurrencyCounts;
  /** Asks for a placement round soon (coalesced; never a busy loop). */
  requestPlacement(): void;
}

/**
 * Applies one transition to a job by compare-and-set (retried on conflict, re-checking the
 * source state each time), then announces it. `known`: the record as the caller just read
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

/** The job's submit→start and run times, observed by the replica that recorded the change. */
function observeTimes(nowMs: number, before: JobRecord, after: JobRecord): void {
  if (after.state === "running" && after.started_at !== null) {
    startLatencySeconds.observe(Math.max(0, Date.parse(after.started_at) - Date.parse(after.queued_at)) / 1000);
  }
  if (isTerminal(after.state) && before.state === "running" && before.started_at !== null) {
    runSeconds.observe({ state: after.state }, Math.max(0, nowMs - Date.parse(before.started_at)) / 1000);
  }
}
