import type { Job, PendingReason } from "../../../shared/contract/index.js";
import { placementPoolKey, publicJob, type JobRecord } from "../../../shared/records/index.js";
import { atConcurrencyLimit, concurrencyGate } from "../queue/concurrency-keys.js";
import { heldReason, type HoldFields } from "../queue/job-holds.js";
import { pendingReason } from "../placement/plan.js";
import type { PendingJob } from "../queue/pending-job.js";
import { concurrencyInUse } from "../queue/concurrency-counts.js";
import type { SchedulerContext } from "../scheduler-context.js";

type SeeingContext = Pick<
  SchedulerContext,
  "view" | "clock" | "config" | "concurrency" | "nc" | "instance" | "ownership"
>;

/** What `waitingReason` reads of a queued job, or of the job a dry run would queue. */
export type WaitingJob = HoldFields &
  Pick<JobRecord, "app_id" | "business_id" | "concurrency"> &
  Pick<PendingJob, "pool_key" | "type" | "labels" | "resources">;

/**
 * Why a queued job waits now, first what holds it whatever the nodes (dependencies, its
 * time), then its concurrency key (counted by the replica that owns the key's partition),
 * then what the nodes of its pool lack; `waiting_for_scheduler` when a node would take it
 * (it is about to be placed). The one rule a job's `pending_reason` and a dry run's answer
 * read.
 */
export async function waitingReason(ctx: SeeingContext, job: WaitingJob, nowMs: number): Promise<PendingReason> {
  const held = heldReason(job, nowMs);
  if (held !== null) return held;
  const gate = concurrencyGate(job);
  if (gate && atConcurrencyLimit(gate, (await concurrencyInUse(ctx, gate)) ?? 0)) return "concurrency_limit";
  return pendingReason(job, ctx.view.nodeViews(nowMs));
}

/**
 * A job as its owner sees it now. A queued job's `pending_reason` is worked out from this
 * replica's picture of its pool at the moment of the read rather than stored: writing it
 * on every change of the cluster would cost a write and a delivery per waiting job.
 */
export async function jobAsSeen(ctx: SeeingContext, record: JobRecord): Promise<Job> {
  const job = publicJob(record);
  if (record.state !== "queued") return job;
  const pool_key = placementPoolKey(record, ctx.config.CJS_SHARED_OPERATOR_POOLS);
  return { ...job, pending_reason: await waitingReason(ctx, { ...record, pool_key }, ctx.clock.now()) };
}
