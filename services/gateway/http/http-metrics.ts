import { Counter, Histogram } from "prom-client";
import { metricsRegistry } from "../../../shared/runtime/index.js";

export const httpRequestSeconds = new Histogram({
  name: "cjs_http_request_duration_seconds",
  help: "HTTP requests served by the gateway, by route pattern, method and status code.",
  labelNames: ["route", "method", "status"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});

export const edgeRefusals = new Counter({
  name: "cjs_http_edge_refusals_total",
  help: "Connections and requests the gateway cut off before any credential was read: slow_body (408, a body that did not arrive in time) or connections_per_ip (429, over the per-address connection budget).",
  labelNames: ["reason"] as const,
  registers: [metricsRegistry],
});
