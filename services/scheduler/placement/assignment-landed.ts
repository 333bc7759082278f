import type { Versioned } from "../../../shared/nats/index.js";
import type { JobRecord } from "../../../shared/records/index.js";

/**
 * After an assignment's write got no answer (a timeout, the stream's leader lost meanwhile),
 * whether it landed: the job as stored when it shows this attempt on this node, null when it
 * does not, undefined when the record cannot be read either. The placement keeps the
 * reservation unless the answer is null: releasing the reservation of an assignment that
 * landed leaves the job on a node that never hears of it until the repair sweep requeues it
 * (its attempt spent), while a reservation kept for nothing is freed by the reconciler.
 */
export async function assignmentLanded(
  jobs: { get(key: string): Promise<Versioned<JobRecord> | null> },
  jobKey: string,
  nodeId: string,
  attempt: number,
): Promise<JobRecord | null | undefined> {
  let stored: Versioned<JobRecord> | null;
  try {
    stored = await jobs.get(jobKey);
  } catch {
    return undefined;
  }
  const job = stored?.value;
  return job && job.state !== "queued" && job.attempt === attempt && job.node_id === nodeId ? job : null;
}
