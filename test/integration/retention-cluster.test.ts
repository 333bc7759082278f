/**
 * Retention on a 3-node NATS cluster with R3 streams and buckets, two gateways and two
 * schedulers, upgrading a job bucket made before deleted jobs' markers could expire: the
 * scheduler switches message TTLs on, and with a one-second retention the finished jobs,
 * their lines, their artifacts and the markers of their records all leave the store.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { BUCKETS, kvStreams, OBJECT_STORES, STREAMS } from "../../shared/nats/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { finishJobsWithData } from "../harness/job-data.js";
import { startNatsCluster, type NatsClusterHarness } from "../harness/nats-cluster.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";

const JOBS = 20;
const POOL = "cluster-retention";
const STORE_STREAMS = [
  kvStreams.name(BUCKETS.jobs),
  STREAMS.logs,
  `OBJ_${OBJECT_STORES.artifacts}`,
  kvStreams.name(BUCKETS.artifactIndex),
];

let cluster: NatsClusterHarness;
let system: RunningSystem;
let nc: NatsConnection;

beforeAll(async () => {
  cluster = await startNatsCluster();
  nc = await connect({ servers: [...cluster.urls], name: "test-retention-cluster" });
  // The job bucket as an earlier version made it: no message TTLs.
  await new Kvm(nc).create(BUCKETS.jobs, { history: 1, replicas: cluster.replicas, allow_direct: false });
  system = await startSystem(
    cluster.url,
    { gateways: 2, schedulers: 2, registries: 1 },
    {
      CJS_NATS_REPLICAS: String(cluster.replicas),
      CJS_RETENTION_SECONDS_OVERRIDE: "1",
      CJS_RETENTION_SWEEP_INTERVAL_MS: "250",
      CJS_RETENTION_MARKER_TTL_SECONDS: "1",
    },
  );
}, 120_000);

afterAll(async () => {
  await system?.stop();
  await nc?.close();
  await cluster?.stop();
});

async function messagesStored(): Promise<Record<string, number>> {
  const jsm = await jetstreamManager(nc);
  const stored: Record<string, number> = {};
  for (const stream of STORE_STREAMS) stored[stream] = (await jsm.streams.info(stream)).state.messages;
  return stored;
}

describe("retention on a cluster", () => {
  it("upgrades the job bucket to expiring markers and empties the store of finished jobs", async () => {
    const jsm = await jetstreamManager(nc);
    expect((await jsm.streams.info(kvStreams.name(BUCKETS.jobs))).config.allow_msg_ttl).toBe(true);

    const tenant = await createTenant(nc);
    const { client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant);
    const node = await FakeNode.register(user, system.gateways[1]!.baseUrl, tenant.app.app_id, {
      pool_id: POOL,
      capacity: { cpu: 32, memory_mb: 65_536, gpu: 0, slots: JOBS },
    });
    const jobIds = await finishJobsWithData(user, node, POOL, JOBS);

    await vi.waitFor(
      async () =>
        expect(await messagesStored()).toEqual(Object.fromEntries(STORE_STREAMS.map((stream) => [stream, 0]))),
      { timeout: 30_000, interval: 200 },
    );
    for (const jobId of jobIds.slice(0, 3)) {
      await expect(user.call("retrieveJob", { job_id: jobId })).rejects.toMatchObject({ code: "resource.not_found" });
    }
  }, 90_000);
});
