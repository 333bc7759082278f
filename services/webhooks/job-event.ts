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
 * The events a revision of a job record stands for: the transition that brought the job
 * into its current state (its timeline's last entry), when that state makes one; and the
 * start of the attempt that transition ended (or sent back to wait for its retry), since a
 * start may be written with its attempt's end in one revision (decision 0095). A start
 * written on its own made its event from its own revision already: the same id, delivered once.
 */
export function eventsOfRecord(record: JobRecord): WebhookEvent[] {
  const last = record.timeline.length - 1;
  const current = record.timeline[last];
  if (!current || current.state !== record.state) return [];
  const start = startEndedAt(record, last);
  return [start === null ? null : eventAt(record, start), eventAt(record, last)].filter(
    (event): event is WebhookEvent => event !== null,
  );
}

/** The index of the start of the attempt the transition at `last` ended, when it is one of the two before it. */
function startEndedAt(record: JobRecord, last: number): number | null {
  const { attempt, state } = record.timeline[last]!;
  if (state === "running") return null;
  for (let index = last - 1; index >= Math.max(0, last - 2); index -= 1) {
    const entry = record.timeline[index]!;
    if (entry.attempt !== attempt) return null;
    if (entry.state === "running") return index;
  }
  return null;
}

/**
 * The event of the transition at `index` of the record's timeline, when its state makes one.
 * Its id is derived from the job and the transition (its place in the timeline and its time),
 * so every revision that shows it, and a revision read again after a crash, make the same
 * event with the same id. Its job is the job as this revision shows it.
 */
function eventAt(record: JobRecord, index: number): WebhookEvent | null {
  const transition = record.timeline[index];
  if (!transition) return null;
  const type = EVENT_OF_STATE[transition.state];
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
