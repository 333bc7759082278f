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

export const queueDepth = new Gauge({
  name: "cjs_job_queue_depth",
  help: "Queued jobs this replica holds for placement, by pool; sum over replicas for the whole queue.",
  labelNames: ["pool"] as const,
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
  help: "Jobs the repair sweep found stuck and repaired, by kind (queued_unannounced, assigned_unreserved, running_unreserved). Any rise means a write the broker acknowledged was lost or skipped.",
  labelNames: ["kind"] as const,
  registers: [metricsRegistry],
});
