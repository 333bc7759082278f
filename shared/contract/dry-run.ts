import { z } from "zod";
import { CreditAmount, PlanRates } from "./billing.js";
import { NodeId } from "./ids.js";
import { PendingReason, PoolId } from "./jobs.js";

/**
 * The answer of `jobs/submit` with `dry_run: true`: what a submit of the same body would
 * do now, with nothing created, admitted or charged. Figures are as of the answer; the
 * next real submit may find them changed.
 */

/** A node that would take the job now, with what it has free. */
export const DryRunNode = z.object({
  node_id: NodeId,
  pool_id: PoolId,
  free: z.object({ slots: z.number().int(), cpu: z.number(), memory_mb: z.number(), gpu: z.number() }),
});
export type DryRunNode = z.infer<typeof DryRunNode>;

export const DryRunPlacement = z.object({
  /** The nodes of the job's pool that would take it now (most free slots first); empty when none would. */
  nodes: z.array(DryRunNode),
  /** Why the job would wait once queued (a `pending_reason`); null when a listed node would take it at once. */
  pending_reason: PendingReason.nullable(),
});
export type DryRunPlacement = z.infer<typeof DryRunPlacement>;

/** What a run would cost on an operator pool, at the plan's rates. */
export const DryRunCost = z.object({
  /** Credits per hour of wall time for the job's resources. */
  estimated_per_hour: CreditAmount,
  /** The unit of every amount: `credits` (docs/billing.md). */
  unit: z.literal("credits"),
  plan_id: z.string(),
  rates: PlanRates,
});
export type DryRunCost = z.infer<typeof DryRunCost>;

export const DryRunCredit = z.object({
  /** The business's compute-credit balance. */
  remaining: CreditAmount,
  /** Whether the plan refuses jobs on operator pools once the balance is spent. */
  billed: z.boolean(),
});
export type DryRunCredit = z.infer<typeof DryRunCredit>;

/** The caller's API key's room; null in the answer when the call is not made with a key that has quotas. */
export const DryRunKeyQuota = z.object({
  /** Submits left in the sliding hour; null when the key has no `maxJobsPerHour`. */
  jobs_per_hour_left: z.number().int().min(0).nullable(),
  /** Jobs the key may still have not ended; null when the key has no `maxConcurrentJobs`. */
  concurrent_jobs_left: z.number().int().min(0).nullable(),
  /** Whether the key's `allowedJobTypes` lets it submit this type (always true here: a type it may not submit is refused with 403, as by a real submit). */
  job_type_allowed: z.boolean(),
});
export type DryRunKeyQuota = z.infer<typeof DryRunKeyQuota>;

/** The caller's rate-limit window closest to exhaustion, this call already counted. */
export const DryRunRateLimit = z.object({
  window: z.enum(["second", "minute", "hour"]),
  limit: z.number().int(),
  remaining: z.number().int().min(0),
  reset_seconds: z.number().int().min(0),
});
export type DryRunRateLimit = z.infer<typeof DryRunRateLimit>;

/** Why a real submit would be refused now: the error code and message it would answer. */
export const DryRunRefusal = z.object({ code: z.string(), message: z.string() });
export type DryRunRefusal = z.infer<typeof DryRunRefusal>;

/** The scheduler's part of the answer (the gateway adds `rate_limit`). */
export const DryRunPlan = z.object({
  dry_run: z.literal(true),
  /** Whether a real submit would queue the job now; false with `refusal` when it would be refused. */
  would_queue: z.boolean(),
  refusal: DryRunRefusal.nullable(),
  placement: DryRunPlacement,
  /** Null on the business's own pools (never charged), or when billing refused the job. */
  cost: DryRunCost.nullable(),
  /** Null on the business's own pools (never charged), or when billing refused the job. */
  credit: DryRunCredit.nullable(),
  key_quota: DryRunKeyQuota.nullable(),
});
export type DryRunPlan = z.infer<typeof DryRunPlan>;

export const DryRunResponse = DryRunPlan.extend({
  /** Null when the caller's requests are not counted, or the counters cannot be read right now. */
  rate_limit: DryRunRateLimit.nullable(),
});
export type DryRunResponse = z.infer<typeof DryRunResponse>;
