import { metricsPool } from "../../shared/records/index.js";
import type { ActiveJob } from "./queue/active-jobs.js";
import type { NodeView } from "./placement/plan.js";

/** One gauge's values, by label set (the labels as JSON in a fixed order). */
export type Series = Map<string, { labels: Record<string, string>; value: number }>;

/**
 * What a scheduler replica reports of jobs and nodes, worked out from the pictures it
 * keeps from its watches (the records): the jobs of its own partitions (replicas add up),
 * and every node (every replica reports the same).
 */
export interface SchedulerSnapshot {
  /** `cjs_jobs{state,pool}`: queued, assigned and running jobs. */
  jobs: Series;
  /** `cjs_job_oldest_age_seconds{state,pool}`: how long the oldest queued job has waited, the oldest assigned job has been assigned. */
  oldestAgeSeconds: Series;
  /** `cjs_jobs_past_deadline{pool}`: running jobs past their deadline, not yet timed out. */
  pastDeadline: Series;
  /** `cjs_pool_nodes{pool,state}`: nodes by state (online, draining, offline). */
  poolNodes: Series;
  /** `cjs_pool_slots{pool,use}`: slots used, and free on nodes that take jobs (online, not draining). */
  poolSlots: Series;
}

export const SNAPSHOT_SERIES = [
  "jobs",
  "oldestAgeSeconds",
  "pastDeadline",
  "poolNodes",
  "poolSlots",
] as const satisfies ReadonlyArray<keyof SchedulerSnapshot>;

const ACTIVE_STATES = ["queued", "assigned", "running"] as const;

/** The jobs of one state and pool key. */
interface Tally {
  state: string;
  poolKey: string;
  count: number;
  oldestMs: number;
  pastDeadline: number;
}
const NODE_STATES = ["online", "draining", "offline"] as const;

function set(series: Series, labels: Record<string, string>, value: (before: number | undefined) => number): void {
  const key = JSON.stringify(labels);
  series.set(key, { labels, value: value(series.get(key)?.value) });
}

const plus = (amount: number) => (before: number | undefined) => (before ?? 0) + amount;
const atLeast = (value: number) => (before: number | undefined) => Math.max(before ?? Number.NEGATIVE_INFINITY, value);

function nodeState(node: NodeView): (typeof NODE_STATES)[number] {
  if (!node.online) return "offline";
  return node.draining ? "draining" : "online";
}

/**
 * The snapshot of a replica's pictures at `nowMs`. Pools are labelled by `metricsPool`
 * (self-hosted pools as one). Every pool that has nodes reports each job and node state,
 * 0 included, so an alert sees a pool's backlog drop to nothing and its nodes go.
 */
export function takeSnapshot(input: {
  queued: Iterable<{ pool_key: string; queued_at_ms: number }>;
  active: Iterable<Pick<ActiveJob, "state" | "pool_key" | "updated_ms" | "deadline_ms">>;
  nodes: readonly NodeView[];
  nowMs: number;
}): SchedulerSnapshot {
  const { nowMs } = input;
  const snapshot: SchedulerSnapshot = {
    jobs: new Map(),
    oldestAgeSeconds: new Map(),
    pastDeadline: new Map(),
    poolNodes: new Map(),
    poolSlots: new Map(),
  };
  const age = (sinceMs: number) => Math.max(0, nowMs - sinceMs) / 1000;
  for (const node of input.nodes) {
    const pool = metricsPool(node.pool_key);
    for (const state of ACTIVE_STATES) set(snapshot.jobs, { state, pool }, plus(0));
    for (const state of NODE_STATES) set(snapshot.poolNodes, { pool, state }, plus(0));
    set(snapshot.pastDeadline, { pool }, plus(0));
    const state = nodeState(node);
    set(snapshot.poolNodes, { pool, state }, plus(1));
    set(snapshot.poolSlots, { pool, use: "used" }, plus(node.used.slots));
    set(
      snapshot.poolSlots,
      { pool, use: "free" },
      plus(state === "online" ? Math.max(0, node.capacity.slots - node.used.slots) : 0),
    );
  }
  // One cheap pass over the jobs by their pool key (a scrape may see 100,000 queued), then one label set per pool.
  const byState = new Map<string, Map<string, Tally>>(ACTIVE_STATES.map((state) => [state, new Map()]));
  const tally = (state: string, poolKey: string): Tally => {
    const tallies = byState.get(state) as Map<string, Tally>;
    let found = tallies.get(poolKey);
    if (!found)
      tallies.set(poolKey, (found = { state, poolKey, count: 0, oldestMs: Number.POSITIVE_INFINITY, pastDeadline: 0 }));
    return found;
  };
  for (const job of input.queued) {
    const queued = tally("queued", job.pool_key);
    queued.count += 1;
    queued.oldestMs = Math.min(queued.oldestMs, job.queued_at_ms);
  }
  for (const job of input.active) {
    const active = tally(job.state, job.pool_key);
    active.count += 1;
    if (job.state === "assigned") active.oldestMs = Math.min(active.oldestMs, job.updated_ms);
    if (job.state === "running" && job.deadline_ms !== null && job.deadline_ms <= nowMs) active.pastDeadline += 1;
  }
  for (const { state, poolKey, count, oldestMs, pastDeadline } of [...byState.values()].flatMap((tallies) => [
    ...tallies.values(),
  ])) {
    const pool = metricsPool(poolKey);
    set(snapshot.jobs, { state, pool }, plus(count));
    if (state !== "running") set(snapshot.oldestAgeSeconds, { state, pool }, atLeast(age(oldestMs)));
    if (state === "running") set(snapshot.pastDeadline, { pool }, plus(pastDeadline));
  }
  return snapshot;
}

/** The series each replica reports for its own partitions: the replicas' values add up. */
const SUMMED: ReadonlySet<(typeof SNAPSHOT_SERIES)[number]> = new Set(["jobs", "pastDeadline"]);

/**
 * The replicas of one process (tests, the embedded mode) report one value per series, as
 * scrapes of each would be read: job counts of their own partitions added up, the oldest
 * age and the nodes (which every replica sees whole) the highest.
 */
export function mergeSnapshots(snapshots: readonly SchedulerSnapshot[]): SchedulerSnapshot {
  const merged: SchedulerSnapshot = {
    jobs: new Map(),
    oldestAgeSeconds: new Map(),
    pastDeadline: new Map(),
    poolNodes: new Map(),
    poolSlots: new Map(),
  };
  for (const snapshot of snapshots) {
    for (const name of SNAPSHOT_SERIES)
      for (const { labels, value } of snapshot[name].values())
        set(merged[name], labels, SUMMED.has(name) ? plus(value) : atLeast(value));
  }
  return merged;
}
