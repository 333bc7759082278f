import { Counter, Gauge } from "prom-client";
import { metricsRegistry } from "../runtime/index.js";

/** Defined once per process: several connections share them (the embedded mode, tests), told apart by label. */
export const natsConnectionUp = new Gauge({
  name: "cjs_nats_connected",
  help: "1 while this NATS connection is up, 0 while it is down or reconnecting, by connection name (the service's; cjs-gateway for the gateway; cjs-<service> under make dev).",
  labelNames: ["connection"] as const,
  registers: [metricsRegistry],
});

export const natsReconnects = new Counter({
  name: "cjs_nats_reconnects_total",
  help: "Reconnections of this NATS connection after a loss, by connection name.",
  labelNames: ["connection"] as const,
  registers: [metricsRegistry],
});

export const jetStreamReady = new Gauge({
  name: "cjs_jetstream_ready",
  help: "1 while the last JetStream probe of this process passed (every stream it uses answered with a leader), by service.",
  labelNames: ["service"] as const,
  registers: [metricsRegistry],
});

export const streamsWithoutLeader = new Gauge({
  name: "cjs_jetstream_streams_without_leader",
  help: "Streams this process uses that named no leader or did not answer at the last JetStream probe, by service.",
  labelNames: ["service"] as const,
  registers: [metricsRegistry],
});

export const jetStreamStorageBytes = new Gauge({
  name: "cjs_jetstream_storage_bytes",
  help: "Bytes of file storage the service's JetStream account uses, at the last probe, by service.",
  labelNames: ["service"] as const,
  registers: [metricsRegistry],
});

export const jetStreamStorageLimitBytes = new Gauge({
  name: "cjs_jetstream_storage_limit_bytes",
  help: "The JetStream store's size the probe judges by: the account's limit, else CJS_JETSTREAM_MAX_STORE_BYTES; 0 when neither is known. By service.",
  labelNames: ["service"] as const,
  registers: [metricsRegistry],
});

export const streamFillRatio = new Gauge({
  name: "cjs_jetstream_stream_fill_ratio",
  help: "Bytes a stream holds over its max_bytes, for the streams with a byte limit the service uses, by stream and discard policy (new: a full stream refuses writes; old: it drops its oldest).",
  labelNames: ["service", "stream", "discard"] as const,
  registers: [metricsRegistry],
});

export const jetStreamApiErrors = new Counter({
  name: "cjs_jetstream_api_errors_total",
  help: "JetStream API calls that failed (not a lost compare-and-set), by operation: KV get, create, put, update, keys, delete, and the probes' stream_info and consumer_info.",
  labelNames: ["operation"] as const,
  registers: [metricsRegistry],
});

export const casRefusals = new Counter({
  name: "cjs_kv_cas_refused_total",
  help: "Compare-and-set writes another writer won (the record changed since it was read), by bucket: contention between replicas, or a stale copy; each costs a read and a retry.",
  labelNames: ["bucket"] as const,
  registers: [metricsRegistry],
});

const consumerLabels = ["stream", "consumer"] as const;

export const consumerPending = new Gauge({
  name: "cjs_jetstream_consumer_pending",
  help: "Messages of a durable consumer's stream not yet delivered to it, as of the last read of its info.",
  labelNames: consumerLabels,
  registers: [metricsRegistry],
});

export const consumerAckPending = new Gauge({
  name: "cjs_jetstream_consumer_ack_pending",
  help: "Messages delivered to a durable consumer and not yet acknowledged.",
  labelNames: consumerLabels,
  registers: [metricsRegistry],
});

export const consumerRedelivered = new Gauge({
  name: "cjs_jetstream_consumer_redelivered",
  help: "Messages a durable consumer has had delivered more than once and not yet acknowledged.",
  labelNames: consumerLabels,
  registers: [metricsRegistry],
});
