import { collectDefaultMetrics, Histogram, register } from "prom-client";

/**
 * The process's metrics registry. One process may host several services (the embedded
 * mode), so every metric is defined once here or in the service that owns it, never twice.
 */
export const metricsRegistry = register;

let defaultsCollected = false;

/** Process metrics (CPU, memory, event loop lag), registered once per process. */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: metricsRegistry, prefix: "cjs_" });
}

export const natsRequestSeconds = new Histogram({
  name: "cjs_nats_request_duration_seconds",
  help: "Latency of NATS request/reply calls made by this process, by subject and outcome.",
  labelNames: ["subject", "outcome"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers: [metricsRegistry],
});
