import { DiscardPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import type { Logger } from "../../shared/runtime/index.js";
import { BUCKETS, ensureBuckets, ensureStream, JsonBucket, STREAMS, subjects } from "../../shared/nats/index.js";
import { AllocationRecord, JobRecord } from "../../shared/records/index.js";
import type { LogRelayConfig } from "./config.js";

const DAY_MS = 86_400_000;

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
    discard: DiscardPolicy.Old,
    max_age: nanos(config.CJS_LOG_RETENTION_DAYS * DAY_MS),
    storage: StorageType.File,
    num_replicas: replicas,
    duplicate_window: nanos(120_000),
    allow_direct: true,
  };
  await ensureStream(jsm, stream, { logger });
  return {
    js: jetstream(nc),
    jsm,
    jobs: new JsonBucket(kv[BUCKETS.jobs], JobRecord),
    allocations: new JsonBucket(kv[BUCKETS.allocations], AllocationRecord),
  };
}

export type LogStore = Awaited<ReturnType<typeof openLogStore>>;
