import { createHash } from "node:crypto";
import { JobSummary, type JobState, type WebhookEvent, type WebhookEventType } from "../../shared/contract/index.js";
import { type JobRecord, legacyJobKey, publicJob } from "../../shared/records/index.js";

/** The event each state a job enters makes; a state not named makes none. */
const EVENT_OF_STATE: Partial<Record<JobState, WebhookEventType>> = {
  running: "job.started",
  succeeded: "job.succeeded",
  failed: "job.failed",
  timed_out: "job.timed_out",
  cancelled: "job.cancelled",
};

/**
 * The event a revision of a job record stands for: the transition that brought the job
 * into its current state (its timeline's last entry), when that state makes one. Its id
 * is derived from the job and the transition (its place in the timeline and its time), so
 * every revision of the job in that state, and a revision read again after a crash, make
 * the same event with the same id.
 */
export function eventOfRecord(record: JobRecord): WebhookEvent | null {
  const index = record.timeline.length - 1;
  const transition = record.timeline[index];
  if (!transition || transition.state !== record.state) return null;
  const type = EVENT_OF_STATE[record.state];
  if (type === undefined) return null;
  // The key's form from before jobs were partitioned: an event's id never changes with the record's key.
  const digest = createHash("sha256")
    .update(`${legacyJobKey(record.app_id, record.business_id, record.job_id)}.${index}.${transition.at}`)
    .digest("hex");
  return {
    id: `evt_${digest.slice(0, 32)}`,
    type,
    created_at: transition.at,
    data: { job: JobSummary.parse(publicJob(record)) },
  };
}
