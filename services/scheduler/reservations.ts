import { AppError } from "../../shared/errors/index.js";
import { addToWindow, allocationUse, type AllocatedAttempt, type AllocationRecord, type NodeRecord, removeFromWindow, windowCount } from "../../shared/records/index.js";
import { nodeCaps } from "./node-caps.js";
import type { SchedulerStore } from "./scheduler-store.js";

function fits(node: NodeRecord, allocation: AllocationRecord, attempt: AllocatedAttempt, jobType: string, nowMs: number): boolean {
  const used = allocationUse(allocation);
  const { capacity } = node;
  const caps = nodeCaps(node);
  return (
    caps.jobTypes.includes(jobType) &&
    (caps.perHour === null || windowCount(allocation.assigned_last_hour ?? [], nowMs) < caps.perHour) &&
    used.slots + 1 <= caps.slots &&
    used.cpu + attempt.resources.cpu <= capacity.cpu + 1e-9 &&
    used.memory_mb + attempt.resources.memory_mb <= capacity.memory_mb &&
    used.gpu + attempt.resources.gpu <= capacity.gpu
  );
}

/**
 * Reserves a node's capacity for a job's attempt by compare-and-set on the node's
 * allocation record: of two replicas racing for the last slot, one wins. The same write
 * checks the caps of the node's key (its job types, concurrent attempts, and assignments
 * in the last hour, which a capped node's record counts), so no replica can pass them either.
 * False when the node has no room (any more), or when this attempt (or a later one) of
 * the job already holds a reservation here: two replicas holding copies of one queued job
 * compute the same attempt number, and the one that reserved it first owns the entry; the
 * other must neither overwrite it nor, after losing the assignment, release it.
 */
export async function reserve(store: SchedulerStore, node: NodeRecord, jobId: string, attempt: AllocatedAttempt, jobType: string, nowMs: number): Promise<boolean> {
  const countsHour = nodeCaps(node).perHour !== null;
  for (;;) {
    const current = await store.allocations.get(node.node_id);
    const allocation: AllocationRecord = current?.value ?? { node_id: node.node_id, attempts: {} };
    if ((allocation.attempts[jobId]?.attempt ?? -1) >= attempt.attempt) return false;
    if (!fits(node, allocation, attempt, jobType, nowMs)) return false;
    const next: AllocationRecord = { ...allocation, attempts: { ...allocation.attempts, [jobId]: attempt } };
    if (countsHour) next.assigned_last_hour = addToWindow(allocation.assigned_last_hour ?? [], nowMs);
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

/**
 * Frees what an attempt reserved; a reservation of another attempt of the job is left
 * alone. `unassigned`: the job was never assigned, so the reservation does not count
 * against the node's hourly cap either.
 */
export async function release(store: SchedulerStore, nodeId: string, jobId: string, attempt: number, { unassigned = false } = {}): Promise<void> {
  await store.allocations.mutate(nodeId, (allocation) => {
    const reserved = allocation.attempts[jobId];
    if (reserved?.attempt !== attempt) return undefined;
    const { [jobId]: _freed, ...rest } = allocation.attempts;
    const next: AllocationRecord = { ...allocation, attempts: rest };
    if (unassigned && allocation.assigned_last_hour) next.assigned_last_hour = removeFromWindow(allocation.assigned_last_hour, Date.parse(reserved.assigned_at));
    return next;
  });
}
