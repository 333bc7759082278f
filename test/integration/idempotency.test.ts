/**
 * `Idempotency-Key` on jobs/submit and jobs/retry against a real nats-server, two gateways
 * and two scheduler replicas: a repeat answers as the first did, a key reused for another
 * request is refused, and 50 requests at once with one key, through both gateways, make
 * one job.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient, type RawResponse } from "../harness/client.js";
import { RPC_ROUTES, type RpcRequest } from "../../shared/contract/index.js";
import { Kvm } from "@nats-io/kv";
import { IdempotencyRecord, IdempotencyStore } from "../../services/gateway/idempotency/idempotency-store.js";
import { idempotencyRecordKey, requestFingerprint } from "../../services/gateway/idempotency/idempotency-key.js";
import { KeyQuotaRecord } from "../../services/scheduler/jobs/key-quota-rules.js";
import { BUCKETS, JsonBucket, kvKey, requestRpc } from "../../shared/nats/index.js";
import { tagJobId, windowCount } from "../../shared/records/index.js";
import { newId, newJobId, randomBase62 } from "../../shared/runtime/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { listAllJobs } from "../harness/listing.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

const MAX_TIMEOUT_SECONDS = 3600;
const ENV = {
  CJS_RATE_LIMIT_PER_MINUTE: "100000",
  CJS_RATE_LIMIT_PER_HOUR: "1000000",
  CJS_MAX_JOB_TIMEOUT_SECONDS: String(MAX_TIMEOUT_SECONDS),
};

let nats: NatsHarness;
let system: RunningSystem;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 2, schedulers: 2, registries: 1 }, ENV);
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

interface Envelope {
  status: string;
  code?: string;
  payload?: Record<string, unknown>;
}

async function tenantClient(gateway = 0): Promise<{ tenant: Tenant; client: ComputeClient }> {
  const tenant = await createTenant(system.gateways[0]!.nc);
  return { tenant, client: (await signedInClient(system.gateways[gateway]!.baseUrl, tenant)).client };
}

function job(pool: string, overrides: Partial<RpcRequest<"submitJob">> = {}): RpcRequest<"submitJob"> {
  return { type: "shell", command: ["echo", "once"], pool_id: pool, ...overrides };
}

function submitWithKey(client: ComputeClient, key: string, body: unknown): Promise<RawResponse> {
  return client.raw("POST", RPC_ROUTES.submitJob.path, body, { "idempotency-key": key });
}

function retryWithKey(client: ComputeClient, key: string, jobId: string): Promise<RawResponse> {
  return client.raw("POST", RPC_ROUTES.retryJob.path, { job_id: jobId }, { "idempotency-key": key });
}

function envelopeOf(response: RawResponse): Envelope {
  return response.body as Envelope;
}

function newKey(): string {
  return `key-${randomBase62(16)}`;
}

describe("idempotent submit", () => {
  it("a submit without the header is served as before: every one makes a job, and nothing is written for it", async () => {
    const { tenant, client } = await tenantClient();
    for (let index = 0; index < 2; index += 1)
      expect(
        (await client.raw("POST", RPC_ROUTES.submitJob.path, job("plain"))).headers.get("idempotent-replayed"),
      ).toBeNull();
    expect(await listAllJobs(client, "plain")).toHaveLength(2);
    const records = new JsonBucket(await new Kvm(system.gateways[0]!.nc).open(BUCKETS.idempotency), IdempotencyRecord);
    expect(await records.keys(`${tenant.app.app_id}.>`)).toEqual([]);
  });

  it("a repeat with the same key and body answers the first answer, with Idempotent-Replayed: true, and makes no second job", async () => {
    const { client } = await tenantClient();
    const key = newKey();
    const first = await submitWithKey(client, key, job("replay"));
    expect(first.status).toBe(200);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    const again = await submitWithKey(client, key, job("replay"));
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(envelopeOf(again)).toEqual(envelopeOf(first));
    expect((await listAllJobs(client, "replay")).map((item) => item.job_id)).toEqual([
      envelopeOf(first).payload!.job_id,
    ]);
  });

  it("the same key with another body is 422 idempotency.key_reused and makes nothing", async () => {
    const { client } = await tenantClient();
    const key = newKey();
    const first = await submitWithKey(client, key, job("reused"));
    const other = await submitWithKey(client, key, job("reused", { command: ["echo", "another"] }));
    expect(other.status).toBe(422);
    expect(envelopeOf(other).code).toBe("idempotency.key_reused");
    const retried = await retryWithKey(client, key, envelopeOf(first).payload!.job_id as string);
    expect(envelopeOf(retried).code).toBe("idempotency.key_reused");
    expect(await listAllJobs(client, "reused")).toHaveLength(1);
  });

  it("50 requests at once with one key, through two gateways, make exactly one job and all answer its id", async () => {
    const tenant = await createTenant(system.gateways[0]!.nc);
    const clients = [
      (await signedInClient(system.gateways[0]!.baseUrl, tenant)).client,
      (await signedInClient(system.gateways[1]!.baseUrl, tenant)).client,
    ];
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 50 }, (_, index) => submitWithKey(clients[index % 2]!, key, job("together"))),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(50).fill(200));
    const ids = new Set(answers.map((answer) => envelopeOf(answer).payload!.job_id));
    expect(ids.size).toBe(1);
    expect(answers.filter((answer) => answer.headers.get("idempotent-replayed") === null)).toHaveLength(1);
    expect((await listAllJobs(clients[0]!, "together")).map((item) => item.job_id)).toEqual([...ids]);
  });

  it("repeats take the API key's quotas once: the burst's job counts one submit of the hour and holds one place", async () => {
    const { tenant, client } = await tenantClient();
    for (const [quota, code, pool] of [
      [{ maxJobsPerHour: 2 }, "quota.jobs_per_hour_exceeded", "quota-hour"],
      [{ maxConcurrentJobs: 2 }, "quota.concurrent_jobs_exceeded", "quota-running"],
    ] as const) {
      const created = await client.call("createApiKey", { name: pool, ...quota });
      const withKey = system.gateways.map(
        (gateway) => new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id, apiKey: created.key }),
      );
      const key = newKey();
      const answers = await Promise.all(
        Array.from({ length: 20 }, (_, index) => submitWithKey(withKey[index % 2]!, key, job(pool))),
      );
      expect(answers.map((answer) => answer.status)).toEqual(Array(20).fill(200));
      expect(new Set(answers.map((answer) => envelopeOf(answer).payload!.job_id)).size).toBe(1);
      expect((await withKey[0]!.raw("POST", RPC_ROUTES.submitJob.path, job(pool))).status).toBe(200);
      expect(envelopeOf(await withKey[0]!.raw("POST", RPC_ROUTES.submitJob.path, job(pool))).code).toBe(code);
    }
  });

  it("a repeat of a submit whose gateway stopped before the job was made makes the job under the key's job id", async () => {
    const { tenant, client } = await tenantClient();
    const key = newKey();
    const body = job("abandoned");
    const jobId = newJobId(Date.now());
    // The record a gateway leaves when it stops after claiming the key: no answer, its claim given up.
    const parsed = RPC_ROUTES.submitJob.request.parse(body);
    const path = RPC_ROUTES.submitJob.path;
    const records = new JsonBucket(await new Kvm(system.gateways[0]!.nc).open(BUCKETS.idempotency), IdempotencyRecord);
    const scope = { app_id: tenant.app.app_id, business_id: tenant.business.business_id };
    await records.create(idempotencyRecordKey(scope, key), {
      route: path,
      fingerprint: requestFingerprint(path, parsed),
      holder: "idem_stopped",
      claimed_at: 0,
      job_id: jobId,
      answer: null,
    });
    const repeat = await submitWithKey(client, key, body);
    expect(repeat.status).toBe(200);
    expect(repeat.headers.get("idempotent-replayed")).toBe("true");
    // The key's job id, tagged by the scheduler as a job of a self-hosted pool.
    const made = tagJobId(jobId, "self_hosted");
    expect(envelopeOf(repeat).payload!.job_id).toBe(made);
    expect((await listAllJobs(client, "abandoned")).map((item) => item.job_id)).toEqual([made]);
  });

  it.each([
    ["empty", ""],
    ["longer than 255 characters", "k".repeat(256)],
    ["a character outside printable ASCII", "clé"],
    ["a tab", "a\tb"],
  ])("a key that is %s is 400 request.invalid naming the header, and makes nothing", async (_name, key) => {
    const { client } = await tenantClient();
    const answer = await submitWithKey(client, key, job("bad-key"));
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ code: "request.invalid", details: { issues: [{ path: "Idempotency-Key" }] } });
    expect(await listAllJobs(client, "bad-key")).toHaveLength(0);
  });

  it("a key of 255 printable characters, spaces included, is taken", async () => {
    const { client } = await tenantClient();
    const key = `${" ~".repeat(127)}!`;
    expect((await submitWithKey(client, key, job("long-key"))).status).toBe(200);
    expect((await submitWithKey(client, key, job("long-key"))).headers.get("idempotent-replayed")).toBe("true");
    expect(await listAllJobs(client, "long-key")).toHaveLength(1);
  });

  it("another business with the same key gets a job of its own", async () => {
    const [one, two] = [await tenantClient(), await tenantClient(1)];
    const key = newKey();
    const first = await submitWithKey(one.client, key, job("scoped"));
    const second = await submitWithKey(two.client, key, job("scoped"));
    expect(second.status).toBe(200);
    expect(second.headers.get("idempotent-replayed")).toBeNull();
    expect(envelopeOf(second).payload!.job_id).not.toBe(envelopeOf(first).payload!.job_id);
    expect(await listAllJobs(two.client, "scoped")).toHaveLength(1);
  });

  it("a first request the service refused gives the key back: the next request with it is served afresh", async () => {
    const { client } = await tenantClient();
    const key = newKey();
    const refused = await submitWithKey(client, key, job("released", { timeout_seconds: MAX_TIMEOUT_SECONDS + 1 }));
    expect(refused.status).toBe(400);
    const fixed = await submitWithKey(client, key, job("released"));
    expect(fixed.status).toBe(200);
    expect(fixed.headers.get("idempotent-replayed")).toBeNull();
    expect(await listAllJobs(client, "released")).toHaveLength(1);
  });

  it("a key given back after a refusal keeps its job id: a job a waiting repeat made meanwhile is the one the next request finds", async () => {
    const { tenant, client } = await tenantClient();
    const key = newKey();
    const body = job("given-back");
    const path = RPC_ROUTES.submitJob.path;
    const recordKey = idempotencyRecordKey(
      { app_id: tenant.app.app_id, business_id: tenant.business.business_id },
      key,
    );
    const store = new IdempotencyStore(
      new JsonBucket(await new Kvm(system.gateways[0]!.nc).open(BUCKETS.idempotency), IdempotencyRecord),
    );
    // A first request holds the key, still at work on job J.
    const jobId = newJobId(Date.now());
    await store.claim(recordKey, {
      route: path,
      fingerprint: requestFingerprint(path, RPC_ROUTES.submitJob.request.parse(body)),
      holder: "idem_first",
      claimed_at: Date.now(),
      job_id: jobId,
      answer: null,
    });
    // A repeat waits for its answer, stops waiting, and makes J itself (its id tagged as a self-hosted pool's job).
    const made = tagJobId(jobId, "self_hosted");
    const repeat = await submitWithKey(client, key, body);
    expect(envelopeOf(repeat).payload!.job_id).toBe(made);
    // Then the first is refused and gives the key back; the next request with the key must find J, not make another job.
    await store.release(recordKey, "idem_first");
    const next = await submitWithKey(client, key, body);
    expect(next.status).toBe(200);
    expect(envelopeOf(next).payload!.job_id).toBe(made);
    expect((await listAllJobs(client, "given-back")).map((item) => item.job_id)).toEqual([made]);
    // And that request's answer is kept for the repeats after it.
    expect((await submitWithKey(client, key, body)).headers.get("idempotent-replayed")).toBe("true");
  });
});

describe("idempotent retry", () => {
  async function failedJob(pool: string) {
    const { tenant, client } = await tenantClient();
    const node = await FakeNode.register(client, system.gateways[0]!.baseUrl, tenant.app.app_id, { pool_id: pool });
    const { job_id } = await client.call("submitJob", job(pool));
    await expect.poll(async () => (await node.poll(), node.running.size), { timeout: 10_000 }).toBe(1);
    await node.finish(job_id, "failed");
    return { tenant, client, jobId: job_id };
  }

  /** Plays a gateway serving the first retry with `key` right now: its claim, no answer yet. */
  async function claimedRetry(tenant: Tenant, key: string, jobId: string) {
    const path = RPC_ROUTES.retryJob.path;
    const records = new JsonBucket(await new Kvm(system.gateways[0]!.nc).open(BUCKETS.idempotency), IdempotencyRecord);
    const recordKey = idempotencyRecordKey(
      { app_id: tenant.app.app_id, business_id: tenant.business.business_id },
      key,
    );
    await records.create(recordKey, {
      route: path,
      fingerprint: requestFingerprint(path, { job_id: jobId }),
      holder: "idem_busy",
      claimed_at: Date.now(),
      job_id: null,
      answer: null,
    });
    return { records, recordKey };
  }

  it("a repeat that finds the first retry still at work answers its answer once stored", async () => {
    const { tenant, client } = await tenantClient();
    const { job_id } = await client.call("submitJob", job("retry-wait"));
    const { job: stored } = await client.call("retrieveJob", { job_id });
    const key = newKey();
    const { records, recordKey } = await claimedRetry(tenant, key, job_id);
    const repeat = retryWithKey(client, key, job_id);
    await records.mutate(recordKey, (record) => ({ ...record, answer: { job: stored } }));
    const answer = await repeat;
    expect(answer.status).toBe(200);
    expect(answer.headers.get("idempotent-replayed")).toBe("true");
    expect(envelopeOf(answer).payload).toEqual({ job: stored });
  });

  it("a repeat whose first retry is still at work after the wait is 409 idempotency.in_progress with Retry-After, and changes nothing", async () => {
    const { tenant, client } = await tenantClient();
    const { job_id } = await client.call("submitJob", job("retry-busy"));
    const key = newKey();
    await claimedRetry(tenant, key, job_id);
    const answer = await retryWithKey(client, key, job_id);
    expect(answer.status).toBe(409);
    expect(envelopeOf(answer).code).toBe("idempotency.in_progress");
    expect(answer.headers.get("retry-after")).toBe("1");
    expect((await client.call("retrieveJob", { job_id })).job.state).toBe("queued");
  });

  it("a repeat of a retry with the same key answers the first answer and requeues the job once", async () => {
    const { client, jobId } = await failedJob("retry-replay");
    const key = newKey();
    const first = await retryWithKey(client, key, jobId);
    expect(first.status).toBe(200);
    const again = await retryWithKey(client, key, jobId);
    expect(again.status).toBe(200);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(envelopeOf(again)).toEqual(envelopeOf(first));
    const { job } = await client.call("retrieveJob", { job_id: jobId });
    expect(job.timeline.filter((event) => event.reason === "retried")).toHaveLength(1);
  });

  it("retries at once with one key, through two gateways, requeue the job once and all answer the first answer", async () => {
    const { tenant, client, jobId } = await failedJob("retry-together");
    const clients = [client, (await signedInClient(system.gateways[1]!.baseUrl, tenant)).client];
    const key = newKey();
    const answers = await Promise.all(
      Array.from({ length: 10 }, (_, index) => retryWithKey(clients[index % 2]!, key, jobId)),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(10).fill(200));
    expect(answers.filter((answer) => answer.headers.get("idempotent-replayed") === null)).toHaveLength(1);
    for (const answer of answers) expect(envelopeOf(answer)).toEqual(envelopeOf(answers[0]!));
    const { job } = await client.call("retrieveJob", { job_id: jobId });
    expect(job.timeline.filter((event) => event.reason === "retried")).toHaveLength(1);
  });
});

describe("the scheduler's side of a keyed submit", () => {
  it("submits under one job id at once make one job and take the API key's quotas once", async () => {
    const tenant = await createTenant(system.gateways[0]!.nc);
    const nc = system.gateways[0]!.nc;
    const keyId = newId("key");
    const caller = {
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      user_id: tenant.user.user_id,
      role: "admin" as const,
      key_id: keyId,
      quotas: { maxJobsPerHour: 50, maxConcurrentJobs: 50, allowedJobTypes: null },
      operator: false,
    };
    const jobId = newJobId(Date.now());
    const command = { caller, body: RPC_ROUTES.submitJob.request.parse(job("direct")), job_id: jobId };
    const answers = await Promise.all(Array.from({ length: 20 }, () => requestRpc(nc, "jobSubmit", command)));
    // The id given, tagged by the scheduler as a job of a self-hosted pool.
    const made = tagJobId(jobId, "self_hosted");
    expect(new Set(answers.map((answer) => answer.job_id))).toEqual(new Set([made]));
    const quotas = new JsonBucket(await new Kvm(nc).open(BUCKETS.keyQuotas), KeyQuotaRecord);
    const record = (await quotas.get(kvKey(keyId)))!.value;
    expect(Object.keys(record.active)).toEqual([made]);
    expect(windowCount(record.admitted, Date.now())).toBe(1);
  });
});
