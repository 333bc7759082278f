import type { Job } from "../../../shared/contract/index.js";
import { scopePartition } from "../../../shared/records/index.js";

/** A job's concurrency key as placement reads it: where its key is counted, and the job's own `max_running`. */
export interface ConcurrencyGate {
  /** `<app>.<business>|<key>`: a key counts within its business only. */
  scope: string;
  max_running: number;
  /**
   * The job partition of every job with a concurrency key of the business, so the one
   * replica that owns it counts each key whole and lets the business's keys take turns.
   */
  partition: number;
}

/** How many jobs of a key are assigned or running now (ActiveJobs counts them). */
export interface ConcurrencyUse {
  inUse(scope: string): number;
}

/** The gate of a job with a `concurrency` field; null for the others (most jobs), which never pay for the rule. */
export function concurrencyGate(job: {
  app_id: string;
  business_id: string;
  concurrency?: Job["concurrency"] | undefined;
}): ConcurrencyGate | null {
  if (!job.concurrency) return null;
  return {
    scope: `${job.app_id}.${job.business_id}|${job.concurrency.key}`,
    max_running: job.concurrency.max_running,
    partition: scopePartition(`${job.app_id}.${job.business_id}`),
  };
}

/**
 * The one rule of concurrency keys, read by placement and by a job's `pending_reason`: a
 * job waits while its key has at least the job's own `max_running` jobs assigned or
 * running (jobs of one key that ask for different limits each apply their own).
 */
export function atConcurrencyLimit(gate: ConcurrencyGate | null | undefined, inUse: number): boolean {
  return gate !== null && gate !== undefined && inUse >= gate.max_running;
}
