/**
 * API key quotas against a real nats-server, two gateways and two scheduler replicas:
 * `allowedJobTypes`, `maxConcurrentJobs` and `maxJobsPerHour` on submits made with a key,
 * and the same quotas as caps on a node registered with a key. The schedulers share one
 * clock that the tests move, so an hour passes without waiting for it.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { KeyQuotaRecord, MISSING_RECORD_GRACE_MS } from "../../services/scheduler/jobs/key-quota-rules.js";
import { ComputeClient } from "../harness/client.js";
import type { JobSummary, RpcRequest } from "../../shared/contract/index.js";
import { BUCKETS, ensureBuckets, JsonBucket, kvKey } from "../../shared/nats/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

/** The schedulers' time: a quarter second past a whole second, moved forward by the tests only. */
let fakeNow = Math.floor(Date.now() / 1000) * 1000 + 250;
const schedulerClock = { now: () => fakeNow };
const HOUR_MS = 3_600_000;

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
/** The signed-in user (a JWT), on the first gateway. */
let user: ComputeClient;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 2, schedulers: 2, registries: 2 }, {}, { schedulerClock });
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

/** A new key of the user with these quotas, and one client with it per gateway. */
async function keyClients(
  quotas: Omit<RpcRequest<"createApiKey">, "name">,
): Promise<{ keyId: string; clients: ComputeClient[] }> {
  const created = await user.call("createApiKey", { name: "quota test", ...quotas });
  return {
    keyId: created.key_id,
    clients: system.gateways.map(
      ({ baseUrl }) => new ComputeClient({ baseUrl, appId: tenant.app.app_id, apiKey: created.key }),
    ),
  };
}

function job(pool: string, overrides: Partial<RpcRequest<"submitJob">> = {}): RpcRequest<"submitJob"> {
  return { type: "shell", command: ["true"], pool_id: pool, timeout_seconds: 86_400, ...overrides };
}

/** Submits through the raw HTTP API, so the status and `Retry-After` can be checked. */
async function submitRaw(client: ComputeClient, body: RpcRequest<"submitJob">) {
  const response = await client.raw("POST", "/api/compute/jobs/submit", body);
  const envelope = response.body as { code?: string; payload?: { job_id: string } };
  return {
    status: response.status,
    code: envelope.code,
    jobId: envelope.payload?.job_id,
    retryAfter: response.headers.get("retry-after"),
  };
}

/** Submits `count` at once, alternating gateways. */
function submitAtOnce(clients: ComputeClient[], count: number, body: RpcRequest<"submitJob">) {
  return Promise.all(Array.from({ length: count }, (_, index) => submitRaw(clients[index % clients.length]!, body)));
}

async function jobsOfPool(pool: string): Promise<JobSummary[]> {
  return (await user.call("listJobs", { pool_id: pool, limit: 200 })).items;
}

describe("quotas on submits made with a key", () => {
  it('allowedJobTypes ["shell"] refuses another type with 403 quota.job_type_not_allowed and queues nothing', async () => {
    const { clients } = await keyClients({ allowedJobTypes: ["shell"] });
    const refused = await submitRaw(clients[1]!, job("types-only", { type: "python" }));
    expect(refused).toMatchObject({ status: 403, code: "quota.job_type_not_allowed", retryAfter: null });
    expect(await jobsOfPool("types-only")).toEqual([]);

    const accepted = await submitRaw(clients[0]!, job("types-only"));
    expect(accepted.status).toBe(200);
    expect((await jobsOfPool("types-only")).map((each) => [each.job_id, each.type])).toEqual([
      [accepted.jobId, "shell"],
    ]);
  });

  it("50 submits at once with maxConcurrentJobs 10 admit exactly 10; the others get 429 quota.concurrent_jobs_exceeded with Retry-After 5", async () => {
    const { clients } = await keyClients({ maxConcurrentJobs: 10 });
    const answers = await submitAtOnce(clients, 50, job("concurrent-50"));
    const admitted = answers.filter((answer) => answer.status === 200);
    const refused = answers.filter((answer) => answer.status !== 200);
    expect(admitted).toHaveLength(10);
    expect(new Set(refused.map((answer) => `${answer.status} ${answer.code} ${answer.retryAfter}`))).toEqual(
      new Set(["429 quota.concurrent_jobs_exceeded 5"]),
    );
    expect((await jobsOfPool("concurrent-50")).map((each) => each.job_id).sort()).toEqual(
      admitted.map((answer) => answer.jobId).sort(),
    );
  });

  it("50 submits at once with maxJobsPerHour 10 admit exactly 10; Retry-After counts down to when the oldest leaves the hour", async () => {
    const { clients } = await keyClients({ maxJobsPerHour: 10 });
    const start = fakeNow;
    const answers = await submitAtOnce(clients, 50, job("hourly-50"));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(10);
    // All ten were admitted 0.25 s into one second: they leave the window when second + 3600 begins.
    expect(
      new Set(
        answers
          .filter((answer) => answer.status !== 200)
          .map((answer) => `${answer.status} ${answer.code} ${answer.retryAfter}`),
      ),
    ).toEqual(new Set(["429 quota.jobs_per_hour_exceeded 3600"]));
    expect(await jobsOfPool("hourly-50")).toHaveLength(10);

    fakeNow = start + 1_200_000;
    expect(await submitRaw(clients[1]!, job("hourly-50"))).toMatchObject({
      status: 429,
      code: "quota.jobs_per_hour_exceeded",
      retryAfter: "2400",
    });

    fakeNow = start - 250 + HOUR_MS;
    const afterTheHour = await submitAtOnce(clients, 12, job("hourly-50"));
    expect(afterTheHour.filter((answer) => answer.status === 200)).toHaveLength(10);
    // The new ten were admitted at the top of a second: the 11th waits a whole hour again.
    expect(new Set(afterTheHour.filter((answer) => answer.status !== 200).map((answer) => answer.retryAfter))).toEqual(
      new Set(["3600"]),
    );
    expect(await jobsOfPool("hourly-50")).toHaveLength(20);
  });

  it("a job that ends (finished or cancelled) frees its key's concurrency slot", async () => {
    const pool = "frees-slots";
    const node = await FakeNode.register(user, system.gateways[1]!.baseUrl, tenant.app.app_id, {
      name: "runner",
      pool_id: pool,
      capacity: { cpu: 4, memory_mb: 4096, gpu: 0, slots: 1 },
    });
    const { clients } = await keyClients({ maxConcurrentJobs: 2 });
    const [key0, key1] = clients as [ComputeClient, ComputeClient];
    const first = await key0.call("submitJob", job(pool));
    const second = await key1.call("submitJob", job(pool));
    expect(await submitRaw(key0, job(pool))).toMatchObject({ status: 429, code: "quota.concurrent_jobs_exceeded" });

    // The node has one slot: one job runs, the other waits queued. Cancel the queued one.
    const [delivered] = await node.poll(10);
    const running = delivered!.job_id;
    const queued = running === first.job_id ? second.job_id : first.job_id;
    await key1.call("cancelJob", { job_id: queued });
    const third = await submitRaw(key0, job(pool));
    expect(third.status).toBe(200);
    expect(await submitRaw(key1, job(pool))).toMatchObject({ status: 429, code: "quota.concurrent_jobs_exceeded" });

    await node.finish(running);
    expect((await submitRaw(key1, job(pool))).status).toBe(200);
    expect(await submitRaw(key0, job(pool))).toMatchObject({ status: 429, code: "quota.concurrent_jobs_exceeded" });
  });

  it("a retry of a key's job takes a place of that key again: 429 while the key is full", async () => {
    const pool = "retries";
    const node = await FakeNode.register(user, system.gateways[0]!.baseUrl, tenant.app.app_id, {
      name: "retrier",
      pool_id: pool,
      capacity: { cpu: 4, memory_mb: 4096, gpu: 0, slots: 1 },
    });
    const { clients } = await keyClients({ maxConcurrentJobs: 1 });
    const failed = await clients[0]!.call("submitJob", job(pool));
    expect((await node.poll(10)).map((each) => each.job_id)).toEqual([failed.job_id]);
    await node.finish(failed.job_id, "failed");
    const other = await clients[1]!.call("submitJob", job(pool));

    const refused = await user.raw("POST", "/api/compute/jobs/retry", { job_id: failed.job_id });
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({ code: "quota.concurrent_jobs_exceeded" });
    expect((await user.call("retrieveJob", { job_id: failed.job_id })).job.state).toBe("failed");

    expect((await node.poll(10)).map((each) => each.job_id)).toEqual([other.job_id]);
    await node.finish(other.job_id);
    expect((await user.call("retryJob", { job_id: failed.job_id })).job.state).toBe("queued");
    expect(await submitRaw(clients[0]!, job(pool))).toMatchObject({
      status: 429,
      code: "quota.concurrent_jobs_exceeded",
    });
  });

  it("a slot whose release was lost is found free at the limit: ended jobs and long-missing ones are dropped, a just-admitted one is kept", async () => {
    const kv = await ensureBuckets(system.gateways[0]!.nc, [BUCKETS.keyQuotas], { replicas: 1 });
    const quotaRecords = new JsonBucket(kv[BUCKETS.keyQuotas], KeyQuotaRecord);
    const { keyId, clients } = await keyClients({ maxConcurrentJobs: 2 });
    const ended = await clients[0]!.call("submitJob", job("healing"));
    await clients[0]!.call("cancelJob", { job_id: ended.job_id });
    // As if the release at the end had been lost, plus a job whose record was never written.
    const lostLongAgo = "job_00000000lostlostlost";
    const lostJustNow = "job_00000000freshfresh00";
    await quotaRecords.mutate(kvKey(keyId), (record) => ({
      ...record,
      active: { [ended.job_id]: fakeNow, [lostLongAgo]: fakeNow - MISSING_RECORD_GRACE_MS - 1 },
    }));
    expect((await submitRaw(clients[1]!, job("healing"))).status).toBe(200);
    expect(Object.keys((await quotaRecords.get(kvKey(keyId)))!.value.active)).toHaveLength(1);

    await quotaRecords.mutate(kvKey(keyId), (record) => ({
      ...record,
      active: { ...record.active, [lostJustNow]: fakeNow },
    }));
    // The next heal may be a second away on this replica: the clock moves on by one.
    fakeNow += 1000;
    expect(await submitRaw(clients[0]!, job("healing"))).toMatchObject({
      status: 429,
      code: "quota.concurrent_jobs_exceeded",
    });
    expect(Object.keys((await quotaRecords.get(kvKey(keyId)))!.value.active)).toContain(lostJustNow);
  });

  it("a key's quotas limit neither the signed-in user nor the business's other keys", async () => {
    const limited = await keyClients({ maxConcurrentJobs: 1, maxJobsPerHour: 1, allowedJobTypes: ["shell"] });
    const other = await keyClients({ maxConcurrentJobs: 1 });
    const unlimited = await keyClients({});
    expect((await submitRaw(limited.clients[0]!, job("others"))).status).toBe(200);
    expect((await submitRaw(limited.clients[1]!, job("others"))).status).toBe(429);

    const byJwt = await Promise.all([0, 1, 2].map(() => user.call("submitJob", job("others", { type: "python" }))));
    expect(byJwt).toHaveLength(3);
    expect((await submitRaw(other.clients[0]!, job("others", { type: "python" }))).status).toBe(200);
    const unlimitedAnswers = await submitAtOnce(unlimited.clients, 5, job("others", { type: "python" }));
    expect(unlimitedAnswers.map((answer) => answer.status)).toEqual([200, 200, 200, 200, 200]);
    expect(await jobsOfPool("others")).toHaveLength(1 + 3 + 1 + 5);
  });
});

describe("a node registered with a capped key", () => {
  /** Waits until the pool's queued jobs all carry a pending reason, i.e. placement has settled. */
  async function settled(pool: string, expected: Record<string, number>): Promise<void> {
    await expect
      .poll(
        async () => {
          const counts: Record<string, number> = {};
          for (const each of await jobsOfPool(pool)) {
            const what = each.state === "queued" ? `queued:${each.pending_reason}` : each.state;
            counts[what] = (counts[what] ?? 0) + 1;
          }
          return counts;
        },
        { timeout: 15_000, interval: 100 },
      )
      .toEqual(expected);
  }

  it("gets only its allowed types, at most maxConcurrentJobs at once and maxJobsPerHour per hour, while the other jobs wait", async () => {
    const pool = "capped-node";
    const { clients } = await keyClients({ allowedJobTypes: ["shell"], maxConcurrentJobs: 2, maxJobsPerHour: 3 });
    const node = await FakeNode.register(clients[0]!, system.gateways[1]!.baseUrl, tenant.app.app_id, {
      name: "capped",
      pool_id: pool,
      job_types: ["shell", "python"],
      capacity: { cpu: 8, memory_mb: 8192, gpu: 0, slots: 4 },
    });
    const [listed] = (await user.call("listNodes", { pool_id: pool })).items;
    expect(listed?.quotas).toEqual({ allowedJobTypes: ["shell"], maxConcurrentJobs: 2, maxJobsPerHour: 3 });

    await user.call("submitJob", job(pool, { type: "python" }));
    for (let index = 0; index < 5; index += 1) await user.call("submitJob", job(pool));
    await settled(pool, { assigned: 2, "queued:no_node_with_type": 1, "queued:all_nodes_busy": 3 });
    const firstTwo = await node.poll(0);
    expect(firstTwo.map((each) => each.type)).toEqual(["shell", "shell"]);
    expect((await user.call("listNodes", { pool_id: pool })).items[0]?.used.slots).toBe(2);

    // Two more slots free, but only one assignment is left in this hour.
    for (const each of firstTwo) await node.finish(each.job_id);
    await settled(pool, {
      succeeded: 2,
      assigned: 1,
      "queued:no_node_with_type": 1,
      "queued:all_nodes_at_hourly_quota": 2,
    });
    const third = await node.poll(0);
    expect(third).toHaveLength(1);
    await node.finish(third[0]!.job_id);
    await settled(pool, { succeeded: 3, "queued:no_node_with_type": 1, "queued:all_nodes_at_hourly_quota": 2 });

    // An hour later the node gets work again, with no other event than time passing.
    fakeNow += HOUR_MS + 1000;
    await settled(pool, { succeeded: 3, assigned: 2, "queued:no_node_with_type": 1 });
    expect((await node.poll(0)).map((each) => each.type)).toEqual(["shell", "shell"]);
  });

  it("keeps its caps after its key is rotated", async () => {
    const pool = "rotated-node";
    const { clients } = await keyClients({ allowedJobTypes: ["shell"], maxConcurrentJobs: 1 });
    const registered = await clients[0]!.call("registerNode", {
      name: "rotated",
      hostname: "rotated.local",
      pool_id: pool,
      job_types: ["shell", "python"],
      capacity: { cpu: 4, memory_mb: 4096, gpu: 0, slots: 3 },
      agent_version: "test",
    });
    const rotated = await user.call("rotateNodeKey", { node_id: registered.node_id });
    const node = new ComputeClient({
      baseUrl: system.gateways[0]!.baseUrl,
      appId: tenant.app.app_id,
      apiKey: rotated.api_key,
    });
    expect((await user.call("listNodes", { pool_id: pool })).items[0]?.quotas).toEqual({
      allowedJobTypes: ["shell"],
      maxConcurrentJobs: 1,
      maxJobsPerHour: null,
    });

    await user.call("submitJob", job(pool, { type: "python" }));
    await user.call("submitJob", job(pool));
    await user.call("submitJob", job(pool));
    await settled(pool, { assigned: 1, "queued:no_node_with_type": 1, "queued:all_nodes_busy": 1 });
    const { jobs } = await node.call("poll", { wait_seconds: 0 });
    expect(jobs.map((each) => each.type)).toEqual(["shell"]);
  });

  it("registered with a JWT, has no caps", async () => {
    const pool = "uncapped-node";
    await FakeNode.register(user, system.gateways[0]!.baseUrl, tenant.app.app_id, { name: "free", pool_id: pool });
    expect((await user.call("listNodes", { pool_id: pool })).items[0]?.quotas).toBeNull();
  });
});

describe("a submit refused because the queue is full", () => {
  let fullNats: NatsHarness;
  let small: RunningSystem;

  beforeAll(async () => {
    fullNats = await startNats();
    // A queue of two waiting jobs, and one scheduler: near the limit it reads the depth afresh on every submit,
    // while a second replica may count on a reading up to a second old (the documented approximation).
    small = await startSystem(
      fullNats.url,
      { gateways: 1, schedulers: 1, registries: 1 },
      { CJS_JOB_QUEUE_MAX_MESSAGES: "2" },
    );
  });

  afterAll(async () => {
    await small?.stop();
    await fullNats?.stop();
  });

  it("counts against no quota of its key", async () => {
    const smallTenant = await createTenant(small.gateways[0]!.nc);
    const { client: owner } = await signedInClient(small.gateways[0]!.baseUrl, smallTenant);
    const created = await owner.call("createApiKey", { name: "full queue", maxJobsPerHour: 1, maxConcurrentJobs: 1 });
    const key = new ComputeClient({
      baseUrl: small.gateways[0]!.baseUrl,
      appId: smallTenant.app.app_id,
      apiKey: created.key,
    });
    const body = job("no-nodes");
    // The owner (no key quotas) fills the queue until it refuses; the depth is read at most once a second.
    const filled: string[] = [];
    await expect
      .poll(
        async () => {
          const answer = await submitRaw(owner, body);
          if (answer.jobId) filled.push(answer.jobId);
          return answer.code;
        },
        { timeout: 15_000, interval: 100 },
      )
      .toBe("queue.full");
    for (let refused = 0; refused < 3; refused += 1)
      expect(await submitRaw(key, body)).toMatchObject({ status: 503, code: "queue.full" });

    // Room again: the key's one job of the hour is still there, so none of the refused tries took it.
    for (const jobId of filled) await owner.call("cancelJob", { job_id: jobId });
    await expect.poll(async () => (await submitRaw(key, body)).status, { timeout: 15_000, interval: 100 }).toBe(200);
    expect(await submitRaw(key, body)).toMatchObject({ status: 429 });
  });
});
