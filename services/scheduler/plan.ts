import type { Labels, PendingReason } from "../../shared/contract/index.js";

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

/** A queued job waiting for a node. `queued_at_ms` orders jobs FIFO (when it was last queued). */
export interface PendingJob {
  job_key: string;
  business_id: string;
  pool_key: string;
  type: string;
  labels: Labels;
  resources: { cpu: number; memory_mb: number; gpu: number };
  priority: number;
  queued_at_ms: number;
}

export interface Plan {
  placements: Array<{ job_key: string; node_id: string }>;
  /** Why each job that was not placed waits. */
  waiting: Map<string, PendingReason>;
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

function hasRoom(node: NodeView, job: PendingJob): boolean {
  const { capacity, used } = node;
  return (
    underHourlyCap(node) &&
    used.slots + 1 <= capacity.slots &&
    used.cpu + job.resources.cpu <= capacity.cpu + 1e-9 &&
    used.memory_mb + job.resources.memory_mb <= capacity.memory_mb &&
    used.gpu + job.resources.gpu <= capacity.gpu
  );
}

function fitsEver(node: NodeView, job: PendingJob): boolean {
  const { capacity } = node;
  return job.resources.cpu <= capacity.cpu + 1e-9 && job.resources.memory_mb <= capacity.memory_mb && job.resources.gpu <= capacity.gpu;
}

/** The most telling reason a job cannot be placed on any node of its pool right now. */
function reasonFor(job: PendingJob, pool: readonly NodeView[]): PendingReason {
  const live = pool.filter((node) => node.online);
  if (live.length === 0) return "no_nodes_in_pool";
  const typed = live.filter((node) => node.job_types.includes(job.type));
  if (typed.length === 0) return "no_node_with_type";
  const labelled = typed.filter((node) => carriesLabels(node, job.labels));
  if (labelled.length === 0) return "no_node_with_labels";
  const bigEnough = labelled.filter((node) => fitsEver(node, job));
  if (bigEnough.length === 0) return "no_node_with_resources";
  const open = bigEnough.filter((node) => !node.draining);
  if (open.length === 0) return "all_nodes_draining";
  if (open.every((node) => !underHourlyCap(node))) return "all_nodes_at_hourly_quota";
  return "all_nodes_busy";
}

/**
 * The order jobs of one pool are considered in: higher priority first; within a priority,
 * businesses take turns (each business's jobs FIFO), so one business's backlog cannot
 * starve another's single job.
 */
export function fairOrder(jobs: readonly PendingJob[]): PendingJob[] {
  const byPriority = groupBy(jobs, (job) => job.priority);
  const ordered: PendingJob[] = [];
  for (const priority of [...byPriority.keys()].sort((a, b) => Number(b) - Number(a))) {
    const byBusiness = groupBy([...(byPriority.get(priority) ?? [])].sort((a, b) => a.queued_at_ms - b.queued_at_ms), (job) => job.business_id);
    // Businesses take turns in the order of their oldest waiting job.
    const queues = [...byBusiness.values()];
    for (let round = 0; queues.some((queue) => queue.length > round); round += 1) {
      for (const queue of queues) {
        const job = queue[round];
        if (job) ordered.push(job);
      }
    }
  }
  return ordered;
}

/**
 * Places pending jobs on nodes: a pure function of the snapshot. A job goes to a live,
 * non-draining node of its pool that runs its type, carries its labels and has room (and,
 * when capped, assignments left this hour); among those, the one with the most free
 * slots, so load spreads. A node's key caps arrive already applied to `job_types` and
 * `capacity.slots`.
 */
export function planPlacements(nodes: readonly NodeView[], pending: readonly PendingJob[]): Plan {
  const working = nodes.map((node) => ({ ...node, used: { ...node.used }, per_hour: node.per_hour && { ...node.per_hour } }));
  const byPool = groupBy(working, (node) => node.pool_key);
  const jobsByPool = groupBy(pending, (job) => job.pool_key);

  const placements: Plan["placements"] = [];
  const waiting = new Map<string, PendingReason>();
  for (const [poolKey, jobs] of jobsByPool) {
    const pool = byPool.get(poolKey) ?? [];
    for (const job of fairOrder(jobs)) {
      const candidates = pool.filter(
        (node) => node.online && !node.draining && node.job_types.includes(job.type) && carriesLabels(node, job.labels) && hasRoom(node, job),
      );
      const best = candidates.sort((a, b) => b.capacity.slots - b.used.slots - (a.capacity.slots - a.used.slots))[0];
      if (!best) {
        waiting.set(job.job_key, reasonFor(job, pool));
        continue;
      }
      best.used.slots += 1;
      best.used.cpu += job.resources.cpu;
      best.used.memory_mb += job.resources.memory_mb;
      best.used.gpu += job.resources.gpu;
      if (best.per_hour) best.per_hour.used += 1;
      placements.push({ job_key: job.job_key, node_id: best.node_id });
    }
  }
  return { placements, waiting };
}
