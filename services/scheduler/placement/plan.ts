import type { Labels, PendingReason } from "../../../shared/contract/index.js";
import { atConcurrencyLimit, type ConcurrencyUse } from "../queue/concurrency-keys.js";
import type { PendingJob } from "../queue/pending-job.js";
import { QueuedJobs } from "../queue/queued-jobs.js";

/** A node as placement sees it: what it offers and what is already committed. */
export interface NodeView {
  node_id: string;
  pool_key: string;
  labels: Labels;
  job_types: readonly string[];
  capacity: { cpu: number; memory_mb: number; gpu: number; slots: number };
  used: { cpu: number; memory_mb: number; gpu: number; slots: number };
  draining: boolean;
  online: boolean;
  /** A cap on assignments per sliding hour (a node key's `maxJobsPerHour`) and those made in the current hour. */
  per_hour?: { limit: number; used: number } | undefined;
}

export interface Plan {
  placements: Array<{ job_key: string; node_id: string }>;
  /** Whether some job of the queue stays waiting after these placements. */
  waiting: boolean;
}

function groupBy<T>(items: Iterable<T>, keyOf: (item: T) => string | number): Map<string | number, T[]> {
  const groups = new Map<string | number, T[]>();
  for (const item of items) {
    const key = keyOf(item);
    const group = groups.get(key);
    if (group) group.push(item);
    else groups.set(key, [item]);
  }
  return groups;
}

function carriesLabels(node: NodeView, labels: Labels): boolean {
  return Object.entries(labels).every(([key, value]) => node.labels[key] === value);
}

function underHourlyCap(node: NodeView): boolean {
  return !node.per_hour || node.per_hour.used < node.per_hour.limit;
}

/**
 * The one rule of room: one more slot, and the job's resources on top of what is used,
 * within the capacity. Placement plans with it and the reserve's compare-and-set checks
 * it again (`reservations.ts`).
 */
export function hasRoomFor(
  capacity: NodeView["capacity"],
  used: NodeView["used"],
  resources: PendingJob["resources"],
): boolean {
  return (
    used.slots + 1 <= capacity.slots &&
    used.cpu + resources.cpu <= capacity.cpu + 1e-9 &&
    used.memory_mb + resources.memory_mb <= capacity.memory_mb &&
    used.gpu + resources.gpu <= capacity.gpu
  );
}

function hasRoom(node: NodeView, job: Pick<PendingJob, "resources">): boolean {
  return underHourlyCap(node) && hasRoomFor(node.capacity, node.used, job.resources);
}

/** Whether a node of the job's pool would take it now: live, open, running its type, carrying its labels, with room. */
function takesNow(node: NodeView, job: Pick<PendingJob, "type" | "labels" | "resources">): boolean {
  return (
    node.online &&
    !node.draining &&
    node.job_types.includes(job.type) &&
    carriesLabels(node, job.labels) &&
    hasRoom(node, job)
  );
}

/** The nodes that would take the job now, the one placement would choose first (most free slots) first. */
export function nodesTakingNow(
  job: Pick<PendingJob, "pool_key" | "type" | "labels" | "resources">,
  nodes: readonly NodeView[],
): NodeView[] {
  return bySlotsFree(nodes.filter((node) => node.pool_key === job.pool_key && takesNow(node, job)));
}

function bySlotsFree(nodes: NodeView[]): NodeView[] {
  return nodes.sort((a, b) => b.capacity.slots - b.used.slots - (a.capacity.slots - a.used.slots));
}

function fitsEver(node: NodeView, job: Pick<PendingJob, "resources">): boolean {
  const { capacity } = node;
  return (
    job.resources.cpu <= capacity.cpu + 1e-9 &&
    job.resources.memory_mb <= capacity.memory_mb &&
    job.resources.gpu <= capacity.gpu
  );
}

/**
 * Why a queued job waits, judged from the nodes of its pool as they are now: the most
 * telling reason no node takes it, or `waiting_for_scheduler` when one has room for it
 * (it is about to be placed). Computed when a job is read, never stored on every change.
 */
export function pendingReason(
  job: Pick<PendingJob, "pool_key" | "type" | "labels" | "resources">,
  nodes: readonly NodeView[],
): PendingReason {
  const live = nodes.filter((node) => node.pool_key === job.pool_key && node.online);
  if (live.length === 0) return "no_nodes_in_pool";
  const typed = live.filter((node) => node.job_types.includes(job.type));
  if (typed.length === 0) return "no_node_with_type";
  const labelled = typed.filter((node) => carriesLabels(node, job.labels));
  if (labelled.length === 0) return "no_node_with_labels";
  const bigEnough = labelled.filter((node) => fitsEver(node, job));
  if (bigEnough.length === 0) return "no_node_with_resources";
  const open = bigEnough.filter((node) => !node.draining);
  if (open.length === 0) return "all_nodes_draining";
  if (open.some((node) => hasRoom(node, job))) return "waiting_for_scheduler";
  if (open.every((node) => !underHourlyCap(node))) return "all_nodes_at_hourly_quota";
  return "all_nodes_busy";
}

/** Whether a node of the pool could take any job at all: online, open, a slot free and under its hourly cap. */
function hasAnyRoom(pool: readonly NodeView[]): boolean {
  return pool.some(
    (node) => node.online && !node.draining && underHourlyCap(node) && node.used.slots < node.capacity.slots,
  );
}

const NO_KEYS_IN_USE: ConcurrencyUse = { inUse: () => 0 };
const EVERY_NODE_OWN = (): boolean => true;

/** The node a job goes to among those that take it now: this replica's own share first (`OwnShare`), then the most free slots. */
function chosenNode(candidates: NodeView[], isOwn: (nodeId: string) => boolean): NodeView | undefined {
  const ranked = bySlotsFree(candidates);
  return ranked.find((node) => isOwn(node.node_id)) ?? ranked[0];
}

/** The node one job would go to now, as a round chooses it (`chosenNode`), among the nodes of its pool; undefined when none takes it. */
export function nodeForJob(
  job: Pick<PendingJob, "pool_key" | "type" | "labels" | "resources">,
  nodes: readonly NodeView[],
  isOwn: (nodeId: string) => boolean = EVERY_NODE_OWN,
): NodeView | undefined {
  return chosenNode(nodesTakingNow(job, nodes), isOwn);
}

/**
 * Places queued jobs on nodes: a pure function of the snapshot. Each pool's jobs are
 * considered in the queue's fair order (`QueuedJobs.inOrder`); a job goes to a live,
 * non-draining node of its pool that runs its type, carries its labels and has room (and,
 * when capped, assignments left this hour); among those, the one with the most free
 * slots of this replica's own share of the nodes (`isOwn`), else of the others, so load
 * spreads and replicas placing side by side seldom race for one node's record. A pool is left as soon as none of its nodes has a free slot,
 * and a fit that found no node is not tried again in the round, so a round costs what it
 * places, not the length of the backlog. A node's key caps arrive already applied to
 * `job_types` and `capacity.slots`. A job whose concurrency key is at its limit (`use`,
 * plus the jobs of the key placed earlier in the round) waits, and the key's younger jobs
 * with it, unread: a round costs the keys it meets, not their backlogs. A job another
 * placement of this replica is writing now (`QueuedJobs.isPlacing`) is left out, and
 * counted against its key as if placed in the round. It returns its
 * decisions and changes nothing it reads: the caller marks a business's turn served
 * (`QueuedJobs.markServed`) once a placement has landed.
 */
export function planPlacements(
  nodes: readonly NodeView[],
  queue: QueuedJobs | readonly PendingJob[],
  use: ConcurrencyUse = NO_KEYS_IN_USE,
  isOwn: (nodeId: string) => boolean = EVERY_NODE_OWN,
): Plan {
  const queued = queue instanceof QueuedJobs ? queue : QueuedJobs.fromList(queue);
  const working = nodes.map((node) => ({
    ...node,
    used: { ...node.used },
    per_hour: node.per_hour && { ...node.per_hour },
  }));
  const byPool = groupBy(working, (node) => node.pool_key);

  const placements: Plan["placements"] = [];
  /** Jobs of each concurrency key placed in this round. */
  const placedOfKey = new Map<string, number>();
  /** Keys whose oldest job considered had to wait: their younger jobs wait behind it, unread. */
  const closedKeys = new Set<string>();
  let waiting = false;
  for (const poolKey of queued.pools()) {
    const pool = byPool.get(poolKey) ?? [];
    const unplaceable = new Set<string>();
    for (const job of queued.inOrder(poolKey, closedKeys)) {
      if (queued.isPlacing(job.job_key)) {
        // Being placed by another placement of this replica: counted against its key, not planned twice.
        if (job.concurrency) placedOfKey.set(job.concurrency.scope, (placedOfKey.get(job.concurrency.scope) ?? 0) + 1);
        continue;
      }
      if (!hasAnyRoom(pool)) {
        waiting = true;
        break;
      }
      if (unplaceable.has(job.fit)) {
        waiting = true;
        continue;
      }
      const gate = job.concurrency;
      if (
        gate &&
        (closedKeys.has(gate.scope) ||
          atConcurrencyLimit(gate, use.inUse(gate.scope) + (placedOfKey.get(gate.scope) ?? 0)))
      ) {
        closedKeys.add(gate.scope);
        waiting = true;
        continue;
      }
      const best = chosenNode(
        pool.filter((node) => takesNow(node, job)),
        isOwn,
      );
      if (!best) {
        unplaceable.add(job.fit);
        waiting = true;
        continue;
      }
      best.used.slots += 1;
      best.used.cpu += job.resources.cpu;
      best.used.memory_mb += job.resources.memory_mb;
      best.used.gpu += job.resources.gpu;
      if (best.per_hour) best.per_hour.used += 1;
      if (gate) placedOfKey.set(gate.scope, (placedOfKey.get(gate.scope) ?? 0) + 1);
      placements.push({ job_key: job.job_key, node_id: best.node_id });
    }
  }
  return { placements, waiting };
}
