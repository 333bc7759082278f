/**
 * The job path on a 3-node NATS cluster with R3 streams and buckets: two gateways, two
 * schedulers, two node registries, billing, and fake nodes of an operator pool.
 * (a) 1,000 jobs: every job ends, no attempt reaches two nodes, every attempt is charged once.
 * (b) one NATS node SIGKILLed mid-stream and restarted: every acknowledged job finishes,
 *     none is lost, none doubled, every attempt charged once.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  expectAllDoneOnceAndChargedOnce,
  setUpOperatorFleet,
  submitAcknowledged,
  type OperatorFleet,
} from "../harness/cluster-jobs.js";
import { startNatsCluster, type NatsClusterHarness } from "../harness/nats-cluster.js";
import { driveNodes, type NodeDriver } from "../harness/node-driver.js";
import { startSystem, type RunningSystem } from "../harness/system.js";

const NODES = 4;
const SLOTS = 8;
/** One operator pool per test, so one test's idle nodes never take the next one's jobs. */
const POOLS = ["cluster-load", "cluster-kill"] as const;

let cluster: NatsClusterHarness;
let system: RunningSystem;
let nc: NatsConnection;
let driver: NodeDriver | undefined;

beforeAll(async () => {
  cluster = await startNatsCluster();
  system = await startSystem(
    cluster.url,
    { gateways: 2, schedulers: 2, registries: 2 },
    {
      CJS_NATS_REPLICAS: String(cluster.replicas),
      CJS_REPAIR_INTERVAL_MS: "1000",
      CJS_RATE_LIMIT_PER_MINUTE: "100000",
      CJS_RATE_LIMIT_PER_HOUR: "1000000",
      CJS_OPERATOR_POOLS: POOLS.join(","),
    },
  );
  nc = await connect({ servers: [...cluster.urls], name: "test-cluster-jobs" });
}, 120_000);

afterAll(async () => {
  await driver?.stop();
  await system?.stop();
  await nc?.close();
  await cluster?.stop();
});

function setUp(pool: string): Promise<OperatorFleet> {
  return setUpOperatorFleet(
    nc,
    system.gateways.map((gateway) => gateway.baseUrl),
    pool,
    NODES,
    SLOTS,
  );
}

const track = (more: NodeDriver) => {
  driver = more;
};

describe("a 3-node NATS cluster with R3 streams", () => {
  it("runs 1,000 jobs through two schedulers and two gateways: every job ends, once, on one node, charged once", async () => {
    const pool = POOLS[0];
    const fleet = await setUp(pool);
    const acknowledged: string[] = [];
    const drive = driveNodes(fleet.nodes, {
      slots: SLOTS,
      timeoutMs: 240_000,
      until: (stats) => stats.finished.size >= 1000,
    });
    driver = drive;
    await submitAcknowledged(fleet, pool, 1000, 20, acknowledged);
    await drive.done;
    await expectAllDoneOnceAndChargedOnce(fleet, pool, acknowledged, drive, track);
  }, 300_000);

  it("loses and doubles nothing when one NATS node is SIGKILLed mid-stream and restarted", async () => {
    const pool = POOLS[1];
    const fleet = await setUp(pool);
    const acknowledged: string[] = [];
    const drive = driveNodes(fleet.nodes, {
      slots: SLOTS,
      timeoutMs: 240_000,
      until: (stats) => acknowledged.length === 300 && acknowledged.every((id) => stats.finished.has(id)),
    });
    driver = drive;
    const submitting = submitAcknowledged(fleet, pool, 300, 10, acknowledged);
    await expect.poll(() => drive.stats.finished.size, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(50);
    await cluster.kill(1);
    // The stream goes on through the other two nodes; then the killed one comes back with its store.
    await expect.poll(() => drive.stats.finished.size, { timeout: 120_000, interval: 50 }).toBeGreaterThanOrEqual(150);
    await cluster.restart(1);
    await submitting;
    await drive.done;
    await expectAllDoneOnceAndChargedOnce(fleet, pool, acknowledged, drive, track);
  }, 300_000);
});
