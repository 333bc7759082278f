import type { NodeRecord } from "../../../shared/records/index.js";

/** What a node may be given once the caps of the key that registered it apply. */
export interface NodeCaps {
  /** Its job types narrowed to the key's `allowedJobTypes`. */
  jobTypes: string[];
  /** Its slots, at most the key's `maxConcurrentJobs`. */
  slots: number;
  /** The key's `maxJobsPerHour`, or null for none. */
  perHour: number | null;
}

export function nodeCaps(node: Pick<NodeRecord, "job_types" | "capacity" | "quotas">): NodeCaps {
  const quotas = node.quotas ?? null;
  const allowed = quotas?.allowedJobTypes ?? null;
  return {
    jobTypes: allowed === null ? node.job_types : node.job_types.filter((type) => allowed.includes(type)),
    slots: Math.min(node.capacity.slots, quotas?.maxConcurrentJobs ?? Number.POSITIVE_INFINITY),
    perHour: quotas?.maxJobsPerHour ?? null,
  };
}
