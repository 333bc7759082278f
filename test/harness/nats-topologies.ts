/**
 * The two NATS topologies every invariant is tested on: one server, and a three-node
 * cluster with R3 streams and buckets. `describe.each(NATS_TOPOLOGIES)` runs a suite on both.
 */
import { startNatsCluster } from "./nats-cluster.js";
import { startNats } from "./nats-server.js";

export interface RunningNats {
  /** What services get as `NATS_URL` (comma-separated on a cluster). */
  readonly url: string;
  /** What `CJS_NATS_REPLICAS` must be. */
  readonly replicas: number;
  stop(): Promise<void>;
}

export interface NatsTopology {
  readonly name: string;
  start(): Promise<RunningNats>;
}

export const NATS_TOPOLOGIES: readonly NatsTopology[] = [
  { name: "one nats-server", start: async () => Object.assign(await startNats(), { replicas: 1 }) },
  { name: "a 3-node cluster (R3)", start: startNatsCluster },
];
