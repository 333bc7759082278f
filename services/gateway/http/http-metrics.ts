import { Histogram } from "prom-client";
import { metricsRegistry } from "../../../shared/runtime/index.js";

export const httpRequestSeconds = new Histogram({
  name: "cjs_http_request_duration_seconds",
  help: "HTTP requests served by the gateway, by route pattern, method and status code.",
  labelNames: ["route", "method", "status"] as const,
  buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  registers: [metricsRegistry],
});
