import { AckPolicy, DiscardPolicy, jetstream, jetstreamManager, RetentionPolicy, StorageType } from "@nats-io/jetstream";
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import { BUCKETS, CONSUMERS, ensureBuckets, ensureMeteringStream, ensureStream, JsonBucket, STREAMS, subjects } from "../../shared/nats/index.js";
import { AllocationRecord, JobRecord, NodeRecord } from "../../shared/records/index.js";
import type { SchedulerConfig } from "./config.js";
import { KeyQuotaRecord } from "./key-quota-rules.js";

/**
 * Provisions what the scheduler uses: the job, node, allocation and key quota buckets, the job queue
 * (a work-queue stream that refuses, never drops, when full) and the durable consumer
 * every replica shares.
 */
export async function openSchedulerStore(nc: NatsConnection, config: Readonly<SchedulerConfig>) {
  const replicas = config.CJS_NATS_REPLICAS;
  const kv = await ensureBuckets(nc, [BUCKETS.jobs, BUCKETS.nodes, BUCKETS.allocations, BUCKETS.keyQuotas], { replicas });
  const jsm = await jetstreamManager(nc);
  const stream = {
    name: STREAMS.jobQueue,
    subjects: [subjects.jobQueueAll()],
    retention: RetentionPolicy.Workqueue,
    discard: DiscardPolicy.New,
    max_msgs: config.CJS_JOB_QUEUE_MAX_MESSAGES,
    storage: StorageType.File,
    num_replicas: replicas,
    duplicate_window: nanos(120_000),
  };
  await ensureStream(jsm, stream);
  // Ends of charged attempts are published there before the change (billing consumes it).
  await ensureMeteringStream(nc, { replicas });
  await jsm.consumers.add(stream.name, {
    durable_name: CONSUMERS.scheduler,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(config.CJS_QUEUE_ACK_WAIT_MS),
    max_ack_pending: config.CJS_SCHEDULER_MAX_PENDING,
    max_deliver: -1,
    filter_subject: subjects.jobQueueAll(),
  });
  return {
    js: jetstream(nc),
    jobs: new JsonBucket(kv[BUCKETS.jobs], JobRecord),
    nodes: new JsonBucket(kv[BUCKETS.nodes], NodeRecord),
    allocations: new JsonBucket(kv[BUCKETS.allocations], AllocationRecord),
    keyQuotas: new JsonBucket(kv[BUCKETS.keyQuotas], KeyQuotaRecord),
  };
}

export type SchedulerStore = Awaited<ReturnType<typeof openSchedulerStore>>;
