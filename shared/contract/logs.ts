import { z } from "zod";
import { Timestamp } from "./common.js";
import { JobId } from "./ids.js";
import { JobError, JobState } from "./jobs.js";

/** The path of a job's log stream (`GET`, Server-Sent Events). */
export function logStreamPath(jobId: string): string {
  return `/api/compute/jobs/${jobId}/logs`;
}

/** The same path as a route pattern, for the router. */
export const LOG_STREAM_ROUTE = "/api/compute/jobs/:jobId/logs";

export const LogStreamUrlResponse = z.object({
  /**
   * The job's log stream as a path with its query (`/api/compute/jobs/<id>/logs?caller=…&expires=…&signature=…`),
   * to be resolved against the gateway's base URL. It needs no headers, so a browser's `EventSource` can open it.
   */
  url: z.string(),
  /** When the URL stops opening new streams; a stream already open goes on. */
  expires_at: Timestamp,
});
export type LogStreamUrlResponse = z.infer<typeof LogStreamUrlResponse>;

/** The data of a `log` event: one stored line. The event's `id` is its position in the log stream. */
export const LogEventData = z.object({
  /** The attempt that wrote the line. */
  attempt: z.number().int().min(1),
  /** The line's number within its attempt, from 1, as the node sent it. */
  seq: z.number().int().min(1),
  stream: z.enum(["stdout", "stderr"]),
  line: z.string(),
  /** When the node says the line was written. */
  ts: Timestamp,
});
export type LogEventData = z.infer<typeof LogEventData>;

/** The data of the `end` event, sent once the job is terminal and every stored line was sent. */
export const LogEndEventData = z.object({
  state: JobState,
  /** The job's latest attempt. */
  attempt: z.number().int().min(0),
  exit_code: z.number().int().nullable(),
  error: JobError.nullable(),
  /** Lines of this job dropped because it reached the log cap, over all attempts. */
  dropped_lines: z.number().int().min(0),
});
export type LogEndEventData = z.infer<typeof LogEndEventData>;

/** Internal: the gateway asks the log relay for a job's log totals (`subjects.logsSummary()`). */
export const JobLogSummaryCommand = z.object({ job_id: JobId });
export type JobLogSummaryCommand = z.infer<typeof JobLogSummaryCommand>;

export const JobLogSummary = z.object({
  /** Lines dropped past the log cap, over all attempts. */
  dropped_lines: z.number().int().min(0),
});
export type JobLogSummary = z.infer<typeof JobLogSummary>;

/** Internal: the log relay asks billing how many log bytes a day a business may store (`subjects.billingLogQuota()`). */
export const LogQuotaCommand = z.object({ app_id: z.string(), business_id: z.string() });
export type LogQuotaCommand = z.infer<typeof LogQuotaCommand>;

export const LogQuota = z.object({
  /** The plan's `limits.max_log_bytes_per_day`; null for the operator's own business, which has no quota. */
  max_log_bytes_per_day: z.number().int().positive().nullable(),
});
export type LogQuota = z.infer<typeof LogQuota>;
