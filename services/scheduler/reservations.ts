import { addToWindow, allocationUse, type AllocatedAttempt, type AllocationRecord, type NodeRecord, removeFromWindow, windowCount } from "../../shared/records/index.js";
import { nodeCaps } from "./node-caps.js";
import type { ClusterView } from "./cluster-view.js";
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
export async function reserve(
  store: SchedulerStore,
  view: ClusterView,
  node: NodeRecord,
  jobId: string,
  attempt: AllocatedAttempt,
  jobType: string,
  nowMs: number,
): Promise<boolean> {
  const countsHour = nodeCaps(node).perHour !== null;
  const change = (current: AllocationRecord | null): AllocationRecord | undefined => {
    const allocation: AllocationRecord = current ?? { node_id: node.node_id, attempts: {} };
    if ((allocation.attempts[jobId]?.attempt ?? -1) >= attempt.attempt) return undefined;
    if (!fits(node, allocation, attempt, jobType, nowMs)) return undefined;
    const next: AllocationRecord = { ...allocation, attempts: { ...allocation.attempts, [jobId]: attempt } };
    if (countsHour) next.assigned_last_hour = addToWindow(allocation.assigned_last_hour ?? [], nowMs);
    return next;
  };
  // First against the view's copy, which saves a read; a stale copy loses the compare-and-set and the record is read.
  const stored = await store.allocations.upsert(node.node_id, change, view.allocations.get(node.node_id));
  if (stored?.written) view.learn(node.node_id, stored.value, stored.revision);
  return stored?.written ?? false;
}

/** A release waiting for its node's next write. */
interface WaitingRelease {
  jobId: string;
  attempt: number;
  unassigned: boolean;
  resolve(): void;
  reject(error: unknown): void;
}

/** Per replica (its view) and node, the releases waiting for the node's next write; present while a write is under way. */
const waitingReleases = new WeakMap<ClusterView, Map<string, WaitingRelease[]>>();

/**
 * Frees what an attempt reserved; a reservation of another attempt of the job is left
 * alone. `unassigned`: the job was never assigned, so the reservation does not count
 * against the node's hourly cap either. The releases of one node that arrive while its
 * last one is being written go together in the next write: results of a node's attempts
 * often come at once, and racing compare-and-sets on one record would each lose to all
 * the others but one.
 */
export function release(
  ctx: { store: SchedulerStore; view: ClusterView },
  nodeId: string,
  jobId: string,
  attempt: number,
  { unassigned = false } = {},
): Promise<void> {
  const byNode = waitingReleases.get(ctx.view) ?? new Map<string, WaitingRelease[]>();
  waitingReleases.set(ctx.view, byNode);
  return new Promise((resolve, reject) => {
    const waiting: WaitingRelease = { jobId, attempt, unassigned, resolve, reject };
    const queue = byNode.get(nodeId);
    if (queue) {
      queue.push(waiting);
      return;
    }
    byNode.set(nodeId, [waiting]);
    void releaseInBatches(ctx, nodeId, byNode);
  });
}

/** Writes the node's waiting releases, one batch after another, until none is left. */
async function releaseInBatches(ctx: { store: SchedulerStore; view: ClusterView }, nodeId: string, byNode: Map<string, WaitingRelease[]>): Promise<void> {
  for (let batch = byNode.get(nodeId) ?? []; batch.length > 0; batch = byNode.get(nodeId) ?? []) {
    byNode.set(nodeId, []);
    try {
      await releaseBatch(ctx, nodeId, batch);
      for (const waiting of batch) waiting.resolve();
    } catch (error) {
      for (const waiting of batch) waiting.reject(error);
    }
  }
  byNode.delete(nodeId);
}

/**
 * One compare-and-set for the batch. It starts from the view's copy of the node's record
 * when that copy holds every attempt of the batch (a stale copy loses the write and the
 * record is read); a copy without one of them may only lag behind, so then the record is
 * read first.
 */
async function releaseBatch({ store, view }: { store: SchedulerStore; view: ClusterView }, nodeId: string, batch: WaitingRelease[]): Promise<void> {
  const known = view.allocations.get(nodeId);
  const holdsAll = known !== undefined && batch.every(({ jobId, attempt }) => known.value.attempts[jobId]?.attempt === attempt);
  const stored = await store.allocations.mutate(nodeId, (allocation) => withoutAttempts(allocation, batch), holdsAll ? known : undefined);
  // The next reserve on this node starts from the view's copy: keep it as fresh as this write.
  if (stored) view.learn(nodeId, stored.value, stored.revision);
}

/** The record without the batch's attempts; undefined when it holds none of them (nothing to write). */
function withoutAttempts(allocation: AllocationRecord, batch: WaitingRelease[]): AllocationRecord | undefined {
  const attempts = { ...allocation.attempts };
  let hour = allocation.assigned_last_hour;
  let changed = false;
  for (const { jobId, attempt, unassigned } of batch) {
    const reserved = attempts[jobId];
    if (reserved?.attempt !== attempt) continue;
    delete attempts[jobId];
    changed = true;
    if (unassigned && hour) hour = removeFromWindow(hour, Date.parse(reserved.assigned_at));
  }
  if (!changed) return undefined;
  const next: AllocationRecord = { ...allocation, attempts };
  if (hour) next.assigned_last_hour = hour;
  return next;
}

/**
 * Writes back the reservation of an attempt that is running on the node without one (a
 * lost write). Unlike `reserve` it does not check room: the attempt is using it already.
 */
export async function reinstate(store: SchedulerStore, nodeId: string, jobId: string, attempt: AllocatedAttempt): Promise<void> {
  await store.allocations.upsert(nodeId, (current) => {
    const allocation: AllocationRecord = current ?? { node_id: nodeId, attempts: {} };
    if ((allocation.attempts[jobId]?.attempt ?? -1) >= attempt.attempt) return undefined;
    return { ...allocation, attempts: { ...allocation.attempts, [jobId]: attempt } };
  });
}
