import { Counter, Gauge } from "prom-client";
import { metricsRegistry } from "../../../shared/runtime/index.js";

export const nodeNatsMessages = new Counter({
  name: "cjs_node_nats_messages_total",
  help: "Messages of NATS-direct agents answered by the gateway, by operation and outcome (ok, or the error code).",
  labelNames: ["operation", "outcome"] as const,
  registers: [metricsRegistry],
});

export const natsUploadsOpen = new Gauge({
  name: "cjs_nats_uploads_open",
  help: "Artifact uploads over NATS open on this gateway (opened, not yet committed or aborted).",
  registers: [metricsRegistry],
});
