import { Counter, Gauge } from "prom-client";
import { metricsRegistry } from "../../../shared/runtime/index.js";

export const logStreamsOpen = new Gauge({
  name: "cjs_log_streams_open",
  help: "Job log streams (Server-Sent Events) this gateway replica is serving now.",
  registers: [metricsRegistry],
});

export const logStreamPaced = new Counter({
  name: "cjs_log_stream_paced_total",
  help: "Log stream messages this gateway replica held back because their business had read back its log-stream bytes of the second (replays; CJS_LOG_STREAM_BYTES_PER_SECOND).",
  registers: [metricsRegistry],
});
