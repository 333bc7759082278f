import { Counter, Histogram } from "prom-client";
import { metricsRegistry } from "../../../shared/runtime/index.js";

/** Defined once per process: several billing replicas may share one (tests, the embedded mode). */
export const attemptsMetered = new Counter({
  name: "cjs_billing_attempts_metered_total",
  help: "Ended attempts on operator pools that billing settled, by result: charged, duplicate (already charged) or free.",
  labelNames: ["result"] as const,
  registers: [metricsRegistry],
});

export const creditChecks = new Counter({
  name: "cjs_billing_credit_checks_total",
  help: "Submit credit checks for operator pools, by result: allowed, limit_reached (402), key_budget (402, the API key's monthly budget) or plan_limit (403).",
  labelNames: ["result"] as const,
  registers: [metricsRegistry],
});

export const ledgerRepairs = new Counter({
  name: "cjs_billing_ledger_repairs_total",
  help: "Ended attempts on operator pools that the ledger audit charged because metering had not: each one a metering message or a ledger write that was lost.",
  registers: [metricsRegistry],
});

export const chargeDelaySeconds = new Histogram({
  name: "cjs_billing_charge_delay_seconds",
  help: "From an attempt's end being published to CJS_METERING to its charge in the ledger: how far behind the balance the submit's credit check reads is.",
  buckets: [0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  registers: [metricsRegistry],
});
