import { z } from "zod";
import { checkSharedPools, PoolSettings } from "../../shared/records/index.js";
import { BaseConfig, intSetting, parseConfig, opsSettings } from "../../shared/runtime/index.js";

export const SchedulerConfig = BaseConfig.extend({
  ...opsSettings(9101),
  ...PoolSettings.shape,
  /** Upper bound of a job's `timeout_seconds`. */
  CJS_MAX_JOB_TIMEOUT_SECONDS: intSetting(7 * 86_400, { min: 1, max: 30 * 86_400 }),
  /** Most queued jobs the queue stream holds; a submit past it answers `queue.full`. */
  CJS_JOB_QUEUE_MAX_MESSAGES: intSetting(1_000_000, { min: 1 }),
  /** Each replica owns its job partitions by a lease renewed every fifth of this: another takes them over when it has not renewed for this long. */
  CJS_PARTITION_LEASE_MS: intSetting(5000, { min: 250 }),
  /**
   * How long after a node is given an attempt its start (`running`) is written, unless the
   * attempt's result comes first and writes it with the end; 0 writes it before the node is answered.
   */
  CJS_START_WRITE_DELAY_MS: intSetting(250, { min: 0, max: 5000 }),
  /** How often each replica looks for timed-out runs, lost nodes and stale reservations. */
  CJS_RECONCILE_INTERVAL_MS: intSetting(1000, { min: 50 }),
  /** How often each replica checks every unfinished job against the reservations and the queue consumer (the repair sweep). */
  CJS_REPAIR_INTERVAL_MS: intSetting(10_000, { min: 50 }),
  /** A job changed more recently than this is left alone by the repair sweep (it may be between two writes). */
  CJS_REPAIR_GRACE_MS: intSetting(30_000, { min: 100 }),
  /** How often the replica that places jobs deletes the finished jobs past their plan's retention (the retention sweep). */
  CJS_RETENTION_SWEEP_INTERVAL_MS: intSetting(60_000, { min: 50 }),
  /** Most jobs one retention sweep deletes; the rest wait for the next. */
  CJS_RETENTION_SWEEP_BATCH: intSetting(200, { min: 1, max: 10_000 }),
  /** When set, every business keeps finished jobs this many seconds, whatever its plan says (tests, small installs); billing is not asked. */
  CJS_RETENTION_SECONDS_OVERRIDE: z.preprocess(
    (value) => (value === "" ? undefined : value),
    z.coerce.number().int().min(1).optional(),
  ),
  /** How long the marker a deleted job record leaves in the job bucket is kept, so every replica's watch sees the deletion; then the server removes it. */
  CJS_RETENTION_MARKER_TTL_SECONDS: intSetting(3600, { min: 1, max: 30 * 86_400 }),
  /** The shortest time between two ticks of a schedule's cron expression; a closer one is refused at create, so no schedule floods the queue. */
  CJS_SCHEDULE_MIN_INTERVAL_SECONDS: intSetting(10, { min: 1, max: 86_400 }),
  /** How often the replica that places jobs looks for schedules whose tick has come. */
  CJS_SCHEDULE_CHECK_INTERVAL_MS: intSetting(1000, { min: 50, max: 60_000 }),
}).superRefine(checkSharedPools);
export type SchedulerConfig = z.infer<typeof SchedulerConfig>;

export function loadConfig(env: Record<string, string | undefined> = process.env): Readonly<SchedulerConfig> {
  return parseConfig(SchedulerConfig, env);
}
