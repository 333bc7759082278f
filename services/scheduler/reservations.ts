import { AppError } from "../../shared/errors/index.js";
import { allocationUse, type AllocatedAttempt, type AllocationRecord, type NodeRecord } from "../../shared/records/index.js";
import type { SchedulerStore } from "./scheduler-store.js";

function fits(node: NodeRecord, allocation: AllocationRecord, attempt: AllocatedAttempt): boolean {
  const used = allocationUse(allocation);
  const { capacity } = node;
  return (
    used.slots + 1 <= capacity.slots &&
    used.cpu + attempt.resources.cpu <= capacity.cpu + 1e-9 &&
    used.memory_mb + attempt.resources.memory_mb <= capacity.memory_mb &&
    used.gpu + attempt.resources.gpu <= capacity.gpu
  );
}

/**
 * Reserves a node's capacity for a job's attempt by compare-and-set on the node's
 * allocation record: of two replicas racing for the last slot, one wins. False when the
 * node has no room (any more), or when this attempt (or a later one) of the job already
 * holds a reservation here: two replicas holding copies of one queued job compute the
 * same attempt number, and the one that reserved it first owns the entry; the other must
 * neither overwrite it nor, after losing the assignment, release it.
 */
export async function reserve(store: SchedulerStore, node: NodeRecord, jobId: string, attempt: AllocatedAttempt): Promise<boolean> {
  for (;;) {
    const current = await store.allocations.get(node.node_id);
    const allocation = current?.value ?? { node_id: node.node_id, attempts: {} };
    if ((allocation.attempts[jobId]?.attempt ?? -1) >= attempt.attempt) return false;
    if (!fits(node, allocation, attempt)) return false;
    const next = { ...allocation, attempts: { ...allocation.attempts, [jobId]: attempt } };
    if (!current) {
      try {
        await store.allocations.create(node.node_id, next);
        return true;
      } catch (error) {
        if (error instanceof AppError && error.code === "resource.already_exists") continue;
        throw error;
      }
    }
    if ((await store.allocations.update(node.node_id, next, current.revision)) !== null) return true;
  }
}

/** Frees what an attempt reserved; a reservation of another attempt of the job is left alone. */
export async function release(store: SchedulerStore, nodeId: string, jobId: string, attempt: number): Promise<void> {
  await store.allocations.mutate(nodeId, (allocation) => {
    if (allocation.attempts[jobId]?.attempt !== attempt) return undefined;
    const { [jobId]: _freed, ...rest } = allocation.attempts;
    return { ...allocation, attempts: rest };
  });
}
