import { Counter } from "prom-client";
import { metricsRegistry } from "../../../shared/runtime/index.js";

export const signingKeyReloadFailures = new Counter({
  name: "cjs_signing_keys_reload_failures_total",
  help: "Re-reads of a signing-key file that found it unreadable or invalid; the previous keys stayed in use.",
  labelNames: ["kind"] as const,
  registers: [metricsRegistry],
});
