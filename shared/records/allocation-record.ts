import { z } from "zod";
import { HourWindow } from "./hour-window.js";

/** One attempt holding capacity on a node. */
export const AllocatedAttempt = z.looseObject({
  job_key: z.string(),
  attempt: z.number().int(),
  resources: z.looseObject({ cpu: z.number(), memory_mb: z.number(), gpu: z.number() }),
  assigned_at: z.string(),
});
export type AllocatedAttempt = z.infer<typeof AllocatedAttempt>;

/**
 * What a node is committed to, in the `cjs_allocations` bucket under the node id. Only the
 * scheduler writes it, by compare-and-set, so two replicas can never overbook one node.
 */
export const AllocationRecord = z.looseObject({
  node_id: z.string(),
  /** By job id. */
  attempts: z.record(z.string(), AllocatedAttempt),
  /** Assignments of the last hour, kept only for a node with a `maxJobsPerHour` cap. */
  assigned_last_hour: HourWindow.optional(),
});
export type AllocationRecord = z.infer<typeof AllocationRecord>;

/**
 * What the node's attempts hold, in one pass: each attempt's resources and a slot,
 * leaving out those `released` says are being freed.
 */
export function allocationUse(
  allocation: AllocationRecord | null,
  released?: (jobId: string, attempt: number) => boolean,
): {
  cpu: number;
  memory_mb: number;
  gpu: number;
  slots: number;
} {
  const use = { cpu: 0, memory_mb: 0, gpu: 0, slots: 0 };
  for (const [jobId, { attempt, resources }] of Object.entries(allocation?.attempts ?? {})) {
    if (released?.(jobId, attempt)) continue;
    use.cpu += resources.cpu;
    use.memory_mb += resources.memory_mb;
    use.gpu += resources.gpu;
    use.slots += 1;
  }
  return use;
}
