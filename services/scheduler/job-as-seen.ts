import type { Job } from "../../shared/contract/index.js";
import { placementPoolKey, publicJob, type JobRecord } from "../../shared/records/index.js";
import { atConcurrencyLimit, concurrencyGate } from "./concurrency-keys.js";
import { heldReason } from "./job-holds.js";
import { pendingReason } from "./plan.js";
import type { SchedulerContext } from "./scheduler-context.js";

/**
 * A job as its owner sees it now. A queued job's `pending_reason` is worked out from this
 * replica's picture of its pool at the moment of the read rather than stored: writing it
 * on every change of the cluster would cost a write and a delivery per waiting job.
 */
export function jobAsSeen(ctx: Pick<SchedulerContext, "view" | "clock" | "config" | "concurrency">, record: JobRecord): Job {
  const job = publicJob(record);
  if (record.state !== "queued") return job;
  const held = heldReason(record, ctx.clock.now());
  if (held !== null) return { ...job, pending_reason: held };
  const gate = concurrencyGate(record);
  if (gate && atConcurrencyLimit(gate, ctx.concurrency.inUse(gate.scope))) return { ...job, pending_reason: "concurrency_limit" };
  const pool_key = placementPoolKey(record, ctx.config.CJS_SHARED_OPERATOR_POOLS);
  return { ...job, pending_reason: pendingReason({ ...record, pool_key }, ctx.view.nodeViews(ctx.clock.now())) };
}
