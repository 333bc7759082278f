import { Counter, Gauge, Histogram } from "prom-client";
import { metricsRegistry } from "../../shared/runtime/index.js";

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

/** What each scheduler replica in this process reports as the queue: the lease holder its whole queue, the others nothing. */
const queueSources = new Set<() => Map<string, number>>();

const queueDepthGauge = new Gauge({
  name: "cjs_job_queue_depth",
  help: "Queued jobs by pool, as the scheduler replica that places jobs (the lease holder) sees them; the others report none, so a sum over replicas is the queue.",
  labelNames: ["pool"] as const,
  registers: [metricsRegistry],
  collect() {
    this.reset();
    for (const source of queueSources) for (const [pool, count] of source()) this.inc({ pool }, count);
  },
});

export const queueDepth = {
  gauge: queueDepthGauge,
  /** Reports the queue from `source` until the returned function is called. */
  reportFrom(source: () => Map<string, number>): () => void {
    queueSources.add(source);
    return () => queueSources.delete(source);
  },
};

export const assignLatencySeconds = new Histogram({
  name: "cjs_job_assign_latency_seconds",
  help: "Time from a job being queued to its assignment to a node.",
  buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600],
  registers: [metricsRegistry],
});

export const jobRepairs = new Counter({
  name: "cjs_job_repairs_total",
  help: "Jobs the repair sweep found stuck and repaired, by kind (assigned_unreserved, running_unreserved). Any rise means a write the broker acknowledged was lost or skipped.",
  labelNames: ["kind"] as const,
  registers: [metricsRegistry],
});
