import { DiscardPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "../../shared/runtime/index.js";
import { BUCKETS, ensureBuckets, ensureStream, JsonBucket, STREAMS, subjects } from "../../shared/nats/index.js";
import { AllocationRecord, JobRecord } from "../../shared/records/index.js";
import type { LogRelayConfig } from "./config.js";

const DAY_MS = 86_400_000;
/** The usage counters of the last two days and hours are all anyone reads; older windows expire. */
const USAGE_MAX_AGE_MS = 2 * DAY_MS;
/** Counters are a few bytes each: this holds millions of windows. */
export const LOG_USAGE_MAX_BYTES = 256 * 1024 * 1024;

/**
 * The log stream (one subject per job attempt, plus one per job for its drop counts, all
 * kept for the retention period) and the records used to fence pushes.
 */
export async function openLogStore(nc: NatsConnection, config: Readonly<LogRelayConfig>, logger: Logger) {
  const replicas = config.CJS_NATS_REPLICAS;
  const kv = await ensureBuckets(nc, [BUCKETS.jobs, BUCKETS.allocations], { replicas, logger });
  // No account check up front: the stream calls below retry while JetStream does not answer.
  const jsm = await jetstreamManager(nc, { checkAPI: false });
  const stream = {
    name: STREAMS.logs,
    subjects: [subjects.jobLogsAll(), subjects.jobLogDropsAll()],
    retention: RetentionPolicy.Limits,
    // Full, the oldest lines make room: new lines keep flowing, and no write is refused for want of space.
    discard: DiscardPolicy.Old,
    max_age: nanos(config.CJS_LOG_RETENTION_DAYS * DAY_MS),
    max_bytes: config.CJS_LOGS_MAX_BYTES,
    max_consumers: config.CJS_LOGS_MAX_CONSUMERS,
    storage: StorageType.File,
    num_replicas: replicas,
    duplicate_window: nanos(120_000),
    allow_direct: true,
  };
  await ensureStream(jsm, stream, { logger });
  await ensureStream(
    jsm,
    {
      name: STREAMS.logUsage,
      subjects: [subjects.logUsageAll()],
      retention: RetentionPolicy.Limits,
      allow_msg_counter: true,
      // Only a window's total matters: each increment replaces the one before.
      max_msgs_per_subject: 1,
      max_age: nanos(USAGE_MAX_AGE_MS),
      max_bytes: LOG_USAGE_MAX_BYTES,
      // Full, the oldest windows go: a window forgotten counts from zero again, no push is refused for it.
      discard: DiscardPolicy.Old,
      storage: StorageType.File,
      num_replicas: replicas,
    },
    { logger },
  );
  return {
    js: jetstream(nc),
    jsm,
    jobs: new JsonBucket(kv[BUCKETS.jobs], JobRecord),
    allocations: new JsonBucket(kv[BUCKETS.allocations], AllocationRecord),
  };
}

export type LogStore = Awaited<ReturnType<typeof openLogStore>>;
