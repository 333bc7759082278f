import type { JobEvent } from "../../../shared/contract/index.js";

/** The fields of a job record its queue timeout is read from. */
export interface QueueDeadlineFields {
  queue_timeout_seconds?: number | null | undefined;
  run_at?: string | null | undefined;
  created_at: string;
  timeline: ReadonlyArray<Pick<JobEvent, "state">>;
}

/**
 * When a job with `queue_timeout_seconds` must have started: that long after its `run_at`,
 * or after its submit. Null when it has no queue timeout, or once an attempt has started
 * (a `running` event): a job requeued after that, by node loss or a retry, waits as long
 * as it takes. The one rule the deadline index and the transition both read.
 */
export function queueDeadlineMs(job: QueueDeadlineFields): number | null {
  if (typeof job.queue_timeout_seconds !== "number") return null;
  if (job.timeline.some((event) => event.state === "running")) return null;
  return Date.parse(job.run_at ?? job.created_at) + job.queue_timeout_seconds * 1000;
}
