import type { DeliveredAttempt } from "../../../shared/contract/index.js";
import type { JobRecord } from "../../../shared/records/index.js";

/** A running attempt as a node is given it (by a poll, its `assigned` event, or with the answer to its last result). */
export function deliveredAttempt(job: JobRecord): DeliveredAttempt {
  const { job_id, app_id, business_id, name, type, command, env, resources, timeout_seconds, labels, metadata } = job;
  return {
    job_id,
    attempt: job.attempt,
    name,
    type,
    command,
    env,
    resources,
    timeout_seconds,
    labels,
    metadata,
    app_id,
    business_id,
  };
}
