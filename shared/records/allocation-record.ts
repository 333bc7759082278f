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

export function allocationUse(allocation: AllocationRecord | null): {
  cpu: number;
  memory_mb: number;
  gpu: number;
  slots: number;
} {
  const attempts = Object.values(allocation?.attempts ?? {});
  return {
    cpu: attempts.reduce((sum, attempt) => sum + attempt.resources.cpu, 0),
    memory_mb: attempts.reduce((sum, attempt) => sum + attempt.resources.memory_mb, 0),
    gpu: attempts.reduce((sum, attempt) => sum + attempt.resources.gpu, 0),
    slots: attempts.length,
  };
}
