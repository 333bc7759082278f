import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import { BUCKETS, CONSUMERS, ensureBuckets, ensureMeteringStream, JsonBucket, kvStreams } from "../../shared/nats/index.js";
import { AllocationRecord, JobRecord, NodeRecord } from "../../shared/records/index.js";
import type { SchedulerConfig } from "./config.js";
import { KeyQuotaRecord } from "./key-quota-rules.js";

/**
 * Provisions what the scheduler uses: the job, node, allocation and key quota buckets, and
 * the durable consumer every replica shares over the job records' stream. A job record's
 * revision is its own queue announcement, so submit, retry and requeue are one write each.
 */
export async function openSchedulerStore(nc: NatsConnection, config: Readonly<SchedulerConfig>) {
  const replicas = config.CJS_NATS_REPLICAS;
  const kv = await ensureBuckets(nc, [BUCKETS.jobs, BUCKETS.nodes, BUCKETS.allocations, BUCKETS.keyQuotas], { replicas });
  const jsm = await jetstreamManager(nc);
  // Ends of charged attempts are published there before the change (billing consumes it).
  await ensureMeteringStream(nc, { replicas });
  await jsm.consumers.add(kvStreams.name(BUCKETS.jobs), {
    durable_name: CONSUMERS.scheduler,
    deliver_policy: DeliverPolicy.All,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(config.CJS_QUEUE_ACK_WAIT_MS),
    max_ack_pending: config.CJS_SCHEDULER_MAX_PENDING,
    max_deliver: -1,
    filter_subject: kvStreams.allKeys(BUCKETS.jobs),
  });
  return {
    js: jetstream(nc),
    jsm,
    jobs: new JsonBucket(kv[BUCKETS.jobs], JobRecord),
    nodes: new JsonBucket(kv[BUCKETS.nodes], NodeRecord),
    allocations: new JsonBucket(kv[BUCKETS.allocations], AllocationRecord),
    keyQuotas: new JsonBucket(kv[BUCKETS.keyQuotas], KeyQuotaRecord),
  };
}

export type SchedulerStore = Awaited<ReturnType<typeof openSchedulerStore>>;
