import { z } from "zod";
import { JobTypeName } from "./api-keys.js";
import { Timestamp } from "./common.js";
import { JobId, NodeId, ScheduleId } from "./ids.js";

/** Every state a job can be in, exactly these strings. `docs/job-states.md` draws the transitions. */
export const JobState = z.enum(["queued", "assigned", "running", "succeeded", "failed", "timed_out", "cancelled"]);
export type JobState = z.infer<typeof JobState>;

export const TERMINAL_STATES: readonly JobState[] = ["succeeded", "failed", "timed_out", "cancelled"];

export function isTerminal(state: JobState): boolean {
  return TERMINAL_STATES.includes(state);
}

/** An operator pool (`default`, …) or a self-hosted pool of the caller's business. */
export const PoolId = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,62}$/, "lowercase letters, digits, '-' or '_', at most 63 characters");

const LabelKey = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._/-]{0,62}$/, "letters, digits, '.', '_', '/' or '-', at most 63 characters");

/** Labels as `key: value`; a job's labels must all be carried, with the same values, by its node. */
export const Labels = z
  .record(LabelKey, z.string().max(128))
  .refine((labels) => Object.keys(labels).length <= 32, "at most 32 labels");
export type Labels = z.infer<typeof Labels>;

export const Resources = z.strictObject({
  /** Cores (fractions allowed). */
  cpu: z.number().positive().max(1024).default(1),
  memory_mb: z.number().int().positive().max(4_194_304).default(512),
  gpu: z.number().int().min(0).max(64).default(0),
});
export type Resources = z.infer<typeof Resources>;

/**
 * When a failed attempt is run again by itself: `max_retries` more attempts at most, each
 * after its backoff (`initial_seconds`, times `factor` per retry, capped at `max_seconds`,
 * plus up to `jitter` of it at random). Without `on_exit_codes` and `on_codes` every
 * failure is retried; with them, only a failure that matches one of the lists.
 */
export const RetryPolicy = z.strictObject({
  max_retries: z.number().int().min(0).max(20),
  backoff: z
    .strictObject({
      initial_seconds: z.number().min(0).max(86_400).default(10),
      factor: z.number().min(1).max(10).default(2),
      max_seconds: z.number().min(0).max(86_400).default(600),
      /** A fraction 0–1: up to this share of each delay is added at random, so retries of many jobs spread out. */
      jitter: z.number().min(0).max(1).default(0.1),
    })
    .default({ initial_seconds: 10, factor: 2, max_seconds: 600, jitter: 0.1 }),
  /** Exit codes that are retried (a failure with another exit code is not). */
  on_exit_codes: z.array(z.number().int().min(0).max(255)).min(1).max(64).optional(),
  /** Job error codes that are retried: `job.exit_nonzero`, `job.timed_out`, `node.lost`, or one a node reported. */
  on_codes: z.array(z.string().min(1).max(64)).min(1).max(16).optional(),
});
export type RetryPolicy = z.infer<typeof RetryPolicy>;

/** At most `max_running` jobs of one `key` are assigned or running at once within the business; the others wait their turn. */
export const ConcurrencyLimit = z.strictObject({
  key: z
    .string()
    .regex(
      /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$/,
      "letters, digits, '.', '_', ':', '/' or '-', at most 128 characters",
    ),
  max_running: z.number().int().min(1).max(10_000),
});
export type ConcurrencyLimit = z.infer<typeof ConcurrencyLimit>;

const EnvName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, "a shell variable name");

export const SubmitJobRequest = z.strictObject({
  /** What kind of job: the node must list it in its `job_types`. */
  type: JobTypeName,
  /** The program and its arguments, run as argv (no shell unless the command is one). */
  command: z.array(z.string().max(16_384)).min(1).max(1024),
  env: z
    .record(EnvName, z.string().max(65_536))
    .refine((env) => Object.keys(env).length <= 256, "at most 256 variables")
    .default({}),
  resources: Resources.default({ cpu: 1, memory_mb: 512, gpu: 0 }),
  /** Seconds a run may take once started; the service's maximum bounds it. */
  timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .default(3600),
  pool_id: PoolId.default("default"),
  labels: Labels.default({}),
  /** Higher runs first within a pool. */
  priority: z.number().int().min(-1000).max(1000).default(0),
  name: z.string().trim().min(1).max(200).optional(),
  metadata: z
    .record(z.string().min(1).max(64), z.string().max(1024))
    .refine((metadata) => Object.keys(metadata).length <= 64, "at most 64 entries")
    .default({}),
  /** Runs allowed in all, counting requeues after node loss. */
  max_attempts: z.number().int().min(1).max(20).default(3),
  /** Run failed attempts again by themselves, after a backoff. */
  retry: RetryPolicy.optional(),
  /** A job not started within this many seconds of becoming runnable ends `cancelled` with `job.queue_timeout`. */
  queue_timeout_seconds: z
    .number()
    .int()
    .min(1)
    .max(30 * 86_400)
    .optional(),
  /** Not before this time (in the future, at most a year ahead): the job waits with `pending_reason` `scheduled`. */
  run_at: Timestamp.optional(),
  /** Jobs of the same business that must all succeed first; when one fails or is cancelled this job ends `cancelled`. */
  depends_on: z.array(JobId).min(1).max(20).optional(),
  concurrency: ConcurrencyLimit.optional(),
  /** Answer what would happen, creating nothing. */
  dry_run: z.boolean().default(false),
});
export type SubmitJobRequest = z.infer<typeof SubmitJobRequest>;

export const SubmitJobResponse = z.object({ job_id: JobId, state: JobState, created_at: Timestamp });
export type SubmitJobResponse = z.infer<typeof SubmitJobResponse>;

/** Why a job or an attempt failed: a stable code (`node.lost`, `job.timed_out`, `job.exit_nonzero`, …) and words. */
export const JobError = z.object({ code: z.string().max(64), message: z.string().max(2000) });
export type JobError = z.infer<typeof JobError>;

/** What a run used, as the node measured it. */
export const JobUsage = z.strictObject({
  wall_seconds: z.number().min(0).optional(),
  cpu_seconds: z.number().min(0).optional(),
  peak_memory_mb: z.number().min(0).optional(),
});
export type JobUsage = z.infer<typeof JobUsage>;

/** Why a queued job is still waiting. */
export const PendingReason = z.enum([
  "waiting_for_scheduler",
  "no_nodes_in_pool",
  "no_node_with_type",
  "no_node_with_resources",
  "no_node_with_labels",
  "all_nodes_busy",
  "all_nodes_draining",
  "all_nodes_at_hourly_quota",
  /** `run_at` is still in the future (see `next_attempt_at`). */
  "scheduled",
  /** A failed attempt waits for its backoff before the next (see `next_attempt_at`). */
  "retry_backoff",
  /** A job of `depends_on` has not succeeded yet. */
  "waiting_for_dependencies",
  /** Its `concurrency.key` already has `max_running` jobs assigned or running. */
  "concurrency_limit",
]);
export type PendingReason = z.infer<typeof PendingReason>;

/** One transition of a job, kept in its timeline. */
export const JobEvent = z.object({
  at: Timestamp,
  state: JobState,
  attempt: z.number().int(),
  /**
   * A stable word for the cause: `submitted`, `assigned`, `started`, `exited`, `failed`, `cancelled`, `timed_out`,
   * `retried`, `node_lost`, `retry_scheduled` (a failed attempt will run again after its backoff), `released`
   * (its `run_at`, backoff or dependencies let it run), `queue_timeout`, `dependency_failed`.
   */
  reason: z.string(),
  node_id: z.string().nullable(),
  /** The exit code or error that ended an attempt, when one did. */
  exit_code: z.number().int().nullable().optional(),
  error: JobError.nullable().optional(),
  /** On `retry_scheduled`: when the next attempt may start. */
  next_attempt_at: Timestamp.nullable().optional(),
});
export type JobEvent = z.infer<typeof JobEvent>;

/** A job as callers see it. */
export const Job = z.object({
  job_id: JobId,
  app_id: z.string(),
  business_id: z.string(),
  /** The user who submitted it. */
  user_id: z.string(),
  /** The API key it was submitted with, when it was. */
  key_id: z.string().nullable(),
  name: z.string().nullable(),
  type: z.string(),
  command: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  resources: z.object({ cpu: z.number(), memory_mb: z.number(), gpu: z.number() }),
  timeout_seconds: z.number().int(),
  pool_id: z.string(),
  labels: z.record(z.string(), z.string()),
  priority: z.number().int(),
  metadata: z.record(z.string(), z.string()),
  max_attempts: z.number().int(),
  // The fields below arrived with job features; a record stored before them reads with their defaults.
  retry: RetryPolicy.nullable().default(null),
  /** Automatic retries made so far under `retry`. */
  retry_count: z.number().int().default(0),
  queue_timeout_seconds: z.number().int().nullable().default(null),
  run_at: Timestamp.nullable().default(null),
  /** When a waiting job may run next: its `run_at`, or the end of a retry's backoff; null otherwise. */
  next_attempt_at: Timestamp.nullable().default(null),
  depends_on: z.array(z.string()).default([]),
  /** Jobs submitted later with this one in their `depends_on`. */
  dependents: z.array(z.string()).default([]),
  concurrency: ConcurrencyLimit.nullable().default(null),
  /** The schedule that made this job, when one did. */
  schedule_id: z.string().nullable().default(null),
  state: JobState,
  /** How many times the job has been assigned to a node; each assignment is a new attempt. */
  attempt: z.number().int(),
  node_id: z.string().nullable(),
  exit_code: z.number().int().nullable(),
  error: JobError.nullable(),
  usage: JobUsage.nullable(),
  pending_reason: PendingReason.nullable(),
  created_at: Timestamp,
  queued_at: Timestamp,
  started_at: Timestamp.nullable(),
  finished_at: Timestamp.nullable(),
  updated_at: Timestamp,
  timeline: z.array(JobEvent),
});
export type Job = z.infer<typeof Job>;

export const JobRef = z.strictObject({ job_id: JobId });
export type JobRef = z.infer<typeof JobRef>;

export const JobPayload = z.object({ job: Job });
export type JobPayload = z.infer<typeof JobPayload>;

const LabelFilter = z.string().regex(/^[^=]+=[^=]*$/, "`key=value`");
const MetadataFilter = z.string().regex(/^[^=]{1,64}=[\s\S]{0,1024}$/, "`key=value` (the first `=` separates them)");

export const ListJobsRequest = z.strictObject({
  /** One state or several. */
  state: z.union([JobState, z.array(JobState).min(1)]).optional(),
  pool_id: PoolId.optional(),
  type: JobTypeName.optional(),
  node_id: NodeId.optional(),
  /** `key=value`; one or several, all must match. */
  label: z.union([LabelFilter, z.array(LabelFilter).min(1).max(16)]).optional(),
  /** `key=value` of `metadata`; one or several, all must match. */
  metadata: z.union([MetadataFilter, z.array(MetadataFilter).min(1).max(16)]).optional(),
  /** Jobs whose `name` starts with this. */
  name_prefix: z.string().min(1).max(200).optional(),
  /** Jobs made by this schedule. */
  schedule_id: ScheduleId.optional(),
  created_after: Timestamp.optional(),
  created_before: Timestamp.optional(),
  limit: z.number().int().min(1).max(200).default(50),
  /** `next_cursor` of the previous page, with the same filters (opaque; another listing's cursor is 400 `request.invalid`). */
  cursor: z.string().min(1).max(200).optional(),
});
export type ListJobsRequest = z.infer<typeof ListJobsRequest>;

/** A job in a list: everything but `env` (it may hold secrets) and the timeline. */
export const JobSummary = Job.omit({ env: true, timeline: true });
export type JobSummary = z.infer<typeof JobSummary>;

export const ListJobsResponse = z.object({
  items: z.array(JobSummary),
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: z.string().nullable(),
});
export type ListJobsResponse = z.infer<typeof ListJobsResponse>;
