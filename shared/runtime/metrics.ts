import { collectDefaultMetrics, Histogram, register } from "prom-client";

/**
 * The process's metrics registry. One process may host several services (the embedded
 * mode), so every metric is defined once here or in the service that owns it, never twice.
 */
export const metricsRegistry = register;

let defaultsCollected = false;

/**
 * prom-client's gauges whose `_total` suffix promtool refuses (a non-counter must not end in
 * `_total`): each is the sum of the gauge of the same name without it, by `type`, which stays
 * (`sum(nodejs_active_handles)`).
 */
const SUMMED_GAUGES = ["nodejs_active_handles_total", "nodejs_active_requests_total", "nodejs_active_resources_total"];

/** Process metrics (CPU, memory, event loop lag), registered once per process under their standard names (`process_…`, `nodejs_…`), which stock Node.js dashboards query. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: metricsRegistry });
  for (const name of SUMMED_GAUGES) metricsRegistry.removeSingleMetric(name);
}

export const rpcServedSeconds = new Histogram({
  name: "cjs_rpc_served_duration_seconds",
  help: "Time this process took to answer each NATS request it served (the replica a queue group picked), by subject and outcome (ok, refused: the caller's fault, failed: the service's).",
  labelNames: ["subject", "outcome"] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 30],
  registers: [metricsRegistry],
});

export const natsRequestSeconds = new Histogram({
  name: "cjs_nats_request_duration_seconds",
  help: "Latency of NATS request/reply calls made by this process, by subject and outcome.",
  labelNames: ["subject", "outcome"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});
