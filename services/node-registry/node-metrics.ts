import { Gauge } from "prom-client";
import { metricsRegistry } from "../../shared/runtime/index.js";

/** Defined once per process: the embedded mode and tests may host several registry replicas. */
export const nodesGauge = new Gauge({
  name: "cjs_nodes",
  help: "Registered nodes by state (online, draining, offline), as of the last liveness sweep.",
  labelNames: ["state"] as const,
  registers: [metricsRegistry],
});
