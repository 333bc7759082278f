/**
 * The scheduler under load and under faults, against a real nats-server:
 * (a) many jobs over several nodes and two scheduler replicas,
 * (b) one scheduler replica (a real process) SIGKILLed mid-stream,
 * (c) nats-server stopped and restarted mid-stream on the same store.
 * In each, every job must end `succeeded`, run as exactly one attempt on exactly one node,
 * and every reservation must be released at the end.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { decodeJson, PingReply, subjects } from "../../shared/nats/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { listAllJobs } from "../harness/listing.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { driveNodes, type DriveStats, type NodeDriver } from "../harness/node-driver.js";
import { startServiceProcess, type ServiceProcess } from "../harness/service-process.js";
import {
  createTenant,
  signedInClient,
  startGateway,
  startLogRelay,
  startNodeRegistry,
  startSystem,
  type RunningGateway,
  type RunningService,
  type RunningSystem,
  type Tenant,
} from "../harness/system.js";

const POOL = "races";
const JOB = { type: "shell", pool_id: POOL, resources: { cpu: 0.5, memory_mb: 64, gpu: 0 } };

/** A tenant signed in on every gateway, and its nodes registered in one self-hosted pool. */
interface Fleet {
  tenant: Tenant;
  /** One signed-in client per gateway, so submits spread over the replicas. */
  users: ComputeClient[];
  nodes: FakeNode[];
}

async function setUpFleet(gateways: RunningGateway[], nodeCount: number, slots: number): Promise<Fleet> {
  const tenant = await createTenant(gateways[0]!.nc);
  const { client, tokens } = await signedInClient(gateways[0]!.baseUrl, tenant);
  const users = gateways.map(
    ({ baseUrl }) => new ComputeClient({ baseUrl, appId: tenant.app.app_id, accessToken: tokens.access_token }),
  );
  const nodes = await Promise.all(
    Array.from({ length: nodeCount }, (_, index) =>
      FakeNode.register(client, gateways[index % gateways.length]!.baseUrl, tenant.app.app_id, {
        name: `racer-${index}`,
        pool_id: POOL,
        capacity: { cpu: slots, memory_mb: slots * 1024, gpu: 0, slots },
      }),
    ),
  );
  return { tenant, users, nodes };
}

/** Submits `count` jobs, `concurrency` requests in flight at once, alternating gateways. Any failure fails the test. */
async function submitJobs(users: ComputeClient[], count: number, concurrency: number, into: string[]): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) {
      const index = next++;
      const { job_id } = await users[index % users.length]!.call("submitJob", {
        ...JOB,
        command: ["true"],
        name: `race-${index}`,
      });
      into.push(job_id);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

/** What each test asserts at the end: everything succeeded, once, on one node, and every slot is free again. */
async function expectAllSucceededOnce(fleet: Fleet, submitted: readonly string[], stats: DriveStats): Promise<void> {
  expect(stats.unexpected).toEqual([]);
  expect(stats.doubleDeliveries).toEqual([]);
  expect(stats.overbooked).toEqual([]);
  expect(new Set(submitted).size).toBe(submitted.length);

  // Right after a broker restart a replica may still be re-counting its watch: a list answers 503 with
  // Retry-After then, which a client retries.
  const jobs = await listAllJobs(fleet.users[0]!.patient(), POOL);
  expect(jobs.map((job) => job.job_id).sort()).toEqual([...submitted].sort());
  const notSucceeded = jobs
    .filter((job) => job.state !== "succeeded")
    .map(({ job_id, state, attempt, node_id }) => ({ job_id, state, attempt, node_id }));
  expect(notSucceeded).toEqual([]);
  // No node was lost, so no job was ever requeued: each ran as exactly one attempt…
  const reassigned = jobs.filter((job) => job.attempt !== 1).map(({ job_id, attempt }) => ({ job_id, attempt }));
  expect(reassigned).toEqual([]);
  // …delivered to exactly the node that the record says ran it.
  expect(stats.deliveries.size).toBe(submitted.length);
  const mismatched = jobs
    .filter((job) => stats.deliveries.get(`${job.job_id}#1`) !== job.node_id)
    .map(({ job_id, node_id }) => ({ job_id, node_id }));
  expect(mismatched).toEqual([]);

  // Every reservation released: a result releases its slot before it is answered, and the
  // reconciler frees any reservation left behind by a crash, after its grace period.
  await expect
    .poll(
      async () => (await fleet.users[0]!.call("listNodes", { pool_id: POOL })).items.map((node) => node.used.slots),
      { timeout: 30_000, interval: 250 },
    )
    .toEqual(fleet.nodes.map(() => 0));
}

/** Waits for the driver; if it gives up, the error names the jobs that did not finish and where they stand. */
async function driven(driver: NodeDriver, fleet: Fleet, submitted: readonly string[]): Promise<void> {
  try {
    await driver.done;
  } catch (error) {
    const unfinished = (await listAllJobs(fleet.users[0]!, POOL).catch(() => []))
      .filter((job) => !driver.stats.finished.has(job.job_id))
      .slice(0, 10)
      .map(({ job_id, state, attempt, node_id, pending_reason }) => ({
        job_id,
        state,
        attempt,
        node_id,
        pending_reason,
      }));
    throw new Error(
      `${error instanceof Error ? error.message : String(error)}; of ${submitted.length} jobs, unfinished: ${JSON.stringify(unfinished)}`,
      { cause: error },
    );
  }
}

function elapsed(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}

describe("two scheduler replicas in one process, under load", () => {
  const JOBS = 1000;
  const NODES = 5;
  const SLOTS = 20;
  let nats: NatsHarness;
  let system: RunningSystem;
  let driver: NodeDriver | undefined;

  beforeAll(async () => {
    nats = await startNats();
    // The shortest ack wait allowed: a queued job whose message sits unacknowledged that long
    // is handed to the other replica too, so both replicas often hold, and race to place, one job.
    // One user submits all the jobs within a minute or so: above the default rate limit of 1000 a minute.
    const rateLimits = { CJS_RATE_LIMIT_PER_MINUTE: "100000", CJS_RATE_LIMIT_PER_HOUR: "1000000" };
    system = await startSystem(
      nats.url,
      { gateways: 2, schedulers: 2, registries: 2 },
      { CJS_PARTITION_LEASE_MS: "1000", ...rateLimits },
    );
  });

  afterAll(async () => {
    await driver?.stop();
    await system?.stop();
    await nats?.stop();
  });

  it(`${JOBS} jobs over ${NODES} nodes and two scheduler replicas: each job reaches a terminal state, none is ever assigned to two nodes in the same attempt`, async () => {
    const started = performance.now();
    const fleet = await setUpFleet(system.gateways, NODES, SLOTS);
    const submitted: string[] = [];
    let allSubmitted = false;
    // The nodes work while jobs are still being submitted: placement races submission.
    driver = driveNodes(fleet.nodes, {
      slots: SLOTS,
      timeoutMs: 100_000,
      until: (stats) => allSubmitted && stats.finished.size === submitted.length,
    });
    await submitJobs(fleet.users, JOBS, 50, submitted);
    allSubmitted = true;
    const submittedAt = elapsed(started);
    await driven(driver, fleet, submitted);
    console.info(
      `[scheduler-races a] ${JOBS} jobs submitted after ${submittedAt}, all finished after ${elapsed(started)}; retries: ${JSON.stringify(Object.fromEntries(driver.stats.retried))}`,
    );
    await expectAllSucceededOnce(fleet, submitted, driver.stats);
  }, 180_000);
});

describe("a scheduler replica SIGKILLed mid-stream", () => {
  const JOBS = 200;
  const NODES = 4;
  const SLOTS = 10;
  let nats: NatsHarness;
  let observer: NatsConnection;
  const schedulers: ServiceProcess[] = [];
  const services: RunningService[] = [];
  const gateways: RunningGateway[] = [];
  let driver: NodeDriver | undefined;

  /** The distinct scheduler instances that answer a ping now. */
  async function schedulerInstances(): Promise<number> {
    const instances = new Set<string>();
    const replies = await observer.requestMany(subjects.servicePing("scheduler"), undefined, {
      strategy: "count",
      maxMessages: 2,
      maxWait: 1_000,
    });
    for await (const reply of replies) instances.add(PingReply.parse(decodeJson(reply.data)).instance);
    return instances.size;
  }

  beforeAll(async () => {
    nats = await startNats();
    const env = {
      NATS_URL: nats.url,
      CJS_OPS_HOST: "127.0.0.1",
      CJS_OPS_PORT: "0",
      LOG_LEVEL: "warn",
      CJS_PARTITION_LEASE_MS: "1000",
      CJS_RECONCILE_INTERVAL_MS: "200",
    };
    schedulers.push(
      startServiceProcess({ service: "scheduler", env }),
      startServiceProcess({ service: "scheduler", env }),
    );
    services.push(await startNodeRegistry(nats.url), await startNodeRegistry(nats.url), await startLogRelay(nats.url));
    gateways.push(await startGateway(nats.url), await startGateway(nats.url));
    observer = await connect({ servers: nats.url, name: "test-observer" });
    // Both children answer once started; one that died says why.
    const died = Promise.race(
      schedulers.map((child) =>
        child.exited.then(() => Promise.reject(new Error(`a scheduler exited while starting:\n${child.output()}`))),
      ),
    );
    died.catch(() => undefined);
    await Promise.race([
      vi.waitFor(async () => expect(await schedulerInstances()).toBe(2), { timeout: 45_000, interval: 200 }),
      died,
    ]);
  }, 90_000);

  afterAll(async () => {
    await driver?.stop();
    // Killed first, so nothing is left running even if what follows fails.
    await Promise.all(schedulers.map((child) => child.kill()));
    await Promise.all(gateways.map((gateway) => gateway.stop()));
    await Promise.all(services.map((service) => service.stop().catch(() => undefined)));
    await observer?.close();
    await nats?.stop();
  });

  it("kill -9 one scheduler replica mid-stream: every job still finishes", async () => {
    const started = performance.now();
    const fleet = await setUpFleet(gateways, NODES, SLOTS);
    const submitted: string[] = [];
    await submitJobs(fleet.users, JOBS, 25, submitted);
    driver = driveNodes(fleet.nodes, {
      slots: SLOTS,
      timeoutMs: 90_000,
      until: (stats) => stats.finished.size === JOBS,
    });

    // Some jobs done, most not: the stream is in full flow.
    await expect
      .poll(() => driver!.stats.finished.size, { timeout: 60_000, interval: 20 })
      .toBeGreaterThanOrEqual(JOBS / 5);
    const victim = schedulers[0]!;
    await victim.kill();
    expect(await victim.exited).toEqual({ code: null, signal: "SIGKILL" });
    const finishedAtKill = driver.stats.finished.size;
    expect(finishedAtKill).toBeLessThan(JOBS);

    await driven(driver, fleet, submitted);
    console.info(
      `[scheduler-races b] killed a scheduler with ${finishedAtKill}/${JOBS} jobs finished; all finished after ${elapsed(started)}; retries: ${JSON.stringify(Object.fromEntries(driver.stats.retried))}`,
    );
    expect(schedulers[1]!.alive()).toBe(true);
    await expectAllSucceededOnce(fleet, submitted, driver.stats);
  }, 180_000);
});

describe("nats-server restarted mid-stream on the same store", () => {
  const JOBS = 300;
  const NODES = 4;
  const SLOTS = 10;
  let nats: NatsHarness;
  let system: RunningSystem;
  let driver: NodeDriver | undefined;

  beforeAll(async () => {
    nats = await startNats();
    system = await startSystem(nats.url);
  });

  afterAll(async () => {
    await driver?.stop();
    await system?.stop();
    await nats?.stop();
  });

  it("stop and restart nats-server mid-stream with the same store: every job still finishes", async () => {
    const started = performance.now();
    const fleet = await setUpFleet(system.gateways, NODES, SLOTS);
    const submitted: string[] = [];
    await submitJobs(fleet.users, JOBS, 25, submitted);
    driver = driveNodes(fleet.nodes, {
      slots: SLOTS,
      timeoutMs: 90_000,
      until: (stats) => stats.finished.size === JOBS,
    });

    await expect
      .poll(() => driver!.stats.finished.size, { timeout: 60_000, interval: 20 })
      .toBeGreaterThanOrEqual(JOBS / 5);
    const finishedAtRestart = driver.stats.finished.size;
    expect(finishedAtRestart).toBeLessThan(JOBS);
    await nats.restart();

    await driven(driver, fleet, submitted);
    console.info(
      `[scheduler-races c] restarted nats-server with ${finishedAtRestart}/${JOBS} jobs finished; all finished after ${elapsed(started)}; retries: ${JSON.stringify(Object.fromEntries(driver.stats.retried))}`,
    );
    await expectAllSucceededOnce(fleet, submitted, driver.stats);
  }, 180_000);
});
