/**
 * The per-key monthly compute budget against a real nats-server and the real services: a
 * key's spend is what billing debits for the jobs submitted with it, counted once; past
 * its budget, submits and retries charged to that key on operator pools answer 402 while
 * the business's other keys and sessions go on.
 */
import { jetstream } from "@nats-io/jetstream";
import { jobKey } from "../../shared/records/index.js";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import type { Job, LedgerEntry, RpcRequest } from "../../shared/contract/index.js";
import { subjects } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

const POOL = "op-budget";
const ENV = { CJS_OPERATOR_POOLS: `default,${POOL}` };
/** Two cores and a gigabyte: every millisecond of a run costs more than half a micro-credit, so a run is never free. */
const JOB = { type: "shell", command: ["true"], resources: { cpu: 2, memory_mb: 1024, gpu: 0 }, pool_id: POOL };
/** One micro-credit: any charged run spends it. */
const TINY_BUDGET = 0.000001;

let nats: NatsHarness;
let system: RunningSystem;
let nc: NatsConnection;
let node: FakeNode;
let customer: Tenant;
let user: ComputeClient;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 }, ENV);
  nc = await connect({ servers: nats.url, name: "test-key-budget" });
  const operator = await createTenant(nc, { operator: true });
  const { client: operatorAdmin } = await signedInClient(system.gateways[0]!.baseUrl, operator);
  node = await FakeNode.register(operatorAdmin, system.gateways[0]!.baseUrl, operator.app.app_id, {
    name: "budget-node",
    pool_id: POOL,
  });
  customer = await createTenant(nc, { appId: operator.app.app_id });
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, customer));
}, 60_000);

afterAll(async () => {
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

async function newKey(body: Omit<RpcRequest<"createApiKey">, "name"> = {}) {
  const created = await user.call("createApiKey", { name: "budget test", ...body });
  return { keyId: created.key_id, client: user.with({ apiKey: created.key }) };
}

async function retrieve(jobId: string): Promise<Job> {
  return (await user.call("retrieveJob", { job_id: jobId })).job;
}

async function debitOf(jobId: string, attempt = 1): Promise<LedgerEntry> {
  const find = async () =>
    (await user.call("listLedger", { limit: 200 })).items.find((entry) => entry.entry_id === `job.${jobId}.${attempt}`);
  await expect.poll(find, { timeout: 30_000, interval: 100 }).toBeDefined();
  return (await find())!;
}

/** Runs a job to its end on the operator's node; it is running (a request later) before it ends, so it is charged. */
async function run(jobId: string, outcome: "succeeded" | "failed" = "succeeded"): Promise<void> {
  await expect
    .poll(async () => (await node.poll(1)).some((job) => job.job_id === jobId), { timeout: 20_000, interval: 50 })
    .toBe(true);
  await expect.poll(async () => (await retrieve(jobId)).state, { timeout: 5000, interval: 20 }).toBe("running");
  await node.finish(jobId, outcome);
}

async function spentOf(keyId: string): Promise<number | null | undefined> {
  return (await user.call("listApiKeys", {})).items.find((item) => item.key_id === keyId)?.spent_credits_this_month;
}

function startOfNextMonth(): string {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1)).toISOString();
}

describe("a key's monthly budget", () => {
  it("counts what billing debits for the key's jobs, once, even when a metering message comes again", async () => {
    const { keyId, client } = await newKey({ budget_credits_per_month: 1000 });
    const first = await client.call("submitJob", JOB);
    await run(first.job_id);
    const debit = await debitOf(first.job_id);
    await expect.poll(() => spentOf(keyId), { timeout: 10_000, interval: 50 }).toBe(-debit.amount);

    const key = jobKey(customer.app.app_id, customer.business.business_id, first.job_id);
    await jetstream(nc).publish(
      subjects.metering(first.job_id),
      JSON.stringify({ job_key: key, job_id: first.job_id, attempt: 1, reason: "result" }),
      {
        msgID: `again-${randomBase62(8)}`,
      },
    );
    // A later job's debit shows the copy was handled: one billing replica takes the messages in order.
    const second = await client.call("submitJob", JOB);
    await run(second.job_id);
    const secondDebit = await debitOf(second.job_id);
    await expect
      .poll(() => spentOf(keyId), { timeout: 10_000, interval: 50 })
      .toBeCloseTo(-(debit.amount + secondDebit.amount), 6);
  });

  it("refuses the key's next submit on an operator pool with 402 quota.key_budget_exhausted, while its own pool, other keys and sessions go on", async () => {
    const spender = await newKey({ budget_credits_per_month: TINY_BUDGET });
    const other = await newKey();
    const { job_id } = await spender.client.call("submitJob", JOB);
    await run(job_id);
    const debit = await debitOf(job_id);
    await expect.poll(() => spentOf(spender.keyId), { timeout: 10_000, interval: 50 }).toBe(-debit.amount);

    const before = (await user.call("listJobs", { pool_id: POOL, limit: 200 })).items.length;
    const refused = await spender.client.raw("POST", "/api/compute/jobs/submit", JOB);
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({
      status: "ERROR",
      code: "quota.key_budget_exhausted",
      details: { key_id: spender.keyId, budget: TINY_BUDGET, spent: -debit.amount, resets_at: startOfNextMonth() },
    });
    expect(refused.headers.get("retry-after")).toBeNull();
    expect((await user.call("listJobs", { pool_id: POOL, limit: 200 })).items).toHaveLength(before);

    expect((await spender.client.call("submitJob", { ...JOB, pool_id: "own-pool" })).state).toBe("queued");
    for (const client of [other.client, user]) {
      const accepted = await client.call("submitJob", JOB);
      expect(accepted.state).toBe("queued");
      // Keep the node's slots for the tests that follow.
      await user.call("cancelJob", { job_id: accepted.job_id });
    }
  });

  it("refuses a retry of the key's job, whoever asks, until the budget is raised", async () => {
    const spender = await newKey({ budget_credits_per_month: TINY_BUDGET });
    const { job_id } = await spender.client.call("submitJob", JOB);
    await run(job_id, "failed");
    await debitOf(job_id);
    await expect
      .poll(async () => (await spentOf(spender.keyId)) ?? 0, { timeout: 10_000, interval: 50 })
      .toBeGreaterThanOrEqual(TINY_BUDGET);

    for (const client of [spender.client, user]) {
      const refused = await client.raw("POST", "/api/compute/jobs/retry", { job_id });
      expect(refused.status).toBe(402);
      expect(refused.body).toMatchObject({ code: "quota.key_budget_exhausted", details: { key_id: spender.keyId } });
    }
    expect(await retrieve(job_id)).toMatchObject({ state: "failed", attempt: 1 });

    await user.call("updateApiKey", { key_id: spender.keyId, budget_credits_per_month: 1000 });
    expect((await spender.client.call("retryJob", { job_id })).job).toMatchObject({ state: "queued" });
    await user.call("cancelJob", { job_id });
  });

  it("shows another business none of the key's spend, and does not refuse that business's own key for it", async () => {
    const spender = await newKey({ budget_credits_per_month: TINY_BUDGET });
    const { job_id } = await spender.client.call("submitJob", JOB);
    await run(job_id);
    await debitOf(job_id);

    const neighbour = await createTenant(nc, { appId: customer.app.app_id });
    const { client: neighbourUser } = await signedInClient(system.gateways[0]!.baseUrl, neighbour);
    const neighbourKey = await neighbourUser.call("createApiKey", {
      name: "neighbour",
      budget_credits_per_month: TINY_BUDGET,
    });
    expect(
      (await neighbourUser.call("listApiKeys", {})).items.map((item) => [item.key_id, item.spent_credits_this_month]),
    ).toEqual([[neighbourKey.key_id, 0]]);
    expect((await neighbourUser.with({ apiKey: neighbourKey.key }).call("submitJob", JOB)).state).toBe("queued");
  });
});
