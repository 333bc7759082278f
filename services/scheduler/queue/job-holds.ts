import type { PendingReason } from "../../../shared/contract/index.js";

/** The fields of a queued job record that may hold it back from placement. */
export interface HoldFields {
  waiting_on?: readonly string[] | undefined;
  next_attempt_at?: string | null | undefined;
  pending_reason?: string | null | undefined;
}

/**
 * Why a queued job may not be placed yet, whatever the nodes: jobs of its `depends_on`
 * have not all succeeded, or its `run_at` or a retry's backoff is still ahead. Null when
 * it may be placed now. The one rule the queue and the job's `pending_reason` both read.
 */
export function heldReason(job: HoldFields, now: number): PendingReason | null {
  if (job.waiting_on && job.waiting_on.length > 0) return "waiting_for_dependencies";
  if (job.next_attempt_at && Date.parse(job.next_attempt_at) > now)
    return job.pending_reason === "retry_backoff" ? "retry_backoff" : "scheduled";
  return null;
}
