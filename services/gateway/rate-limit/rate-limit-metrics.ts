import { Counter } from "prom-client";
import { metricsRegistry } from "../../../shared/runtime/index.js";

/** Defined once per process: several gateway replicas may share one (tests). */
export const rateLimited = new Counter({
  name: "cjs_rate_limited_total",
  help: "Requests refused with 429 rate.limited, by the window that was exhausted (second, minute, hour).",
  labelNames: ["window"] as const,
  registers: [metricsRegistry],
});

export const rateLimitFailOpen = new Counter({
  name: "cjs_rate_limit_fail_open_total",
  help: "Requests let through uncounted because the rate-limit counters in NATS could not be read or written, or stayed too busy to write.",
  registers: [metricsRegistry],
});

export const rateLimitPaced = new Counter({
  name: "cjs_rate_limit_paced_total",
  help: "Admitted requests this gateway replica held back to spread a user's burst over its second (more than a fifth of CJS_RATE_LIMIT_PER_SECOND at once).",
  registers: [metricsRegistry],
});

export const rateLimitLeased = new Counter({
  name: "cjs_rate_limit_leased_total",
  help: "Requests admitted from a lease this gateway replica counted ahead for their user, without waiting for the shared counter.",
  registers: [metricsRegistry],
});

export const nodeCallsRefused = new Counter({
  name: "cjs_node_calls_refused_total",
  help: "Calls of a node with its key refused with 429 rate.limited on this gateway replica: past its budget of all calls (CJS_NODE_RATE_LIMIT_PER_SECOND) or of heartbeats, drains and key rotations (CJS_NODE_CONTROL_RATE_LIMIT_PER_SECOND).",
  labelNames: ["class"] as const,
  registers: [metricsRegistry],
});
