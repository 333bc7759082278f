/**
 * Placement spread over scheduler replicas on the 3-node NATS cluster with R3 streams and
 * buckets. Three scheduler processes own the job partitions between them; 2,000 jobs of
 * an operator pool go through while one replica is SIGKILLed (its partitions are taken
 * over once its lease passes) and another is added (it takes its share and places its
 * partitions' jobs). Every job ends in one attempt on one node and is charged once.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { JOB_PARTITIONS } from "../../shared/records/index.js";
import { expectAllDoneOnceAndChargedOnce, setUpOperatorFleet, submitAcknowledged } from "../harness/cluster-jobs.js";
import { startNatsCluster, type NatsClusterHarness } from "../harness/nats-cluster.js";
import { driveNodes, type NodeDriver } from "../harness/node-driver.js";
import { healthUrlOf, metricValue, serviceProcessEnv } from "../harness/readiness.js";
import { startServiceProcess, type ServiceProcess } from "../harness/service-process.js";
import { startSystem, type RunningSystem } from "../harness/system.js";

const POOL = "scale-out";
const NODES = 4;
const SLOTS = 8;
const JOBS = 2000;
/** Short, so the killed replica's partitions are taken over within a few seconds. */
const LEASE_MS = "3000";

let cluster: NatsClusterHarness;
let system: RunningSystem;
let nc: NatsConnection;
let driver: NodeDriver | undefined;
/** Each scheduler process and its ops URL (`/metrics`). */
const schedulers: Array<{ child: ServiceProcess; opsUrl: string }> = [];

async function startSchedulerProcess(): Promise<{ child: ServiceProcess; opsUrl: string }> {
  const child = startServiceProcess({
    service: "scheduler",
    env: {
      ...serviceProcessEnv("scheduler", cluster.url, cluster.replicas),
      CJS_PARTITION_LEASE_MS: LEASE_MS,
      CJS_OPERATOR_POOLS: POOL,
    },
  });
  const started = { child, opsUrl: await healthUrlOf(child) };
  schedulers.push(started);
  return started;
}

const owned = async ({ opsUrl }: { opsUrl: string }) =>
  (await metricValue(opsUrl, "cjs_scheduler_partitions_owned")) ?? 0;
const placed = async ({ opsUrl }: { opsUrl: string }) =>
  (await metricValue(opsUrl, "cjs_scheduler_placements_total")) ?? 0;

beforeAll(async () => {
  cluster = await startNatsCluster();
  const env = {
    CJS_NATS_REPLICAS: String(cluster.replicas),
    CJS_RATE_LIMIT_PER_MINUTE: "100000",
    CJS_RATE_LIMIT_PER_HOUR: "1000000",
    CJS_OPERATOR_POOLS: POOL,
  };
  // Every scheduler is a process of its own, so one can be SIGKILLed; the rest run in this process.
  await Promise.all([startSchedulerProcess(), startSchedulerProcess(), startSchedulerProcess()]);
  system = await startSystem(cluster.url, { gateways: 2, schedulers: 0, registries: 2 }, env);
  nc = await connect({ servers: [...cluster.urls], name: "test-cluster-scale-out" });
}, 120_000);

afterAll(async () => {
  await driver?.stop();
  await Promise.all(schedulers.map(({ child }) => child.kill()));
  await system?.stop();
  await nc?.close();
  await cluster?.stop();
});

describe("scheduler replicas placing on a 3-node NATS cluster with R3 streams", () => {
  it(`places ${JOBS} jobs over three replicas while one is SIGKILLed and another added: every job ends once, on one node, charged once`, async () => {
    // The three split the partitions, each owning some.
    await expect
      .poll(async () => Promise.all(schedulers.map(owned)), { timeout: 60_000, interval: 200 })
      .toSatisfy((counts: number[]) => counts.every((count) => count > 0) && sum(counts) === JOB_PARTITIONS);

    const fleet = await setUpOperatorFleet(
      nc,
      system.gateways.map((gateway) => gateway.baseUrl),
      POOL,
      NODES,
      SLOTS,
    );
    const acknowledged: string[] = [];
    const drive = driveNodes(fleet.nodes, {
      slots: SLOTS,
      timeoutMs: 400_000,
      until: (stats) => acknowledged.length === JOBS && acknowledged.every((id) => stats.finished.has(id)),
    });
    driver = drive;

    // The first half: one replica SIGKILLed while its partitions' jobs are in flow.
    const firstHalf = submitAcknowledged(fleet, POOL, JOBS / 2, 20, acknowledged);
    await expect.poll(() => drive.stats.finished.size, { timeout: 120_000, interval: 50 }).toBeGreaterThanOrEqual(400);
    const [victim, ...survivors] = schedulers;
    await victim!.child.kill();
    expect(await victim!.child.exited).toEqual({ code: null, signal: "SIGKILL" });
    // Its partitions go to the two left once its lease has passed unrenewed.
    await expect
      .poll(async () => sum(await Promise.all(survivors.map(owned))), { timeout: 60_000, interval: 200 })
      .toBe(JOB_PARTITIONS);
    await firstHalf;

    // The second half after a replica joined and took its share: it places its partitions' jobs.
    const added = await startSchedulerProcess();
    await expect.poll(() => owned(added), { timeout: 60_000, interval: 200 }).toBeGreaterThan(0);
    await expect
      .poll(async () => sum(await Promise.all([...survivors, added].map(owned))), { timeout: 60_000, interval: 200 })
      .toBe(JOB_PARTITIONS);
    await submitAcknowledged(fleet, POOL, JOBS / 2, 20, acknowledged);
    await drive.done;

    expect(await placed(added)).toBeGreaterThan(0);
    for (const survivor of survivors) expect(await placed(survivor)).toBeGreaterThan(0);
    await expectAllDoneOnceAndChargedOnce(fleet, POOL, acknowledged, drive, (more) => {
      driver = more;
    });
  }, 600_000);
});

function sum(values: readonly number[]): number {
  return values.reduce((total, value) => total + value, 0);
}
