import { randomInt } from "node:crypto";
import type { SubmitJobRequest, UserContext } from "../../../shared/contract/index.js";
import { isOperatorPool, tagJobId } from "../../../shared/records/index.js";
import { concurrencyGate } from "../queue/concurrency-keys.js";
import type { SchedulerContext } from "../scheduler-context.js";

/**
 * The id a job is made under: `jobId` (new, a schedule tick's, or chosen by an idempotent
 * request) with its tag set from what the job is. An operator pool's job is tagged so, for
 * billing's ledger audit; a job with a concurrency key goes to the partition of its
 * business's keyed jobs, so the one replica that owns it counts every job of each key and
 * lets the keys take turns. The same request always gives the same id.
 *
 * `ownPartitions`, for an id this replica chose just now: any other job goes to one of
 * them, at random, so the replica that took the submit places the job from its own write
 * (no other replica's watch decodes it, no hop between replicas). Empty (a handover),
 * the id's own last character picks the partition.
 */
export function taggedJobId(
  ctx: Pick<SchedulerContext, "config">,
  caller: Pick<UserContext, "app_id" | "business_id">,
  body: Pick<SubmitJobRequest, "pool_id" | "concurrency">,
  jobId: string,
  ownPartitions: readonly number[] = [],
): string {
  const gate = concurrencyGate({ ...caller, concurrency: body.concurrency });
  const partition =
    gate?.partition ?? (ownPartitions.length > 0 ? ownPartitions[randomInt(ownPartitions.length)] : undefined);
  return tagJobId(jobId, isOperatorPool(ctx.config, body.pool_id) ? "operator" : "self_hosted", partition);
}
