import { Counter, Gauge, Histogram } from "prom-client";
import { metricsRegistry } from "../../shared/runtime/index.js";

/** Defined once per process: several webhooks replicas may share one (tests, the embedded mode). */
export const deliveryAttempts = new Counter({
  name: "cjs_webhook_deliveries_total",
  help: "POSTs of webhook deliveries, by outcome: succeeded (2xx), retried (no 2xx; tried again later), failed (no 2xx and the retry window is over).",
  labelNames: ["outcome"] as const,
  registers: [metricsRegistry],
});

export const deliverySeconds = new Histogram({
  name: "cjs_webhook_delivery_duration_seconds",
  help: "Time one webhook POST took, until its answer, error or timeout.",
  buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
  registers: [metricsRegistry],
});

export const deliveriesQueued = new Counter({
  name: "cjs_webhook_deliveries_queued_total",
  help: "Deliveries put on the work queue (an event for a webhook, or a test).",
  registers: [metricsRegistry],
});

export const deliveriesInFlight = new Gauge({
  name: "cjs_webhook_deliveries_in_flight",
  help: 'Webhook POSTs under way in this process; the backlog waiting is cjs_jetstream_consumer_pending{consumer="webhook-deliveries"}.',
  registers: [metricsRegistry],
});
