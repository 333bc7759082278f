/**
 * Compute credit against a real nats-server and the real services: metering of ended
 * attempts on operator pools, the 402 gate on submit, plan limits, the ledger list and the
 * operator's `credit set`.
 */
import { execFile } from "node:child_process";
import { jobKey } from "../../shared/records/index.js";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { jetstream } from "@nats-io/jetstream";
import { connect, type NatsConnection, type Subscription } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { type Job, type LedgerEntry } from "../../shared/contract/index.js";
import { requestRpc, subjects } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { chargeMicros } from "../../services/billing/metering/charge.js";
import { errorCodeOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import {
  createTenant,
  signedInClient,
  startBilling,
  startSystem,
  type RunningSystem,
  type Tenant,
} from "../harness/system.js";
import { programArgs } from "../harness/programs.js";
import { runningJob } from "../harness/running-job.js";

const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));
/** The plans file's default plan ("free"). */
const FREE = {
  included_credit: 10,
  rates: { cpu_core_hour: 1, memory_gb_hour: 0.1, gpu_hour: 20 },
  max_job_cpu: 2,
  max_job_timeout_seconds: 3600,
};
/** Each test uses an operator pool of its own, so its nodes see only its jobs. */
const OPERATOR_POOLS = ["default", "op-debit", "op-cancel", "op-lost", "op-gate", "op-list", "op-retry"];
/** Fast liveness, so a node lost is noticed within seconds. */
const ENV = {
  CJS_OPERATOR_POOLS: OPERATOR_POOLS.join(","),
  CJS_HEARTBEAT_INTERVAL_SECONDS: "1",
  CJS_HEARTBEAT_MISSES_OFFLINE: "2",
};
const HEARTBEAT_EVERY_MS = 250;
const JOB = { type: "shell", command: ["true"], resources: { cpu: 1, memory_mb: 1024, gpu: 0 } };

let nats: NatsHarness;
let system: RunningSystem;
let nc: NatsConnection;
let operator: { client: ComputeClient; appId: string };
let customer: Tenant;
let user: ComputeClient;
/** Every metering message published, as seen by a plain subscriber: `<job id>#<attempt>`. */
const published: string[] = [];
let observer: Subscription;
const heartbeats = new Set<() => void>();

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 }, ENV);
  nc = await connect({ servers: nats.url, name: "test-billing" });
  observer = nc.subscribe(subjects.meteringAll(), {
    callback: (_error, msg) => {
      const { job_id, attempt } = msg.json<{ job_id: string; attempt: number }>();
      published.push(`${job_id}#${attempt}`);
    },
  });
  operator = await operatorAdmin(nc);
  customer = await createTenant(nc, { appId: operator.appId });
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, customer));
}, 60_000);

afterAll(async () => {
  for (const stop of heartbeats) stop();
  observer?.unsubscribe();
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

/** An admin of a new operator business (in its own app, where the tests make their customers): it may add nodes to operator pools. */
async function operatorAdmin(connection: NatsConnection): Promise<{ client: ComputeClient; appId: string }> {
  const tenant = await createTenant(connection, { operator: true });
  const { client } = await signedInClient(system.gateways[0]!.baseUrl, tenant);
  return { client, appId: tenant.app.app_id };
}

/** A node that heartbeats until the returned stop, as an agent would. */
async function liveNode(
  owner: ComputeClient,
  appId: string,
  pool: string,
): Promise<{ node: FakeNode; stop: () => void }> {
  const node = await FakeNode.register(owner, system.gateways[0]!.baseUrl, appId, {
    name: `node-${pool}`,
    pool_id: pool,
  });
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  const beat = () => {
    void node
      .heartbeat()
      .catch(() => undefined)
      .finally(() => {
        if (!stopped) timer = setTimeout(beat, HEARTBEAT_EVERY_MS);
      });
  };
  beat();
  const stop = () => {
    stopped = true;
    clearTimeout(timer);
    heartbeats.delete(stop);
  };
  heartbeats.add(stop);
  return { node, stop };
}

function operatorNode(pool: string) {
  return liveNode(operator.client, operator.appId, pool);
}

let debitNode: FakeNode | undefined;
/** The one node of the pool `op-debit`, shared by the tests that use it. */
async function debitPoolNode(): Promise<FakeNode> {
  debitNode ??= (await operatorNode("op-debit")).node;
  return debitNode;
}

async function creditSet(businessId: string, amount: number) {
  return requestRpc(nc, "adminCreditSet", { business_id: businessId, amount });
}

async function retrieve(client: ComputeClient, jobId: string): Promise<Job> {
  return (await client.call("retrieveJob", { job_id: jobId })).job;
}

async function entries(client: ComputeClient): Promise<LedgerEntry[]> {
  return (await client.call("listLedger", { limit: 200 })).items;
}

async function waitForEntry(client: ComputeClient, entryId: string): Promise<LedgerEntry> {
  await expect
    .poll(async () => (await entries(client)).map((entry) => entry.entry_id), { timeout: 30_000, interval: 100 })
    .toContain(entryId);
  return (await entries(client)).find((entry) => entry.entry_id === entryId)!;
}

/** The charge of an attempt, recomputed from the job's own timeline at the free plan's rates. */
function expectedCharge(job: Job, attempt: number): number {
  const start = job.timeline.find((event) => event.attempt === attempt && event.state === "running")!;
  const end = job.timeline.find(
    (event) => event.attempt === attempt && ["succeeded", "failed", "timed_out", "cancelled"].includes(event.state),
  )!;
  return chargeMicros(Date.parse(end.at) - Date.parse(start.at), job.resources, FREE.rates) / 1e6;
}

async function runOnce(node: FakeNode, jobId: string, outcome: "succeeded" | "failed" = "succeeded"): Promise<void> {
  await expect
    .poll(async () => (await node.poll(1)).some((job) => job.job_id === jobId), { timeout: 20_000, interval: 50 })
    .toBe(true);
  await node.finish(jobId, outcome);
}

describe("metering", () => {
  it("debits a job on an operator pool once, as an entry its owner sees, even when its metering message comes again", async () => {
    const node = await debitPoolNode();
    const { job_id } = await user.call("submitJob", { ...JOB, pool_id: "op-debit" });
    await runOnce(node, job_id);

    const debit = await waitForEntry(user, `job.${job_id}.1`);
    const job = await retrieve(user, job_id);
    const charge = expectedCharge(job, 1);
    expect(debit).toMatchObject({
      kind: "debit",
      job_id,
      attempt: 1,
      amount: -charge,
      balance_after: FREE.included_credit - charge,
    });
    expect(debit.usage).toMatchObject({ cpu: 1, memory_mb: 1024, gpu: 0, plan_id: "free", rates: FREE.rates });
    expect(published).toContain(`${job_id}#1`);

    // The same message again, under new message ids so the stream keeps both copies.
    const key = jobKey(customer.app.app_id, customer.business.business_id, job_id);
    const js = jetstream(nc);
    for (const reason of ["result", "cancel"]) {
      await js.publish(subjects.metering(job_id), JSON.stringify({ job_key: key, job_id, attempt: 1, reason }), {
        msgID: `again-${randomBase62(8)}`,
      });
    }
    // A later job's debit shows the copies were handled (one billing replica takes messages in order).
    const next = await user.call("submitJob", { ...JOB, pool_id: "op-debit" });
    await runOnce(node, next.job_id);
    await waitForEntry(user, `job.${next.job_id}.1`);
    const debits = (await entries(user)).filter((entry) => entry.job_id === job_id);
    expect(debits).toHaveLength(1);
  });

  it("never charges a job on the business's own pool", async () => {
    const { node } = await liveNode(user, customer.app.app_id, "mine");
    const { job_id } = await user.call("submitJob", { ...JOB, pool_id: "mine" });
    await runOnce(node, job_id);
    expect((await retrieve(user, job_id)).state).toBe("succeeded");

    const opNode = await debitPoolNode();
    const later = await user.call("submitJob", { ...JOB, pool_id: "op-debit" });
    await runOnce(opNode, later.job_id);
    await waitForEntry(user, `job.${later.job_id}.1`);
    expect(published.some((id) => id.startsWith(`${job_id}#`))).toBe(false);
    expect((await entries(user)).some((entry) => entry.job_id === job_id)).toBe(false);
  });

  it("does not charge a cancel before the start, and charges a cancel after it", async () => {
    const { node } = await operatorNode("op-cancel");
    const before = await user.call("submitJob", { ...JOB, pool_id: "op-cancel" });
    await expect
      .poll(async () => (await retrieve(user, before.job_id)).state, { timeout: 20_000, interval: 50 })
      .toBe("assigned");
    await user.call("cancelJob", { job_id: before.job_id });

    const after = await user.call("submitJob", { ...JOB, pool_id: "op-cancel" });
    await expect
      .poll(async () => (await node.poll(1)).some((job) => job.job_id === after.job_id), {
        timeout: 20_000,
        interval: 50,
      })
      .toBe(true);
    expect((await runningJob(user, after.job_id)).state).toBe("running");
    await user.call("cancelJob", { job_id: after.job_id });

    const debit = await waitForEntry(user, `job.${after.job_id}.1`);
    expect(debit.amount).toBe(-expectedCharge(await retrieve(user, after.job_id), 1));
    expect((await entries(user)).some((entry) => entry.job_id === before.job_id)).toBe(false);
    expect(published.some((id) => id.startsWith(`${before.job_id}#`))).toBe(false);
  });

  it("does not charge an attempt whose node was lost, and charges the attempt that ran it to the end", async () => {
    const first = await operatorNode("op-lost");
    const { job_id } = await user.call("submitJob", { ...JOB, pool_id: "op-lost", max_attempts: 3 });
    await expect
      .poll(async () => (await first.node.poll(1)).some((job) => job.job_id === job_id), {
        timeout: 20_000,
        interval: 50,
      })
      .toBe(true);
    const second = await operatorNode("op-lost");
    first.stop();

    await runOnce(second.node, job_id);
    const job = await retrieve(user, job_id);
    expect(job).toMatchObject({ state: "succeeded", attempt: 2 });
    expect(job.timeline.some((event) => event.attempt === 1 && event.reason === "node_lost")).toBe(true);

    const debit = await waitForEntry(user, `job.${job_id}.2`);
    expect(debit.amount).toBe(-expectedCharge(job, 2));
    expect((await entries(user)).filter((entry) => entry.job_id === job_id).map((entry) => entry.attempt)).toEqual([2]);
  });
});

describe("the credit gate on submit", () => {
  it("answers 402 on an operator pool after credit set 0, and accepts a job on the business's own pool", async () => {
    const tenant = await createTenant(nc, { appId: operator.appId });
    const { client } = await signedInClient(system.gateways[0]!.baseUrl, tenant);
    expect((await client.call("submitJob", { ...JOB, pool_id: "op-gate" })).state).toBe("queued");

    const set = await creditSet(tenant.business.business_id, 0);
    expect(set).toMatchObject({
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      previous_balance: FREE.included_credit,
      balance: 0,
    });
    const refused = await client.raw("POST", "/api/compute/jobs/submit", { ...JOB, pool_id: "op-gate" });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ status: "ERROR", code: "resource.limit_reached" });
    expect((await client.call("submitJob", { ...JOB, pool_id: "own-pool" })).state).toBe("queued");
    expect((await client.call("listJobs", { pool_id: "op-gate" })).items).toHaveLength(1);

    await creditSet(tenant.business.business_id, 2.5);
    expect((await client.call("submitJob", { ...JOB, pool_id: "op-gate" })).state).toBe("queued");
  });

  it("answers 402 to a retry on an operator pool once credit is spent, and leaves the job as it was", async () => {
    const tenant = await createTenant(nc, { appId: operator.appId });
    const { client } = await signedInClient(system.gateways[0]!.baseUrl, tenant);
    const { node } = await operatorNode("op-retry");
    const { job_id } = await client.call("submitJob", { ...JOB, pool_id: "op-retry" });
    await runOnce(node, job_id, "failed");
    await expect
      .poll(async () => (await retrieve(client, job_id)).state, { timeout: 10_000, interval: 50 })
      .toBe("failed");

    await creditSet(tenant.business.business_id, 0);
    const refused = await client.raw("POST", "/api/compute/jobs/retry", { job_id });
    expect(refused.status).toBe(402);
    expect(refused.body).toMatchObject({ status: "ERROR", code: "resource.limit_reached" });
    expect(await retrieve(client, job_id)).toMatchObject({ state: "failed", attempt: 1 });

    await creditSet(tenant.business.business_id, 1);
    expect((await client.call("retryJob", { job_id })).job).toMatchObject({ state: "queued" });
  });

  it("refuses a job above the plan's limits on an operator pool with 403 plan.limit_exceeded, but not on the business's own pool", async () => {
    const tooManyCores = await user.raw("POST", "/api/compute/jobs/submit", {
      ...JOB,
      pool_id: "op-gate",
      resources: { cpu: FREE.max_job_cpu + 1, memory_mb: 512, gpu: 0 },
    });
    expect(tooManyCores.status).toBe(403);
    expect(tooManyCores.body).toMatchObject({
      code: "plan.limit_exceeded",
      details: { limit: "max_job_cpu", max: FREE.max_job_cpu },
    });
    const tooLong = await user.raw("POST", "/api/compute/jobs/submit", {
      ...JOB,
      pool_id: "op-gate",
      timeout_seconds: FREE.max_job_timeout_seconds + 1,
    });
    expect(tooLong.status).toBe(403);
    expect(tooLong.body).toMatchObject({ code: "plan.limit_exceeded", details: { limit: "max_job_timeout_seconds" } });
    expect(
      (
        await user.call("submitJob", {
          ...JOB,
          pool_id: "own-pool",
          resources: { cpu: 16, memory_mb: 512, gpu: 0 },
          timeout_seconds: 86_400,
        })
      ).state,
    ).toBe("queued");
  });
});

describe("the ledger list", () => {
  it("shows a business its own entries, newest first with a cursor, and nothing of another tenant's", async () => {
    const tenant = await createTenant(nc, { appId: operator.appId });
    const { client } = await signedInClient(system.gateways[0]!.baseUrl, tenant);
    await creditSet(tenant.business.business_id, 50);
    await creditSet(tenant.business.business_id, 20);
    const all = await client.call("listLedger", {});
    expect(all.balance).toBe(20);
    expect(all.items.map((entry) => [entry.kind, entry.amount, entry.balance_after])).toEqual([
      ["set", -30, 20],
      ["set", 40, 50],
      ["grant", FREE.included_credit, FREE.included_credit],
    ]);
    expect(all.next_cursor).toBeNull();

    const first = await client.call("listLedger", { limit: 2 });
    expect(first.items.map((entry) => entry.entry_id)).toEqual(all.items.slice(0, 2).map((entry) => entry.entry_id));
    const second = await client.call("listLedger", { limit: 2, cursor: first.next_cursor! });
    expect(second.items.map((entry) => entry.entry_id)).toEqual([all.items[2]!.entry_id]);
    expect(second.next_cursor).toBeNull();

    // The customer of the metering tests has debits and sets of its own; neither business sees the other's.
    await creditSet(customer.business.business_id, 100);
    const customers = await entries(user);
    const theirs = new Set(all.items.map((entry) => entry.entry_id));
    expect(customers.some((entry) => entry.kind === "debit")).toBe(true);
    expect(customers.filter((entry) => entry.kind !== "grant" && theirs.has(entry.entry_id))).toEqual([]);
    expect((await entries(client)).map((entry) => entry.entry_id)).toEqual(all.items.map((entry) => entry.entry_id));
  });
});

describe("credit set, the operator command", () => {
  const run = promisify(execFile);
  const admin = (...args: string[]) =>
    run(process.execPath, [...programArgs("services/admin/main.ts"), ...args, "--nats", nats.url], {
      cwd: REPO_ROOT,
    });

  it("sets a business's balance and says so; an unknown business or a bad amount is refused", async () => {
    const tenant = await createTenant(nc, { appId: operator.appId });
    const { stdout } = await admin("credit", "set", "--business", tenant.business.business_id, "--amount", "7.25");
    expect(stdout.trim()).toBe(
      `set the credit of business ${tenant.business.business_id} (app ${tenant.app.app_id}) to 7.25 (was ${FREE.included_credit})`,
    );
    const { client } = await signedInClient(system.gateways[0]!.baseUrl, tenant);
    expect((await client.call("listLedger", {})).balance).toBe(7.25);

    const unknown = await admin("credit", "set", "--business", "biz_00000000000000000000", "--amount", "1").catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(unknown).toMatchObject({ code: 1, stderr: expect.stringContaining("resource.not_found") });
    const bad = await admin("credit", "set", "--business", tenant.business.business_id, "--amount", "ten").catch(
      (error: { code: number; stderr: string }) => error,
    );
    expect(bad).toMatchObject({ code: 2, stderr: expect.stringContaining("--amount: a decimal number") });
    expect((await client.call("listLedger", {})).balance).toBe(7.25);
  }, 60_000);
});

describe("with billing stopped", () => {
  it("accepts a job on the business's own pool and answers 503 on an operator pool", async () => {
    await system.billing.stop();
    try {
      expect((await user.call("submitJob", { ...JOB, pool_id: "own-pool" })).state).toBe("queued");
      const refused = await user.raw("POST", "/api/compute/jobs/submit", { ...JOB, pool_id: "op-gate" });
      expect(refused.status).toBe(503);
      expect(refused.body).toMatchObject({ code: "service.unavailable" });
      expect(await errorCodeOf(user.call("listLedger", {}))).toBe("service.unavailable");
    } finally {
      system.billing = await startBilling(nats.url, ENV);
    }
    expect((await user.call("submitJob", { ...JOB, pool_id: "op-gate" })).state).toBe("queued");
  });
});
