import type { DryRunKeyQuota, QuotaLimits, UserContext } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { kvKey, RecordBusyError } from "../../../shared/nats/index.js";
import { jobKey, windowCount, type JobRecord } from "../../../shared/records/index.js";
import {
  decideAdmission,
  emptyQuotaRecord,
  endedJobs,
  type KeyQuotaRecord,
  retryLimits,
  tracksAdmissions,
  withoutAdmission,
  withoutJobs,
} from "./key-quota-rules.js";
import type { SchedulerContext } from "../scheduler-context.js";

/** Compare-and-set tries of one admission; parallel submits of one key contend for one record. */
const ADMIT_TRIES = 100;
/** A key at its concurrency limit has its listed jobs read at most this often per replica. */
const HEAL_EVERY_MS = 1000;
/** Job records read at once while healing. */
const HEAL_READS_AT_ONCE = 32;

/** What an admitted submit may take back if its job is never written. */
export interface KeyAdmission {
  /** Whether the job took one of the key's `maxConcurrentJobs` places, to be freed when it ends (the record's `key_slot`). */
  holdsSlot: boolean;
  /**
   * Gives the admission back. `keepSlot`: the job's place stays taken (another admission
   * of the same job id holds it: an idempotent repeat that lost the create); only the
   * hourly count goes back.
   */
  release(options?: { keepSlot?: boolean }): Promise<void>;
}

const lastHeal = new WeakMap<SchedulerContext["store"], Map<string, number>>();

function mayHeal(ctx: SchedulerContext, keyId: string, nowMs: number): boolean {
  const byKey = lastHeal.get(ctx.store) ?? new Map<string, number>();
  lastHeal.set(ctx.store, byKey);
  const last = byKey.get(keyId);
  if (last !== undefined && nowMs - last < HEAL_EVERY_MS && nowMs >= last) return false;
  byKey.set(keyId, nowMs);
  return true;
}

/** Reads the record of every listed job (null when it does not exist). */
async function readListedJobs(ctx: SchedulerContext, record: KeyQuotaRecord): Promise<Map<string, JobRecord | null>> {
  const found = new Map<string, JobRecord | null>();
  const ids = Object.keys(record.active);
  for (let start = 0; start < ids.length; start += HEAL_READS_AT_ONCE) {
    await Promise.all(
      ids.slice(start, start + HEAL_READS_AT_ONCE).map(async (jobId) => {
        found.set(jobId, (await ctx.store.jobs.get(jobKey(record.app_id, record.business_id, jobId)))?.value ?? null);
      }),
    );
  }
  return found;
}

/**
 * Admits a submit against the quotas of the caller's API key, by compare-and-set on the
 * key's quota record: over `maxJobsPerHour` or `maxConcurrentJobs` it throws the 429 and
 * writes nothing. A key at its concurrency limit first has its listed jobs read, and those
 * that ended are dropped, so a lost release can never hold a slot for good. Returns null
 * when the caller has no such quota (no I/O at all).
 */
export async function admitToKeyQuota(
  ctx: SchedulerContext,
  caller: UserContext,
  jobId: string,
  nowMs: number,
): Promise<KeyAdmission | null> {
  const limits = caller.quotas;
  if (caller.key_id === null || !tracksAdmissions(limits)) return null;
  return admit(
    ctx,
    { keyId: caller.key_id, appId: caller.app_id, businessId: caller.business_id },
    limits,
    jobId,
    nowMs,
  );
}

/**
 * Admits a retry of a job submitted with a key against that key's concurrency limit (a
 * retry runs the job again, but is no new submit for the hourly count). Null when the key
 * has no such limit.
 */
export async function admitRetryToKeyQuota(
  ctx: SchedulerContext,
  job: Pick<JobRecord, "key_id" | "app_id" | "business_id" | "job_id">,
  nowMs: number,
): Promise<KeyAdmission | null> {
  if (job.key_id === null) return null;
  const stored = await ctx.store.keyQuotas.get(kvKey(job.key_id));
  const limits = stored ? retryLimits(stored.value) : null;
  if (!limits) return null;
  return admit(ctx, { keyId: job.key_id, appId: job.app_id, businessId: job.business_id }, limits, job.job_id, nowMs);
}

async function admit(
  ctx: SchedulerContext,
  owner: { keyId: string; appId: string; businessId: string },
  limits: QuotaLimits,
  jobId: string,
  nowMs: number,
): Promise<KeyAdmission> {
  const { keyId } = owner;
  const key = kvKey(keyId);
  const bucket = ctx.store.keyQuotas;
  let ended: string[] = [];
  let healed = false;
  const admitted = async (stored: KeyQuotaRecord | null): Promise<KeyQuotaRecord> => {
    const current = stored ?? emptyQuotaRecord(keyId, owner.appId, owner.businessId);
    let record = withoutJobs(current, ended) ?? current;
    let decision = decideAdmission(record, limits, jobId, nowMs);
    if (!decision.admit && decision.concurrencyFull && !healed && mayHeal(ctx, keyId, nowMs)) {
      // At the limit: jobs whose end was never released free their places before refusing.
      healed = true;
      ended = endedJobs(record.active, await readListedJobs(ctx, record), nowMs);
      record = withoutJobs(current, ended) ?? current;
      decision = decideAdmission(record, limits, jobId, nowMs);
    }
    if (!decision.admit) throw decision.error;
    return decision.next;
  };
  try {
    // Another submit of the key that won the record is followed by a short pause, spread out.
    await bucket.upsert(key, admitted, undefined, {
      writes: ADMIT_TRIES,
      pauseMs: (write) => Math.random() * Math.min(50, 2 + write * 2),
    });
  } catch (error) {
    if (error instanceof RecordBusyError)
      throw new AppError("service.unavailable", "The key's quota record is too busy right now; try again.", {
        retryAfterSeconds: 1,
      });
    throw error;
  }
  const countedInHour = limits.maxJobsPerHour !== null;
  return {
    holdsSlot: limits.maxConcurrentJobs !== null,
    release: async ({ keepSlot = false } = {}) => {
      await bucket
        .mutate(key, (value) => {
          const released = withoutAdmission(value, jobId, nowMs, countedInHour);
          return keepSlot ? { ...released, active: value.active } : released;
        })
        .catch((error: unknown) =>
          ctx.logger.warn({ err: error, key_id: keyId, job_id: jobId }, "could not release an unused quota admission"),
        );
    },
  };
}

/** The id a dry run's admission is decided under: no job has it, and nothing is written. */
const DRY_RUN_JOB = "dry_run";

/**
 * What the caller's key has left in its quotas, read without admitting anything (a dry
 * run), and the refusal an admission would give now. A key at its concurrency limit has
 * its listed jobs read, as an admission would, so jobs that ended do not count. Null when
 * the call is made without a key or with a key that has no quotas.
 */
export async function keyQuotaHeadroom(
  ctx: SchedulerContext,
  caller: UserContext,
  nowMs: number,
): Promise<{ headroom: DryRunKeyQuota; refusal: AppError | null } | null> {
  const limits = caller.quotas;
  if (caller.key_id === null || !limits) return null;
  const headroom: DryRunKeyQuota = { jobs_per_hour_left: null, concurrent_jobs_left: null, job_type_allowed: true };
  if (!tracksAdmissions(limits)) return { headroom, refusal: null };
  const stored =
    (await ctx.store.keyQuotas.get(kvKey(caller.key_id)))?.value ??
    emptyQuotaRecord(caller.key_id, caller.app_id, caller.business_id);
  let record = stored;
  if (limits.maxConcurrentJobs !== null && Object.keys(record.active).length >= limits.maxConcurrentJobs) {
    record = withoutJobs(record, endedJobs(record.active, await readListedJobs(ctx, record), nowMs)) ?? record;
  }
  const decision = decideAdmission(record, limits, DRY_RUN_JOB, nowMs);
  if (limits.maxJobsPerHour !== null)
    headroom.jobs_per_hour_left = Math.max(0, limits.maxJobsPerHour - windowCount(record.admitted, nowMs));
  if (limits.maxConcurrentJobs !== null)
    headroom.concurrent_jobs_left = Math.max(0, limits.maxConcurrentJobs - Object.keys(record.active).length);
  return { headroom, refusal: decision.admit ? null : decision.error };
}

/**
 * Frees the slot of a job of a key that just ended. Nothing to do, and nothing read, when
 * the record says the job took no place (`key_slot` false). Best effort: if this is lost,
 * the next submit that finds the key at its limit reads the job and drops it.
 */
export async function releaseKeySlot(
  ctx: SchedulerContext,
  job: Pick<JobRecord, "key_id" | "job_id" | "key_slot">,
): Promise<void> {
  if (job.key_id === null || job.key_slot === false) return;
  const keyId = job.key_id;
  await ctx.store.keyQuotas
    .mutate(kvKey(keyId), (record) => withoutJobs(record, [job.job_id]))
    .catch((error: unknown) =>
      ctx.logger.warn(
        { err: error, key_id: keyId, job_id: job.job_id },
        "could not free a key's job slot; the next submit at the limit will",
      ),
    );
}
