/**
 * The job path on a 3-node NATS cluster with R3 streams and buckets: two gateways, two
 * schedulers, two node registries, billing, and fake nodes of an operator pool.
 * (a) 1,000 jobs: every job ends, no attempt reaches two nodes, every attempt is charged once.
 * (b) one NATS node SIGKILLed mid-stream and restarted: every acknowledged job finishes,
 *     none is lost, none doubled, every attempt charged once.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { ApiError } from "../../clients/sdk/src/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { listAllJobs, listAllLedgerEntries } from "../harness/listing.js";
import { startNatsCluster, type NatsClusterHarness } from "../harness/nats-cluster.js";
import { driveNodes, type NodeDriver } from "../harness/node-driver.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";

const NODES = 4;
const SLOTS = 8;
const JOB = { type: "shell", command: ["true"], resources: { cpu: 0.5, memory_mb: 256, gpu: 0 } };
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

/** An operator business's nodes in the operator pool, and a customer of the same application with enough credit, signed in on both gateways. */
async function setUp(pool: string) {
  const operator = await createTenant(nc, { operator: true });
  const { client: operatorClient } = await signedInClient(system.gateways[0]!.baseUrl, operator);
  const nodes = await Promise.all(
    Array.from({ length: NODES }, (_, index) =>
      FakeNode.register(operatorClient, system.gateways[index % 2]!.baseUrl, operator.app.app_id, {
        name: `cluster-${index}`,
        pool_id: pool,
        capacity: { cpu: SLOTS, memory_mb: SLOTS * 1024, gpu: 0, slots: SLOTS },
      }),
    ),
  );
  const customer = await createTenant(nc, { appId: operator.app.app_id });
  const { tokens } = await signedInClient(system.gateways[0]!.baseUrl, customer);
  const users = system.gateways.map(
    ({ baseUrl }) => new ComputeClient({ baseUrl, appId: customer.app.app_id, accessToken: tokens.access_token }),
  );
  await requestRpc(nc, "adminCreditSet", { business_id: customer.business.business_id, amount: 1_000_000 });
  return { nodes, users };
}

/**
 * Submits `count` jobs, `concurrency` at a time over both gateways. A submit refused with a
 * retryable error (a leader election under way) is tried again; only answered ones count
 * as acknowledged. Jobs a refused try may have created anyway are found by the listing.
 */
async function submitJobs(
  users: ComputeClient[],
  pool: string,
  count: number,
  concurrency: number,
  acknowledged: string[],
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      for (;;) {
        try {
          acknowledged.push(
            (await users[index % users.length]!.call("submitJob", { ...JOB, pool_id: pool, name: `cluster-${index}` }))
              .job_id,
          );
          break;
        } catch (error) {
          if (!(error instanceof ApiError && error.code === "service.unavailable")) throw error;
        }
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/**
 * Every job of the customer succeeded in one attempt on one node, and was debited exactly
 * once. A submit refused while a leader was elected may have made a job anyway: the nodes
 * are driven on until those end too.
 */
async function expectAllDoneOnceAndChargedOnce(
  user: ComputeClient,
  pool: string,
  nodes: readonly FakeNode[],
  acknowledged: readonly string[],
  drive: NodeDriver,
): Promise<void> {
  const unfinished = (await listAllJobs(user, pool))
    .filter((job) => !acknowledged.includes(job.job_id) && job.state !== "succeeded")
    .map((job) => job.job_id);
  if (unfinished.length > 0) {
    const more = driveNodes(nodes, {
      slots: SLOTS,
      timeoutMs: 120_000,
      until: (stats) => unfinished.every((id) => stats.finished.has(id)),
    });
    driver = more;
    await more.done;
    expect(more.stats.unexpected, more.stats.unexpected.join("\n")).toEqual([]);
  }
  expect(drive.stats.unexpected, drive.stats.unexpected.join("\n")).toEqual([]);
  expect(drive.stats.doubleDeliveries).toEqual([]);
  expect(drive.stats.overbooked).toEqual([]);
  const jobs = await listAllJobs(user, pool);
  const ids = jobs.map((job) => job.job_id);
  expect(new Set(ids).size).toBe(ids.length);
  expect(ids).toEqual(expect.arrayContaining([...acknowledged]));
  expect(jobs.filter((job) => job.state !== "succeeded" || job.attempt !== 1)).toEqual([]);
  await expect
    .poll(async () => (await listAllLedgerEntries(user)).items.filter((entry) => entry.kind === "debit").length, {
      timeout: 60_000,
      interval: 250,
    })
    .toBe(ids.length);
  const { balance, items } = await listAllLedgerEntries(user);
  const debits = items.filter((entry) => entry.kind === "debit");
  expect(new Set(debits.map((entry) => entry.job_id)).size).toBe(ids.length);
  expect(new Set(items.map((entry) => entry.entry_id)).size).toBe(items.length);
  const sum = items.reduce((total, entry) => total + Math.round(entry.amount * 1e6), 0) / 1e6;
  expect(balance).toBe(sum);
}

describe("a 3-node NATS cluster with R3 streams", () => {
  it("runs 1,000 jobs through two schedulers and two gateways: every job ends, once, on one node, charged once", async () => {
    const pool = POOLS[0];
    const { nodes, users } = await setUp(pool);
    const acknowledged: string[] = [];
    const drive = driveNodes(nodes, {
      slots: SLOTS,
      timeoutMs: 240_000,
      until: (stats) => stats.finished.size >= 1000,
    });
    driver = drive;
    await submitJobs(users, pool, 1000, 20, acknowledged);
    await drive.done;
    await expectAllDoneOnceAndChargedOnce(users[0]!, pool, nodes, acknowledged, drive);
  }, 300_000);

  it("loses and doubles nothing when one NATS node is SIGKILLed mid-stream and restarted", async () => {
    const pool = POOLS[1];
    const { nodes, users } = await setUp(pool);
    const acknowledged: string[] = [];
    const drive = driveNodes(nodes, {
      slots: SLOTS,
      timeoutMs: 240_000,
      until: (stats) => acknowledged.length === 300 && acknowledged.every((id) => stats.finished.has(id)),
    });
    driver = drive;
    const submitting = submitJobs(users, pool, 300, 10, acknowledged);
    await expect.poll(() => drive.stats.finished.size, { timeout: 60_000, interval: 50 }).toBeGreaterThanOrEqual(50);
    await cluster.kill(1);
    // The stream goes on through the other two nodes; then the killed one comes back with its store.
    await expect.poll(() => drive.stats.finished.size, { timeout: 120_000, interval: 50 }).toBeGreaterThanOrEqual(150);
    await cluster.restart(1);
    await submitting;
    await drive.done;
    await expectAllDoneOnceAndChargedOnce(users[0]!, pool, nodes, acknowledged, drive);
  }, 300_000);
});
