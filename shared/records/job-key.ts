import { createHash } from "node:crypto";
import { checkId } from "../contract/index.js";
import { fromBase62, toBase62 } from "../runtime/index.js";

/**
 * How job records are spread over scheduler replicas. Every job belongs to one of
 * `JOB_PARTITIONS` partitions, and each partition is owned by one replica at a time
 * (docs/decisions, "Partitioned scheduling"). The partition, and whether the job runs on
 * an operator pool (whose ends are charged), are written in the last character of the
 * job's id, its tag, so anything that holds a job id knows its record's key without a
 * lookup; and the key begins with them, so a replica watches only its partitions' keys
 * and billing's ledger audit only the operator pools' jobs.
 *
 * 31 divides 62: a random last character gives each partition the same share.
 */
export const JOB_PARTITIONS = 31;

/** Whether a job's ends are metered (an operator pool) or free (a self-hosted pool). */
export type JobKind = "operator" | "self_hosted";

const KIND_LETTERS: Record<JobKind, string> = { operator: "o", self_hosted: "s" };

/** A partition's two digits, `07`: in its key tokens and in the subjects its owner answers on. */
export function partitionAddress(partition: number): string {
  return String(partition).padStart(2, "0");
}

/** The key token of a partition of one kind: `o07`, `s07`. */
function partitionToken(kind: JobKind, partition: number): string {
  return `${KIND_LETTERS[kind]}${partitionAddress(partition)}`;
}

/** A job id's tag, its last character: the kind's half of base62 and the partition within it. */
function tagOf(jobId: string): { kind: JobKind; partition: number } {
  const code = fromBase62(jobId.slice(-1));
  return { kind: code >= JOB_PARTITIONS ? "operator" : "self_hosted", partition: code % JOB_PARTITIONS };
}

/** The partition of a job, read from its id. */
export function jobPartition(jobId: string): number {
  return tagOf(jobId).partition;
}

/**
 * The job id with its tag set: the last character replaced by the one that names `kind`
 * and `partition`. The same id and tag always give the same result, so an id chosen
 * before the job's pool was known (an idempotent submit's, a schedule tick's) names one
 * job however often it is tagged. Without a `partition`, the id's own last character
 * picks one (uniformly, for a random id).
 */
export function tagJobId(jobId: string, kind: JobKind, partition?: number): string {
  const body = checkId("job", jobId).slice(0, -1);
  const within = partition ?? fromBase62(jobId.slice(-1)) % JOB_PARTITIONS;
  return `${body}${toBase62((kind === "operator" ? JOB_PARTITIONS : 0) + within, 1)}`;
}

/** The partition of a concurrency key's jobs: all in one, so one replica counts them (`concurrencyGate`'s scope). */
export function scopePartition(scope: string): number {
  return createHash("sha256").update(scope).digest().readUInt32BE(0) % JOB_PARTITIONS;
}

/**
 * A job record's key, `<partition token>.<app>.<business>.<job id>`: tenancy in the key (a
 * caller's jobs are found only under their own app and business), each id checked by its
 * format, and the partition first.
 */
export function jobKey(appId: string, businessId: string, jobId: string): string {
  const { kind, partition } = tagOf(checkId("job", jobId));
  return `${partitionToken(kind, partition)}.${checkId("app", appId)}.${checkId("business", businessId)}.${jobId}`;
}

/**
 * The key a job had before records were partitioned, `<app>.<business>.<job id>`. The
 * scheduler moves such records to their partitioned key when it starts
 * (`migrate-job-keys.ts`); nothing else writes or reads this form.
 */
export function legacyJobKey(appId: string, businessId: string, jobId: string): string {
  return `${checkId("app", appId)}.${checkId("business", businessId)}.${checkId("job", jobId)}`;
}

/** A job key taken apart; `legacy` for a key written before partitioning (its partition then read from the id). */
export interface JobKeyParts {
  partition: number;
  app_id: string;
  business_id: string;
  job_id: string;
  legacy: boolean;
}

/** The one reading of a job key (either form); null for anything else. */
export function parseJobKey(key: string): JobKeyParts | null {
  const parts = key.split(".");
  if (parts.length === 3) {
    const [app_id, business_id, job_id] = parts as [string, string, string];
    return { partition: jobPartition(job_id), app_id, business_id, job_id, legacy: true };
  }
  if (parts.length !== 4) return null;
  const [token, app_id, business_id, job_id] = parts as [string, string, string, string];
  const partition = Number(token.slice(1));
  if (!Number.isInteger(partition) || partition < 0 || partition >= JOB_PARTITIONS) return null;
  return { partition, app_id, business_id, job_id, legacy: false };
}

/** The job id at the end of a key. */
export function jobIdOfKey(key: string): string {
  return key.slice(key.lastIndexOf(".") + 1);
}

/** The key of another job of the same business (a parent, a dependent). */
export function siblingJobKey(key: string, jobId: string): string {
  const parts = parseJobKey(key);
  if (!parts) throw new Error(`not a job key: ${key}`);
  return jobKey(parts.app_id, parts.business_id, jobId);
}

/** The key filters of one partition's jobs, both kinds. */
export function partitionKeyFilters(partition: number): string[] {
  return [partitionToken("operator", partition), partitionToken("self_hosted", partition)].map((token) => `${token}.>`);
}

/** The key filters of the operator pools' jobs: billing's ledger audit reads only these. */
export function operatorJobKeyFilters(): string[] {
  return Array.from({ length: JOB_PARTITIONS }, (_, partition) => `${partitionToken("operator", partition)}.>`);
}

/** The key filter of every job of one business. */
export function businessJobsFilter(appId: string, businessId: string): string {
  return `*.${checkId("app", appId)}.${checkId("business", businessId)}.*`;
}

/** The key filter of one job by id alone, in any business: for a node that names only the id. */
export function jobIdKeyFilter(jobId: string): string {
  const { kind, partition } = tagOf(checkId("job", jobId));
  return `${partitionToken(kind, partition)}.*.*.${jobId}`;
}

/** The key filter of every record written before partitioning. */
export const LEGACY_JOB_KEYS = "*.*.*";
