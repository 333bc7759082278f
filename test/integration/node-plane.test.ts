import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import {
  type Job,
  type JobState,
  RPC_ROUTES,
  type RpcName,
  type RpcRequest,
  TERMINAL_STATES,
} from "../../shared/contract/index.js";
import { ApiError } from "../../clients/sdk/src/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";
import { runningJob } from "../harness/running-job.js";

/**
 * The node plane against the whole system (two replicas of each service) with a short
 * heartbeat: a node that stays silent for 2 s is lost. Every node a test keeps alive
 * heartbeats on its own loop, as a real agent would; each test uses its own self-hosted
 * pool, so tests never place jobs on each other's nodes.
 */
const ENV = { CJS_HEARTBEAT_INTERVAL_SECONDS: "1", CJS_HEARTBEAT_MISSES_OFFLINE: "2" };
const HEARTBEAT_EVERY_MS = 250;

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
/** The tenant's signed-in user through the first gateway and, with the same token, the second. */
let user: ComputeClient;
let userOnSecondGateway: ComputeClient;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 2, schedulers: 2, registries: 2 }, ENV);
  tenant = await createTenant(system.gateways[0]!.nc);
  const signedIn = await signedInClient(system.gateways[0]!.baseUrl, tenant);
  user = signedIn.client;
  userOnSecondGateway = new ComputeClient({
    baseUrl: system.gateways[1]!.baseUrl,
    appId: tenant.app.app_id,
    accessToken: signedIn.tokens.access_token,
  });
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

const heartbeatLoops = new Set<() => Promise<void>>();

afterEach(async () => {
  await Promise.all([...heartbeatLoops].map((stop) => stop()));
});

/**
 * Heartbeats the node every HEARTBEAT_EVERY_MS until stopped, as its agent would. The
 * returned stop waits for a heartbeat in flight, so the node is silent from then on.
 */
function keepAlive(node: FakeNode): () => Promise<void> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  let inFlight: Promise<unknown> = Promise.resolve();
  const beat = () => {
    inFlight = node
      .heartbeat()
      .catch(() => undefined)
      .finally(() => {
        if (!stopped) timer = setTimeout(beat, HEARTBEAT_EVERY_MS);
      });
  };
  beat();
  const stop = async () => {
    stopped = true;
    clearTimeout(timer);
    heartbeatLoops.delete(stop);
    await inFlight;
  };
  heartbeatLoops.add(stop);
  return stop;
}

/** A node of the tenant in `pool`, talking through the second gateway. */
async function registerNode(
  pool: string,
  overrides: Partial<RpcRequest<"registerNode">> = {},
  owner: { user: ComputeClient; appId: string } = { user, appId: tenant.app.app_id },
) {
  return FakeNode.register(owner.user, system.gateways[1]!.baseUrl, owner.appId, {
    name: `node-${pool}`,
    pool_id: pool,
    capacity: { cpu: 8, memory_mb: 16_384, gpu: 0, slots: 4 },
    ...overrides,
  });
}

async function submit(pool: string, overrides: Partial<RpcRequest<"submitJob">> = {}): Promise<string> {
  return (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool, ...overrides })).job_id;
}

async function retrieve(jobId: string, client = user): Promise<Job> {
  return (await client.call("retrieveJob", { job_id: jobId })).job;
}

/** The HTTP status and error code of a call that must fail. */
async function refusal<N extends RpcName>(
  client: ComputeClient,
  name: N,
  body: RpcRequest<N>,
): Promise<{ status: number; code: unknown }> {
  const route = RPC_ROUTES[name];
  const response = await client.raw(route.method, route.path, body);
  return { status: response.status, code: (response.body as { code?: unknown } | undefined)?.code };
}

/**
 * Polls (long) until the node is given `jobId`, then waits for the job to read `running`
 * (its start is written a moment after the node got it, decision 0095); answers that assignment.
 */
async function pollFor(node: FakeNode, jobId: string, timeoutMs = 15_000) {
  await expect
    .poll(async () => (await node.poll(2)).some((job) => job.job_id === jobId), { timeout: timeoutMs, interval: 1 })
    .toBe(true);
  await expect.poll(async () => (await retrieve(jobId)).state, { timeout: timeoutMs }).toBe("running");
  return node.running.get(jobId)!;
}

async function pendingReason(jobId: string) {
  return (await retrieve(jobId)).pending_reason;
}

function terminalEvents(job: Job) {
  return job.timeline.filter((event) => TERMINAL_STATES.includes(event.state));
}

describe("node loss", () => {
  it("a node that stops heartbeating has its jobs requeued to another node, and its late result is refused as stale", async () => {
    const pool = "lost";
    const a = await registerNode(pool, { name: "a" });
    const stopA = keepAlive(a);
    const jobId = await submit(pool, { max_attempts: 3 });
    const [first] = await a.poll(10);
    expect(first).toMatchObject({ job_id: jobId, attempt: 1 });

    // B joins only now, so the first attempt was A's.
    const b = await registerNode(pool, { name: "b" });
    keepAlive(b);
    await stopA();

    const second = await pollFor(b, jobId, 20_000);
    expect(second.attempt).toBe(2);
    const moved = await retrieve(jobId);
    expect(moved).toMatchObject({ state: "running", attempt: 2, node_id: b.nodeId });
    expect(moved.timeline.find((event) => event.reason === "node_lost")).toMatchObject({
      state: "queued",
      attempt: 1,
      error: { code: "node.lost" },
    });

    expect(
      await refusal(a.client, "result", { job_id: jobId, attempt: 1, outcome: "succeeded", exit_code: 0 }),
    ).toEqual({ status: 409, code: "job.stale_attempt" });
    expect(await retrieve(jobId)).toEqual(moved);

    await b.finish(jobId);
    expect(await retrieve(jobId)).toMatchObject({ state: "succeeded", attempt: 2, node_id: b.nodeId, exit_code: 0 });

    const stateOf = async (nodeId: string) =>
      (await user.call("listNodes", {})).items.find((node) => node.node_id === nodeId)?.state;
    expect(await stateOf(a.nodeId)).toBe("offline");
    expect(await stateOf(b.nodeId)).toBe("online");

    // A comes back still believing it runs attempt 1: it is told to stop it.
    const { stop } = await a.heartbeat();
    expect(stop).toHaveLength(1);
    expect(stop[0]).toMatchObject({ job_id: jobId, attempt: 1 });
    expect(["reassigned", "succeeded"]).toContain(stop[0]!.reason);
    expect(await stateOf(a.nodeId)).toBe("online");
  });

  it("a job whose attempts are spent fails with `node.lost` when its node is lost", async () => {
    const pool = "lost-once";
    const node = await registerNode(pool);
    const stop = keepAlive(node);
    const jobId = await submit(pool, { max_attempts: 1 });
    await pollFor(node, jobId);
    await stop();

    await expect.poll(async () => (await retrieve(jobId)).state, { timeout: 15_000 }).toBe("failed");
    const job = await retrieve(jobId);
    expect(job).toMatchObject({ attempt: 1, error: { code: "node.lost" } });
    expect(terminalEvents(job)).toEqual([expect.objectContaining({ state: "failed", reason: "node_lost" })]);
  });
});

describe("races", () => {
  it("cancel racing a result: exactly one terminal state wins and every read agrees", async () => {
    const pool = "race";
    const node = await registerNode(pool);
    keepAlive(node);
    const wins = { cancel: 0, result: 0 };
    for (let round = 0; round < 20; round += 1) {
      const outcome = round % 2 === 0 ? "succeeded" : "failed";
      const jobId = await submit(pool);
      const { attempt } = await pollFor(node, jobId);
      // The user's cancel goes through the first gateway, the node's result through the second.
      const [cancelled, reported] = await Promise.allSettled([
        user.call("cancelJob", { job_id: jobId }),
        node.client.call("result", { job_id: jobId, attempt, outcome, exit_code: outcome === "succeeded" ? 0 : 1 }),
      ]);
      node.running.delete(jobId);

      expect([cancelled.status, reported.status].filter((status) => status === "fulfilled")).toHaveLength(1);
      const loser =
        cancelled.status === "rejected"
          ? cancelled.reason
          : reported.status === "rejected"
            ? reported.reason
            : undefined;
      expect(loser).toBeInstanceOf(ApiError);
      expect(["state.conflict", "job.stale_attempt"]).toContain((loser as ApiError).code);

      let winner: JobState;
      if (cancelled.status === "fulfilled") {
        wins.cancel += 1;
        winner = "cancelled";
        expect(cancelled.value.job.state).toBe("cancelled");
      } else {
        wins.result += 1;
        winner = outcome;
        expect(reported.status === "fulfilled" && reported.value).toMatchObject({ state: outcome, duplicate: false });
        expect((loser as ApiError).details).toMatchObject({ state: outcome });
      }

      const [onFirst, onSecond, listed] = await Promise.all([
        retrieve(jobId, user),
        retrieve(jobId, userOnSecondGateway),
        user.call("listJobs", { pool_id: pool, limit: 5 }),
      ]);
      expect(onFirst.state).toBe(winner);
      expect(onSecond).toEqual(onFirst);
      expect(listed.items.find((item) => item.job_id === jobId)?.state).toBe(winner);
      expect(terminalEvents(onFirst)).toEqual([expect.objectContaining({ state: winner, attempt })]);
    }
    expect(wins.cancel + wins.result).toBe(20);
  });
});

describe("tenancy", () => {
  it("a second tenant gets not-found for the first tenant's job on retrieve, cancel, retry, and sees none of its jobs or nodes in list", async () => {
    const pool = "tenancy";
    const node = await registerNode(pool);
    keepAlive(node);
    const runningJob = await submit(pool);
    const running = await pollFor(node, runningJob);
    const failedJob = await submit(pool, { command: ["false"] });
    await pollFor(node, failedJob);
    await node.finish(failedJob, "failed");
    const before = { running: await retrieve(runningJob), failed: await retrieve(failedJob) };
    expect(before.running.state).toBe("running");
    expect(before.failed.state).toBe("failed");

    const gateway = system.gateways[0]!;
    const sameApp = await createTenant(gateway.nc, { appId: tenant.app.app_id });
    const otherApp = await createTenant(gateway.nc);
    for (const other of [sameApp, otherApp]) {
      const { client } = await signedInClient(gateway.baseUrl, other);
      const notFound = { status: 404, code: "resource.not_found" };
      for (const jobId of [runningJob, failedJob]) {
        expect(await refusal(client, "retrieveJob", { job_id: jobId })).toEqual(notFound);
        expect(await refusal(client, "cancelJob", { job_id: jobId })).toEqual(notFound);
        expect(await refusal(client, "retryJob", { job_id: jobId })).toEqual(notFound);
      }
      expect(await refusal(client, "drainNode", { node_id: node.nodeId, draining: true })).toEqual(notFound);
      expect(await refusal(client, "rotateNodeKey", { node_id: node.nodeId })).toEqual(notFound);
      expect((await client.call("listJobs", {})).items).toEqual([]);
      expect((await client.call("listJobs", { node_id: node.nodeId })).items).toEqual([]);
      expect((await client.call("listNodes", {})).items).toEqual([]);

      // The other tenant's own node cannot end the job either.
      const intruder = await registerNode(pool, { name: "intruder" }, { user: client, appId: other.app.app_id });
      const refused = await refusal(intruder.client, "result", {
        job_id: runningJob,
        attempt: running.attempt,
        outcome: "succeeded",
        exit_code: 0,
      });
      expect(refused).toEqual(notFound);
    }
    // A token of another app is no credential for this one.
    const { tokens } = await signedInClient(gateway.baseUrl, otherApp);
    expect(
      await refusal(user.with({ accessToken: tokens.access_token }), "retrieveJob", { job_id: runningJob }),
    ).toEqual({ status: 401, code: "auth.invalid_credentials" });

    expect(await retrieve(runningJob)).toEqual(before.running);
    expect(await retrieve(failedJob)).toEqual(before.failed);
    expect((await user.call("listNodes", {})).items.find((item) => item.node_id === node.nodeId)?.state).toBe("online");
  });
});

describe("timeouts", () => {
  it("a running job past its timeout becomes timed_out and its node is told to stop it", async () => {
    const pool = "timeout";
    const node = await registerNode(pool);
    keepAlive(node);
    const jobId = await submit(pool, { timeout_seconds: 1 });
    await pollFor(node, jobId);
    expect((await retrieve(jobId)).state).toBe("running");

    await expect.poll(async () => (await retrieve(jobId)).state, { timeout: 10_000 }).toBe("timed_out");
    const job = await retrieve(jobId);
    expect(job).toMatchObject({ attempt: 1, error: { code: "job.timed_out" } });
    expect(terminalEvents(job)).toEqual([expect.objectContaining({ state: "timed_out", reason: "timed_out" })]);
    expect((await node.heartbeat()).stop).toEqual([{ job_id: jobId, attempt: 1, reason: "timed_out" }]);

    expect((await user.call("retryJob", { job_id: jobId })).job).toMatchObject({
      state: "queued",
      attempt: 1,
      error: null,
    });
    expect(await pollFor(node, jobId)).toMatchObject({ attempt: 2 });
    await node.finish(jobId);
    expect(await retrieve(jobId)).toMatchObject({ state: "succeeded", attempt: 2 });
  });
});

describe("capacity appears", () => {
  it("a job with no node is placed as soon as a node registers", async () => {
    const pool = "late-node";
    const jobId = await submit(pool);
    await expect.poll(() => pendingReason(jobId), { timeout: 10_000 }).toBe("no_nodes_in_pool");

    const node = await registerNode(pool);
    keepAlive(node);
    const { jobs } = await node.client.call("poll", { wait_seconds: 10 });
    expect(jobs.map((job) => job.job_id)).toEqual([jobId]);
    expect(await runningJob(user, jobId)).toMatchObject({
      state: "running",
      attempt: 1,
      node_id: node.nodeId,
      pending_reason: null,
    });
  });

  it("a drained node gets no new jobs until the drain is lifted", async () => {
    const pool = "drain";
    const node = await registerNode(pool);
    keepAlive(node);
    expect((await user.call("drainNode", { node_id: node.nodeId, draining: true })).node.state).toBe("draining");
    expect((await node.heartbeat()).draining).toBe(true);

    const jobId = await submit(pool);
    await expect.poll(() => pendingReason(jobId), { timeout: 10_000 }).toBe("all_nodes_draining");
    expect(await node.poll(0)).toEqual([]);

    expect((await user.call("drainNode", { node_id: node.nodeId, draining: false })).node.state).toBe("online");
    const { jobs } = await node.client.call("poll", { wait_seconds: 10 });
    expect(jobs.map((job) => job.job_id)).toEqual([jobId]);
  });

  it("a job waits when all slots are busy and is placed when one frees", async () => {
    const pool = "slots";
    const node = await registerNode(pool, { capacity: { cpu: 8, memory_mb: 16_384, gpu: 0, slots: 1 } });
    keepAlive(node);
    const firstJob = await submit(pool);
    await pollFor(node, firstJob);
    const secondJob = await submit(pool);
    await expect.poll(() => pendingReason(secondJob), { timeout: 10_000 }).toBe("all_nodes_busy");
    expect((await node.poll(0)).map((job) => job.job_id)).toEqual([firstJob]);

    await node.finish(firstJob);
    const { jobs } = await node.client.call("poll", { wait_seconds: 10 });
    expect(jobs.map((job) => job.job_id)).toEqual([secondJob]);
    expect((await user.call("listNodes", { pool_id: pool })).items[0]?.used.slots).toBe(1);
  });

  it("a job says which requirement no live node of its pool meets: labels, type or resources", async () => {
    const pool = "fit";
    const node = await registerNode(pool, {
      labels: { zone: "a" },
      job_types: ["shell"],
      capacity: { cpu: 2, memory_mb: 2048, gpu: 0, slots: 4 },
    });
    keepAlive(node);
    const wrongLabels = await submit(pool, { labels: { zone: "b" } });
    const wrongType = await submit(pool, { type: "python" });
    const tooBig = await submit(pool, { resources: { cpu: 4, memory_mb: 512, gpu: 0 } });
    await expect.poll(() => pendingReason(wrongLabels), { timeout: 10_000 }).toBe("no_node_with_labels");
    await expect.poll(() => pendingReason(wrongType), { timeout: 10_000 }).toBe("no_node_with_type");
    await expect.poll(() => pendingReason(tooBig), { timeout: 10_000 }).toBe("no_node_with_resources");
    expect(await node.poll(0)).toEqual([]);
  });
});

describe("credentials", () => {
  it("a user's token cannot poll as a node, and a node's key cannot submit jobs", async () => {
    const node = await registerNode("credentials");
    expect(await refusal(user, "poll", { wait_seconds: 0 })).toEqual({ status: 403, code: "permission.denied" });
    expect(
      await refusal(node.client, "submitJob", { type: "shell", command: ["true"], pool_id: "credentials" }),
    ).toEqual({ status: 403, code: "permission.denied" });
  });

  /** Registers a node and answers its first key, with a client of that key on each gateway. */
  async function registerWithKey(pool: string) {
    const registered = await user.call("registerNode", {
      name: `node-${pool}`,
      hostname: "host.local",
      pool_id: pool,
      capacity: { cpu: 1, memory_mb: 512 },
      agent_version: "test",
    });
    return {
      nodeId: registered.node_id,
      onEachGateway: (apiKey: string) =>
        system.gateways.map(
          (gateway) => new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id, apiKey }),
        ),
      apiKey: registered.api_key,
    };
  }

  it("a rotated node key with no grace stops working at once, and the new key works", async () => {
    const node = await registerWithKey("rotate");
    const [oldOnFirst, oldOnSecond] = node.onEachGateway(node.apiKey) as [ComputeClient, ComputeClient];
    // Both gateways hold the old key in their caches before the rotation.
    await oldOnFirst.call("heartbeat", {});
    await oldOnSecond.call("heartbeat", {});

    const rotated = await user.call("rotateNodeKey", { node_id: node.nodeId, grace_seconds: 0 });
    expect(rotated.node_id).toBe(node.nodeId);
    const invalid = { status: 401, code: "auth.invalid_credentials" };
    // The gateway that rotated refuses the old key at once; the other one as soon as its watch sees the change.
    expect(await refusal(oldOnFirst, "heartbeat", {})).toEqual(invalid);
    await expect.poll(() => refusal(oldOnSecond, "heartbeat", {}), { timeout: 5_000 }).toEqual(invalid);

    for (const fresh of node.onEachGateway(rotated.api_key))
      expect((await fresh.call("heartbeat", {})).stop).toEqual([]);
  });

  it("a rotated node key with a grace period keeps working beside the new one", async () => {
    const node = await registerWithKey("rotate-grace");
    const before = Date.now();
    const rotated = await user.call("rotateNodeKey", { node_id: node.nodeId, grace_seconds: 60 });
    const expiresAt = Date.parse(rotated.previous_key_expires_at);
    expect(expiresAt).toBeGreaterThanOrEqual(before + 60_000);
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 60_000);

    for (const client of [...node.onEachGateway(node.apiKey), ...node.onEachGateway(rotated.api_key)]) {
      expect((await client.call("heartbeat", {})).stop).toEqual([]);
    }
  });
});

describe("metrics", () => {
  it("a gateway process's /metrics carries the scheduler's and the registry's series", async () => {
    const pool = "metrics";
    const node = await registerNode(pool);
    keepAlive(node);
    const scrape = async () => {
      const response = await fetch(`${system.gateways[0]!.opsUrl}/metrics`);
      expect(response.status).toBe(200);
      return response.text();
    };
    const jobId = await submit(pool);
    // Assigned and not yet polled: the stuck-job gauge sees it, from every replica's records.
    await expect
      .poll(scrape, { timeout: 5_000 })
      .toMatch(/^cjs_job_oldest_age_seconds\{state="assigned",pool="self_hosted"\} \d/m);
    await pollFor(node, jobId);
    await node.finish(jobId);

    const text = await scrape();
    expect(text).toMatch(/^cjs_jobs_submitted_total\{pool_kind="self_hosted"\} [1-9]/m);
    expect(text).toMatch(/^cjs_jobs_finished_total\{state="succeeded"\} [1-9]/m);
    // Self-hosted pools are one label value: no business id in a metric.
    expect(text).toMatch(/^cjs_job_queue_depth\{pool="self_hosted"\} \d+/m);
    expect(text).toMatch(/^cjs_jobs\{state="running",pool="self_hosted"\} \d+/m);
    expect(text).toMatch(/^cjs_pool_nodes\{pool="self_hosted",state="online"\} [1-9]/m);
    expect(text).toMatch(/^cjs_job_start_latency_seconds_count [1-9]/m);
    expect(text).toMatch(/^cjs_job_run_seconds_count\{state="succeeded"\} [1-9]/m);
    expect(text).not.toMatch(/pool="sh\./);
    expect(text).toMatch(/^cjs_job_assign_latency_seconds_count [1-9]/m);
    // The liveness sweep sets the node gauge on its own timer.
    await expect.poll(scrape, { timeout: 5_000 }).toMatch(/^cjs_nodes\{state="online"\} [1-9]/m);
  });
});
