import { AckPolicy, DeliverPolicy, jetstream, jetstreamManager } from "@nats-io/jetstream";
import { nanos, type NatsConnection } from "@nats-io/transport-node";
import { BUCKETS, CONSUMERS, ensureBuckets, PRIORITY_GROUPS, ensureMeteringStream, JsonBucket, kvStreams } from "../../shared/nats/index.js";
import { AllocationRecord, JobRecord, NodeRecord } from "../../shared/records/index.js";
import type { Logger } from "../../shared/runtime/index.js";
import type { SchedulerConfig } from "./config.js";
import { KeyQuotaRecord } from "./key-quota-rules.js";

/**
 * Provisions what the scheduler uses: the job, node, allocation and key quota buckets, and
 * the durable consumer every replica shares over the job records' stream. A job record's
 * revision is its own queue announcement, so submit, retry and requeue are one write each.
 * The consumer pins one replica at a time (a priority group with the `pinned_client`
 * policy, nats-server 2.11): that replica holds every waiting job, so priority and the
 * businesses' turns apply across all of them, and replicas never race to place one job.
 * When it stops pulling for `CJS_QUEUE_ACK_WAIT_MS`, the server pins another.
 */
export async function openSchedulerStore(nc: NatsConnection, config: Readonly<SchedulerConfig>, logger: Logger) {
  const topology = { replicas: config.CJS_NATS_REPLICAS, logger };
  const kv = await ensureBuckets(nc, [BUCKETS.jobs, BUCKETS.nodes, BUCKETS.allocations, BUCKETS.keyQuotas], topology);
  const jsm = await jetstreamManager(nc);
  // Ends of charged attempts are published there before the change (billing consumes it).
  await ensureMeteringStream(nc, topology);
  await jsm.consumers.add(kvStreams.name(BUCKETS.jobs), {
    durable_name: CONSUMERS.scheduler,
    deliver_policy: DeliverPolicy.All,
    ack_policy: AckPolicy.Explicit,
    ack_wait: nanos(config.CJS_QUEUE_ACK_WAIT_MS),
    max_ack_pending: config.CJS_SCHEDULER_MAX_PENDING,
    max_deliver: -1,
    filter_subject: kvStreams.allKeys(BUCKETS.jobs),
    priority_groups: [PRIORITY_GROUPS.schedulers],
    priority_policy: "pinned_client",
    priority_timeout: nanos(config.CJS_QUEUE_ACK_WAIT_MS),
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
