import { z } from "zod";
import { isTerminal, type QuotaLimits } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import {
  addToWindow,
  HourWindow,
  pruneWindow,
  removeFromWindow,
  secondsUntilRoom,
  windowCount,
  type JobRecord,
} from "../../../shared/records/index.js";

/**
 * The quota actor of one API key, in `cjs_key_quotas` under the key id. Only the scheduler
 * writes it, always by compare-and-set, so parallel submits on any replica cannot overshoot.
 */
export const KeyQuotaRecord = z.looseObject({
  key_id: z.string(),
  /** The key's tenancy: its jobs are `<app>.<business>.<job id>`. */
  app_id: z.string(),
  business_id: z.string(),
  /** Submits admitted in the last hour (kept while the key has `maxJobsPerHour`). */
  admitted: HourWindow,
  /** Jobs admitted and not yet seen to end, job id → when admitted (epoch ms); kept while the key has `maxConcurrentJobs`. */
  active: z.record(z.string(), z.number()),
  /** The key's `maxConcurrentJobs` at its last submit, which a retry of its jobs (by any caller) is held to. */
  max_concurrent: z.number().int().nullable().default(null),
});
export type KeyQuotaRecord = z.infer<typeof KeyQuotaRecord>;

/** The `Retry-After` of `quota.concurrent_jobs_exceeded`: a slot frees when a job ends, which nothing foretells. */
export const CONCURRENCY_RETRY_AFTER_SECONDS = 5;

/**
 * A listed job whose record does not exist is dropped only when admitted longer ago than
 * a submit can take (its queue message is written first, with up to three tries).
 */
export const MISSING_RECORD_GRACE_MS = 60_000;

/** Whether a submit with these limits touches the quota record at all. */
export function tracksAdmissions(limits: QuotaLimits | null | undefined): limits is QuotaLimits {
  return !!limits && (limits.maxJobsPerHour !== null || limits.maxConcurrentJobs !== null);
}

/** 403 when the key may not submit this type. */
export function checkJobType(limits: QuotaLimits | null | undefined, type: string): void {
  const allowed = limits?.allowedJobTypes;
  if (!allowed || allowed.includes(type)) return;
  throw new AppError("quota.job_type_not_allowed", `This API key may not submit jobs of type ${type}.`, {
    details: { quota: "allowedJobTypes", type, allowed },
  });
}

export function emptyQuotaRecord(keyId: string, appId: string, businessId: string): KeyQuotaRecord {
  return { key_id: keyId, app_id: appId, business_id: businessId, admitted: [], active: {}, max_concurrent: null };
}

export type AdmissionDecision =
  | { admit: true; next: KeyQuotaRecord }
  | {
      admit: false;
      error: AppError /** Refused for concurrency: ended jobs may still be listed. */;
      concurrencyFull: boolean;
    };

/**
 * Admits one submit, or says why not: first the hourly limit, then the concurrent one.
 * The record comes back pruned, with the admission added.
 */
export function decideAdmission(
  record: KeyQuotaRecord,
  limits: QuotaLimits,
  jobId: string,
  nowMs: number,
): AdmissionDecision {
  const { maxJobsPerHour, maxConcurrentJobs } = limits;
  if (maxJobsPerHour !== null && windowCount(record.admitted, nowMs) >= maxJobsPerHour) {
    const retryAfterSeconds = secondsUntilRoom(record.admitted, nowMs, maxJobsPerHour);
    return {
      admit: false,
      concurrencyFull: false,
      error: new AppError(
        "quota.jobs_per_hour_exceeded",
        `This API key may submit ${maxJobsPerHour} jobs per hour; try again in ${retryAfterSeconds} s.`,
        {
          details: { quota: "maxJobsPerHour", limit: maxJobsPerHour },
          retryAfterSeconds,
        },
      ),
    };
  }
  if (maxConcurrentJobs !== null && Object.keys(record.active).length >= maxConcurrentJobs) {
    return {
      admit: false,
      concurrencyFull: true,
      error: new AppError(
        "quota.concurrent_jobs_exceeded",
        `This API key may have ${maxConcurrentJobs} jobs that have not ended; try again once one ends.`,
        {
          details: { quota: "maxConcurrentJobs", limit: maxConcurrentJobs },
          retryAfterSeconds: CONCURRENCY_RETRY_AFTER_SECONDS,
        },
      ),
    };
  }
  return {
    admit: true,
    next: {
      ...record,
      admitted: maxJobsPerHour !== null ? addToWindow(record.admitted, nowMs) : pruneWindow(record.admitted, nowMs),
      active: maxConcurrentJobs !== null ? { ...record.active, [jobId]: nowMs } : record.active,
      max_concurrent: maxConcurrentJobs,
    },
  };
}

/**
 * The limits a retry of one of the key's jobs is held to: its concurrency limit only (a
 * retry is not a new submit); null when the key has none.
 */
export function retryLimits(record: KeyQuotaRecord): QuotaLimits | null {
  return record.max_concurrent === null
    ? null
    : { maxJobsPerHour: null, maxConcurrentJobs: record.max_concurrent, allowedJobTypes: null };
}

/** The record without these jobs in its active set; undefined when none of them is there (nothing to write). */
export function withoutJobs(record: KeyQuotaRecord, jobIds: Iterable<string>): KeyQuotaRecord | undefined {
  const active = { ...record.active };
  let changed = false;
  for (const jobId of jobIds) {
    if (active[jobId] === undefined) continue;
    delete active[jobId];
    changed = true;
  }
  return changed ? { ...record, active } : undefined;
}

/** Takes back an admission that was not used (its job was never written). */
export function withoutAdmission(
  record: KeyQuotaRecord,
  jobId: string,
  admittedAtMs: number,
  countedInHour: boolean,
): KeyQuotaRecord {
  const { [jobId]: _dropped, ...active } = record.active;
  return {
    ...record,
    active,
    admitted: countedInHour ? removeFromWindow(record.admitted, admittedAtMs) : record.admitted,
  };
}

/**
 * The listed jobs that no longer hold a slot: those that ended, and those whose record does
 * not exist although they were admitted longer ago than a submit can take.
 */
export function endedJobs(
  active: Record<string, number>,
  records: ReadonlyMap<string, Pick<JobRecord, "state"> | null>,
  nowMs: number,
): string[] {
  return Object.entries(active)
    .filter(([jobId, admittedAt]) => {
      const record = records.get(jobId);
      if (record === undefined) return false;
      if (record === null) return nowMs - admittedAt > MISSING_RECORD_GRACE_MS;
      return isTerminal(record.state);
    })
    .map(([jobId]) => jobId);
}
