import { z } from "zod";
import { Timestamp } from "./common.js";
import { JobId, ScheduleId } from "./ids.js";
import { JobError, SubmitJobRequest } from "./jobs.js";

/**
 * What a tick does while the job of the previous tick has not ended:
 * - `skip`: makes no job this tick (counted in `skipped_count`);
 * - `queue`: makes the job, which waits for the previous one to end (the concurrency key
 *   `schedule:<schedule_id>` with `max_running` 1 replaces the template's own);
 * - `cancel_previous`: cancels the previous job, then makes the new one.
 */
export const OverlapPolicy = z.enum(["skip", "queue", "cancel_previous"]);
export type OverlapPolicy = z.infer<typeof OverlapPolicy>;

/** `active` schedules make jobs on their ticks; `paused` ones make none until resumed. */
export const ScheduleState = z.enum(["active", "paused"]);
export type ScheduleState = z.infer<typeof ScheduleState>;

/** The job each tick submits: a submit's body without the fields that belong to one job (`dry_run`, `run_at`, `depends_on`). */
export const ScheduleJobTemplate = SubmitJobRequest.omit({ dry_run: true, run_at: true, depends_on: true });
export type ScheduleJobTemplate = z.infer<typeof ScheduleJobTemplate>;

export const CreateScheduleRequest = z.strictObject({
  name: z.string().trim().min(1).max(200).optional(),
  /**
   * A cron expression of 5 fields (minute hour day-of-month month day-of-week) or 6
   * (seconds first). Ticks closer together than the service's minimum interval are refused.
   */
  cron: z.string().trim().min(1).max(200),
  /** The IANA time zone the expression is read in (`Europe/Berlin`). */
  timezone: z.string().min(1).max(64).default("UTC"),
  job: ScheduleJobTemplate,
  overlap: OverlapPolicy.default("skip"),
  /** Create it paused: no job is made until it is resumed. */
  paused: z.boolean().default(false),
});
export type CreateScheduleRequest = z.infer<typeof CreateScheduleRequest>;

/** A schedule as callers see it. */
export const Schedule = z.object({
  schedule_id: ScheduleId,
  app_id: z.string(),
  business_id: z.string(),
  /** The user who created it: the jobs it makes are theirs. */
  user_id: z.string(),
  name: z.string().nullable(),
  cron: z.string(),
  timezone: z.string(),
  /** The job each tick submits (a field this version does not know is left out). */
  job: ScheduleJobTemplate.strip(),
  overlap: OverlapPolicy,
  state: ScheduleState,
  /** The next tick; null while paused. */
  next_run_at: Timestamp.nullable(),
  /** The tick of the last job made. */
  last_run_at: Timestamp.nullable(),
  last_job_id: JobId.nullable(),
  /** Why the last tick made no job (no credit, a full queue…); null once a tick makes one. */
  last_error: JobError.nullable(),
  /** The last tick skipped by the `skip` overlap policy, and how many were in all. */
  last_skipped_at: Timestamp.nullable(),
  skipped_count: z.number().int(),
  created_at: Timestamp,
  updated_at: Timestamp,
});
export type Schedule = z.infer<typeof Schedule>;

export const ScheduleRef = z.strictObject({ schedule_id: ScheduleId });
export type ScheduleRef = z.infer<typeof ScheduleRef>;

export const SchedulePayload = z.object({ schedule: Schedule });
export type SchedulePayload = z.infer<typeof SchedulePayload>;

export const ListSchedulesRequest = z.strictObject({
  limit: z.number().int().min(1).max(200).default(50),
  /** `next_cursor` of the previous page: a schedule id. */
  cursor: ScheduleId.optional(),
});
export type ListSchedulesRequest = z.infer<typeof ListSchedulesRequest>;

export const ListSchedulesResponse = z.object({
  /** Newest first. */
  items: z.array(Schedule),
  /** Pass as `cursor` for the next page; null on the last page. */
  next_cursor: z.string().nullable(),
});
export type ListSchedulesResponse = z.infer<typeof ListSchedulesResponse>;

/** The jobs a deleted schedule made are kept. */
export const DeleteScheduleResponse = z.object({ schedule_id: ScheduleId, deleted: z.literal(true) });
export type DeleteScheduleResponse = z.infer<typeof DeleteScheduleResponse>;
