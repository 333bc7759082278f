import { Gauge } from "prom-client";
import { metricsRegistry } from "../../../shared/runtime/index.js";

export const logStreamsOpen = new Gauge({
  name: "cjs_log_streams_open",
  help: "Job log streams (Server-Sent Events) this gateway replica is serving now.",
  registers: [metricsRegistry],
});
