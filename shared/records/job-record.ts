import { z } from "zod";
import { checkId, Job } from "../contract/index.js";

/**
 * A job as stored in the `cjs_jobs` bucket under `jobKey(...)`: the public record plus
 * the internal pool identity. Only the scheduler writes it, always by compare-and-set.
 */
export const JobRecord = Job.extend({
  /** `op.<pool>` for an operator pool, `sh.<business>.<pool>` for a self-hosted one. */
  pool_key: z.string(),
  /** When the current attempt must end (started_at + timeout); null unless running. */
  deadline_at: z.string().nullable(),
  /** Attempts made before the last retry: automatic requeues count from here, so each retry gets `max_attempts` again. */
  attempt_base: z.number().int().default(0),
});
export type JobRecord = z.infer<typeof JobRecord>;

/** Tenancy is in the key: a caller's jobs are found only under their own app and business. Each id is checked by its format. */
export function jobKey(appId: string, businessId: string, jobId: string): string {
  return `${checkId("app", appId)}.${checkId("business", businessId)}.${checkId("job", jobId)}`;
}

/** The key filter of every job of one business. */
export function businessJobsFilter(appId: string, businessId: string): string {
  return `${checkId("app", appId)}.${checkId("business", businessId)}.*`;
}

export function operatorPoolKey(poolId: string): string {
  return `op.${poolId}`;
}

export function selfHostedPoolKey(businessId: string, poolId: string): string {
  return `sh.${businessId}.${poolId}`;
}

/** The public face of a job record. */
export function publicJob(record: JobRecord): Job {
  const { pool_key: _poolKey, deadline_at: _deadline, attempt_base: _base, ...job } = record;
  return job;
}
