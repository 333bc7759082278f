/**
 * The operator's own business is not billed, on the real services: its jobs on operator
 * pools pass the credit gate with no credit and over the plan's limits, are never charged,
 * and its subscription says so. A customer on the same pool is billed as before.
 */
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { requestRpc, STREAMS, subjects } from "../../shared/nats/index.js";
import { errorCodeOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { waitUntilAudited } from "../harness/ledger-audit.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

/** A short audit grace, so the ledger audit looks at each ended job soon after metering. */
const ENV = { CJS_OPERATOR_POOLS: "default", CJS_LEDGER_AUDIT_GRACE_MS: "100" };
/** Over the default ("free") plan's 2 cores per job on operator pools. */
const BIG_JOB = { type: "shell", command: ["true"], resources: { cpu: 4, memory_mb: 1024, gpu: 0 } };
const JOB = { ...BIG_JOB, resources: { ...BIG_JOB.resources, cpu: 1 } };

let nats: NatsHarness;
let system: RunningSystem;
let nc: NatsConnection;
let operatorTenant: Tenant;
let operator: ComputeClient;
let customer: ComputeClient;
let customerTenant: Tenant;
let node: FakeNode;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 }, ENV);
  nc = await connect({ servers: nats.url, name: "test-operator-billing" });
  operatorTenant = await createTenant(nc, { operator: true });
  operator = (await signedInClient(system.gateways[0]!.baseUrl, operatorTenant)).client;
  customerTenant = await createTenant(nc, { appId: operatorTenant.app.app_id });
  customer = (await signedInClient(system.gateways[0]!.baseUrl, customerTenant)).client;
  node = await FakeNode.register(operator, system.gateways[0]!.baseUrl, operatorTenant.app.app_id, {
    pool_id: "default",
    capacity: { cpu: 8, memory_mb: 8192, gpu: 0, slots: 4 },
  });
}, 60_000);

afterAll(async () => {
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

async function creditSet(tenant: Tenant, amount: number) {
  return requestRpc(nc, "adminCreditSet", { business_id: tenant.business.business_id, amount });
}

async function runToEnd(jobId: string): Promise<void> {
  await expect
    .poll(async () => (await node.poll(1)).some((job) => job.job_id === jobId), { timeout: 20_000, interval: 50 })
    .toBe(true);
  await node.finish(jobId);
}

/** Billing removes a job's metering message once it has settled the attempt (charged or free). */
async function waitUntilMetered(jobId: string): Promise<void> {
  const jsm = await jetstreamManager(nc);
  await expect
    .poll(async () => jsm.streams.getMessage(STREAMS.metering, { last_by_subj: subjects.metering(jobId) }), {
      timeout: 30_000,
      interval: 100,
    })
    .toBeNull();
}

describe("the operator's own business", () => {
  it("runs jobs on an operator pool with no credit and over the plan's limits, and neither metering nor the ledger audit charges them", async () => {
    await creditSet(operatorTenant, 0);
    const big = await operator.call("submitJob", { ...BIG_JOB, pool_id: "default" });
    expect(big.state).toBe("queued");
    await runToEnd(big.job_id);
    await waitUntilMetered(big.job_id);
    await waitUntilAudited(nc);

    const ledger = await operator.call("listLedger", { limit: 200 });
    expect(ledger.items.filter((entry) => entry.kind === "debit")).toEqual([]);
    expect(ledger.balance).toBe(0);
  });

  it("says so in its subscription, while a customer's says it is billed", async () => {
    expect(await operator.call("getSubscription", {})).toMatchObject({ operator: true, usage_this_period: 0 });
    expect(await customer.call("getSubscription", {})).toMatchObject({ operator: false, plan: { billed: true } });
  });
});

describe("a customer on the same operator pool", () => {
  it("is refused over the plan's limits and without credit, and charged for a run", async () => {
    expect(await errorCodeOf(customer.call("submitJob", { ...BIG_JOB, pool_id: "default" }))).toBe(
      "plan.limit_exceeded",
    );
    const { job_id } = await customer.call("submitJob", { ...JOB, pool_id: "default" });
    await runToEnd(job_id);
    await waitUntilMetered(job_id);
    expect((await customer.call("listLedger", { limit: 200 })).items.map((entry) => entry.entry_id)).toContain(
      `job.${job_id}.1`,
    );

    await creditSet(customerTenant, 0);
    expect(await errorCodeOf(customer.call("submitJob", { ...JOB, pool_id: "default" }))).toBe(
      "resource.limit_reached",
    );
  });
});
