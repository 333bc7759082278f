import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import type { NatsConnection } from "@nats-io/transport-node";
import {
  BUCKETS,
  CONSUMERS,
  ensureBuckets,
  ensureMeteringStream,
  JsonBucket,
  kvStreams,
} from "../../shared/nats/index.js";
import { AllocationRecord, JobRecord, NodeRecord } from "../../shared/records/index.js";
import type { Logger } from "../../shared/runtime/index.js";
import type { SchedulerConfig } from "./config.js";
import { KeyQuotaRecord } from "./jobs/key-quota-rules.js";

/**
 * Provisions what the scheduler uses: the job, node, allocation and key quota buckets, and
 * the placement lease. A job record's revision is its own queue announcement: every
 * replica keeps the queue from its watch of the job bucket, so submit, retry and requeue
 * are one write each.
 */
export async function openSchedulerStore(nc: NatsConnection, config: Readonly<SchedulerConfig>, logger: Logger) {
  const topology = { replicas: config.CJS_NATS_REPLICAS, logger };
  const kv = await ensureBuckets(
    nc,
    [BUCKETS.jobs, BUCKETS.nodes, BUCKETS.allocations, BUCKETS.keyQuotas, BUCKETS.leases],
    topology,
  );
  const jsm = await jetstreamManager(nc);
  // Ends of charged attempts are published there before the change (billing consumes it).
  await ensureMeteringStream(nc, topology);
  // The shared consumer of earlier versions would keep its state for ever: gone once no replica uses it.
  await jsm.consumers.delete(kvStreams.name(BUCKETS.jobs), CONSUMERS.retiredScheduler).catch(() => undefined);
  return {
    js: jetstream(nc),
    jsm,
    jobs: new JsonBucket(kv[BUCKETS.jobs], JobRecord),
    nodes: new JsonBucket(kv[BUCKETS.nodes], NodeRecord),
    allocations: new JsonBucket(kv[BUCKETS.allocations], AllocationRecord),
    keyQuotas: new JsonBucket(kv[BUCKETS.keyQuotas], KeyQuotaRecord),
    leases: kv[BUCKETS.leases],
  };
}

export type SchedulerStore = Awaited<ReturnType<typeof openSchedulerStore>>;
