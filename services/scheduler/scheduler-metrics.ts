import { Counter, Gauge, Histogram } from "prom-client";
import { metricsRegistry } from "../../shared/runtime/index.js";
import { mergeSnapshots, type SchedulerSnapshot } from "./scheduler-snapshot.js";

/** Defined once per process: several scheduler replicas may share one (tests, the embedded mode). */
export const jobsSubmitted = new Counter({
  name: "cjs_jobs_submitted_total",
  help: "Jobs accepted by submit, by pool kind (operator or self_hosted).",
  labelNames: ["pool_kind"] as const,
  registers: [metricsRegistry],
});

export const jobsFinished = new Counter({
  name: "cjs_jobs_finished_total",
  help: "Jobs that reached a terminal state, by state.",
  labelNames: ["state"] as const,
  registers: [metricsRegistry],
});

/** The scheduler replicas of this process, each reporting a snapshot of its pictures until it stops. */
const snapshotSources = new Set<() => SchedulerSnapshot>();
let scrapeSnapshot: SchedulerSnapshot | undefined;

/** One snapshot for all the gauges of one scrape (their collects run in the same turn of the event loop). */
function currentSnapshot(): SchedulerSnapshot {
  if (!scrapeSnapshot) {
    scrapeSnapshot = mergeSnapshots([...snapshotSources].map((source) => source()));
    setImmediate(() => {
      scrapeSnapshot = undefined;
    });
  }
  return scrapeSnapshot;
}

type Values = Iterable<{ labels: Record<string, string>; value: number }>;

/** A gauge set at each scrape from the current snapshot. */
function snapshotGauge(
  name: string,
  help: string,
  labelNames: readonly string[],
  values: (snapshot: SchedulerSnapshot) => Values,
): void {
  new Gauge({
    name,
    help,
    labelNames,
    registers: [metricsRegistry],
    collect() {
      this.reset();
      for (const { labels, value } of values(currentSnapshot())) this.set(labels, value);
    },
  });
}

const EVERY_REPLICA =
  "Every scheduler replica reports the same value, from the records: take the max over replicas, never the sum.";
const OWN_PARTITIONS = "Each scheduler replica reports the jobs of the partitions it owns: take the sum over replicas.";

snapshotGauge(
  "cjs_jobs",
  `Jobs queued, assigned and running, by state and pool. ${OWN_PARTITIONS}`,
  ["state", "pool"],
  (snapshot) => snapshot.jobs.values(),
);
snapshotGauge(
  "cjs_job_oldest_age_seconds",
  `Seconds the oldest queued job of a pool has waited (state=queued), and the oldest assigned job has been assigned without starting (state=assigned), in the partitions this replica owns: take the max over replicas.`,
  ["state", "pool"],
  (snapshot) => snapshot.oldestAgeSeconds.values(),
);
snapshotGauge(
  "cjs_jobs_past_deadline",
  `Running jobs past their deadline that no reconciler has timed out yet, by pool. ${OWN_PARTITIONS}`,
  ["pool"],
  (snapshot) => snapshot.pastDeadline.values(),
);
snapshotGauge(
  "cjs_pool_nodes",
  `Nodes by pool and state (online, draining, offline), as the scheduler sees them. ${EVERY_REPLICA}`,
  ["pool", "state"],
  (snapshot) => snapshot.poolNodes.values(),
);
snapshotGauge(
  "cjs_pool_slots",
  `Job slots by pool: used (reserved by an attempt) and free (on online nodes that are not draining). ${EVERY_REPLICA}`,
  ["pool", "use"],
  (snapshot) => snapshot.poolSlots.values(),
);
snapshotGauge(
  "cjs_job_queue_depth",
  `Queued jobs by pool: cjs_jobs{state="queued"} without the state label. ${OWN_PARTITIONS}`,
  ["pool"],
  (snapshot) =>
    [...snapshot.jobs.values()]
      .filter(({ labels }) => labels.state === "queued")
      .map(({ labels, value }) => ({ labels: { pool: labels.pool as string }, value })),
);

export const schedulerSnapshots = {
  /** Reports `source` until the returned function is called. */
  reportFrom(source: () => SchedulerSnapshot): () => void {
    snapshotSources.add(source);
    return () => snapshotSources.delete(source);
  },
};

/** What a replica reports of its partitions, at scrape time. */
interface PartitionReport {
  owned: number;
  unowned: number;
  queued: number;
}
const partitionSources = new Set<() => PartitionReport>();

function partitionGauge(name: string, help: string, value: (reports: PartitionReport[]) => number): void {
  new Gauge({
    name,
    help,
    registers: [metricsRegistry],
    collect() {
      this.set(value([...partitionSources].map((source) => source())));
    },
  });
}

partitionGauge(
  "cjs_scheduler_partitions_owned",
  "Job partitions this scheduler replica owns (of 31): its share of the placement work.",
  (reports) => reports.reduce((sum, report) => sum + report.owned, 0),
);
partitionGauge(
  "cjs_scheduler_partitions_unowned",
  "Job partitions no live scheduler replica owns, as this replica sees the claims: their jobs are not placed, timed out or settled until one is taken. Take the max over replicas.",
  (reports) => Math.max(0, ...reports.map((report) => report.unowned)),
);
partitionGauge(
  "cjs_scheduler_backlog_jobs",
  "Jobs queued in the partitions this scheduler replica owns, those waiting for their time included. Take the sum over replicas.",
  (reports) => reports.reduce((sum, report) => sum + report.queued, 0),
);

export const partitionGauges = {
  /** Reports `source` until the returned function is called. */
  reportFrom(source: () => PartitionReport): () => void {
    partitionSources.add(source);
    return () => partitionSources.delete(source);
  },
};

export const placements = new Counter({
  name: "cjs_scheduler_placements_total",
  help: "Jobs this scheduler replica placed (assigned to a node): its placement rate.",
  registers: [metricsRegistry],
});

export const startLatencySeconds = new Histogram({
  name: "cjs_job_start_latency_seconds",
  help: "Time from a job being queued (queued_at) to its attempt starting to run, observed by the replica that recorded the start.",
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
  registers: [metricsRegistry],
});

export const runSeconds = new Histogram({
  name: "cjs_job_run_seconds",
  help: "Time from an attempt starting to its job reaching a terminal state, by that state; observed by the replica that made the change.",
  labelNames: ["state"] as const,
  buckets: [0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 1800, 3600, 7200, 21600, 86400],
  registers: [metricsRegistry],
});

export const assignLatencySeconds = new Histogram({
  name: "cjs_job_assign_latency_seconds",
  help: "Time from a job being queued to its assignment to a node.",
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
  registers: [metricsRegistry],
});

export const jobRepairs = new Counter({
  name: "cjs_job_repairs_total",
  help: "Jobs found stuck and repaired, by kind (assigned_unreserved, running_unreserved, watch_skipped, dependency_unsettled), silent job watches made again (watch_remade) and silent watches of the cluster view made again (view_watch_remade). Any rise means a write the broker acknowledged was lost or skipped, or a watch's consumer was lost.",
  labelNames: ["kind"] as const,
  registers: [metricsRegistry],
});

export const retentionDeleted = new Counter({
  name: "cjs_retention_deleted_total",
  help: "What deleting finished jobs removed, by kind (job, artifact, log_message) and reason (retention: the sweep; request: jobs/delete).",
  labelNames: ["kind", "reason"] as const,
  registers: [metricsRegistry],
});

export const scheduleTicks = new Counter({
  name: "cjs_schedule_ticks_total",
  help: "Ticks of schedules handled by the replica that fires them, by outcome (made: a job; skipped: the previous job had not ended; refused: the job was refused).",
  labelNames: ["outcome"] as const,
  registers: [metricsRegistry],
});

export const retentionDue = new Gauge({
  name: "cjs_retention_due_jobs",
  help: "Finished jobs past their retention still stored after the last retention sweep of this replica (0 on replicas that do not sweep).",
  registers: [metricsRegistry],
});
