import type { NatsConnection } from "@nats-io/transport-node";
import { BUCKETS, ensureBuckets, JsonBucket, type TopologyOptions } from "../../shared/nats/index.js";
import { AllocationRecord, JobRecord, NodeRecord } from "../../shared/records/index.js";

/** The buckets the node registry touches: it writes nodes and only reads jobs and allocations (the scheduler's). */
export async function openRegistryStore(nc: NatsConnection, topology: TopologyOptions) {
  const kv = await ensureBuckets(nc, [BUCKETS.nodes, BUCKETS.jobs, BUCKETS.allocations], topology);
  const nodes = new JsonBucket(kv[BUCKETS.nodes], NodeRecord);
  return {
    nodes,
    jobs: new JsonBucket(kv[BUCKETS.jobs], JobRecord),
    allocations: new JsonBucket(kv[BUCKETS.allocations], AllocationRecord),
    /** Ids of every node record, deleted ones included. */
    nodeIds: () => nodes.keys(),
  };
}

export type RegistryStore = Awaited<ReturnType<typeof openRegistryStore>>;
