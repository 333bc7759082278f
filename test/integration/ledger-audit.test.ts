/**
 * The ledger audit against a real nats-server and the real services: an ended attempt on
 * an operator pool whose metering message was lost is charged once, by the audit, and
 * nothing metering charged or nothing free is ever charged by it.
 */
import { jetstreamManager, type JetStreamManager } from "@nats-io/jetstream";
import { operatorJobKeyFilters } from "../../shared/records/index.js";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import type { Job, ListLedgerResponse } from "../../shared/contract/index.js";
import { BUCKETS, CONSUMERS, STREAMS, subjects } from "../../shared/nats/index.js";
import { metricsRegistry } from "../../shared/runtime/index.js";
import { chargeMicros } from "../../services/billing/metering/charge.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import {
  createTenant,
  signedInClient,
  startBilling,
  startGateway,
  startLogRelay,
  startNodeRegistry,
  startScheduler,
  type RunningGateway,
  type RunningService,
} from "../harness/system.js";

/** The plans file's default plan ("free"). */
const FREE = { included_credit: 10, rates: { cpu_core_hour: 1, memory_gb_hour: 0.1, gpu_hour: 20 } };
/** Each test has an operator pool of its own, so its node sees only its jobs. */
const ENV = { CJS_OPERATOR_POOLS: "audit-lost,audit-metered,audit-free" };
/** A tiny grace: metering still goes first, as the audit waits while metering holds a message of the job. */
const BILLING_ENV = { CJS_LEDGER_AUDIT_GRACE_MS: "100" };
const JOB = { type: "shell", command: ["true"], resources: { cpu: 1, memory_mb: 1024, gpu: 0 } };
const AUDIT_STREAM = `KV_${BUCKETS.jobs}`;

let nats: NatsHarness;
let nc: NatsConnection;
let jsm: JetStreamManager;
let gateway: RunningGateway;
let billing: RunningService;
const services: RunningService[] = [];
let operator: { client: ComputeClient; appId: string };
/** Customers whose ledgers the last test reads again, with their jobs. */
const audited: Array<{ client: ComputeClient; jobIds: string[] }> = [];

beforeAll(async () => {
  nats = await startNats();
  services.push(
    await startScheduler(nats.url, ENV),
    await startNodeRegistry(nats.url, ENV),
    await startLogRelay(nats.url),
  );
  billing = await startBilling(nats.url, BILLING_ENV);
  gateway = await startGateway(nats.url);
  nc = await connect({ servers: nats.url, name: "test-ledger-audit" });
  jsm = await jetstreamManager(nc);
  const tenant = await createTenant(nc, { operator: true });
  operator = { client: (await signedInClient(gateway.baseUrl, tenant)).client, appId: tenant.app.app_id };
}, 60_000);

afterAll(async () => {
  await gateway?.stop();
  await Promise.all([billing, ...services].map((service) => service?.stop().catch(() => undefined)));
  await nc?.close();
  await nats?.stop();
});

async function customer(): Promise<ComputeClient> {
  return (await signedInClient(gateway.baseUrl, await createTenant(nc, { appId: operator.appId }))).client;
}

function operatorNode(pool: string): Promise<FakeNode> {
  return FakeNode.register(operator.client, gateway.baseUrl, operator.appId, { name: `node-${pool}`, pool_id: pool });
}

async function runOnce(node: FakeNode, jobId: string): Promise<void> {
  await expect
    .poll(async () => (await node.poll(1)).some((job) => job.job_id === jobId), { timeout: 20_000, interval: 50 })
    .toBe(true);
  await node.finish(jobId);
}

async function retrieve(client: ComputeClient, jobId: string): Promise<Job> {
  return (await client.call("retrieveJob", { job_id: jobId })).job;
}

function ledger(client: ComputeClient): Promise<ListLedgerResponse> {
  return client.call("listLedger", { limit: 200 });
}

async function waitForEntry(client: ComputeClient, entryId: string): Promise<void> {
  await expect
    .poll(async () => (await ledger(client)).items.map((entry) => entry.entry_id), { timeout: 30_000, interval: 50 })
    .toContain(entryId);
}

/** The charge of an attempt, recomputed from the job's own timeline at the free plan's rates. */
function expectedCharge(job: Job, attempt: number): number {
  const start = job.timeline.find((event) => event.attempt === attempt && event.state === "running")!;
  const end = job.timeline.find((event) => event.attempt === attempt && event.state === "succeeded")!;
  return chargeMicros(Date.parse(end.at) - Date.parse(start.at), job.resources, FREE.rates) / 1e6;
}

async function repairs(): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("cjs_billing_ledger_repairs_total")?.get();
  return (metric?.values ?? []).reduce((total, sample) => total + sample.value, 0);
}

/** Every job record revision written so far has been delivered to the audit and acknowledged. */
async function auditSettled(): Promise<void> {
  await expect
    .poll(
      async () => {
        const info = await jsm.consumers.info(AUDIT_STREAM, CONSUMERS.billingLedgerAudit);
        return info.num_pending + info.num_ack_pending;
      },
      { timeout: 30_000, interval: 50 },
    )
    .toBe(0);
}

describe("the ledger audit", () => {
  it("charges once, and counts as a repair, an ended attempt on an operator pool whose metering message was lost", async () => {
    const client = await customer();
    const node = await operatorNode("audit-lost");
    const before = await repairs();
    const { job_id } = await client.call("submitJob", { ...JOB, pool_id: "audit-lost" });

    // The attempt ends while billing is down; then its metering message is lost.
    await billing.stop();
    await runOnce(node, job_id);
    expect(await jsm.streams.getMessage(STREAMS.metering, { last_by_subj: subjects.metering(job_id) })).not.toBeNull();
    await jsm.streams.purge(STREAMS.metering, { filter: subjects.metering(job_id) });
    billing = await startBilling(nats.url, BILLING_ENV);

    await waitForEntry(client, `job.${job_id}.1`);
    await auditSettled();
    const charge = expectedCharge(await retrieve(client, job_id), 1);
    const { balance, items } = await ledger(client);
    expect(items.filter((entry) => entry.kind === "debit")).toEqual([
      expect.objectContaining({ job_id, attempt: 1, amount: -charge }),
    ]);
    expect(balance).toBe(FREE.included_credit - charge);
    expect((await repairs()) - before).toBe(1);
    audited.push({ client, jobIds: [job_id] });
  });

  it("does not charge again, nor count a repair for, an attempt that metering charged", async () => {
    const client = await customer();
    const node = await operatorNode("audit-metered");
    const before = await repairs();
    const { job_id } = await client.call("submitJob", { ...JOB, pool_id: "audit-metered" });
    await runOnce(node, job_id);

    await waitForEntry(client, `job.${job_id}.1`);
    const metered = await ledger(client);
    await auditSettled();
    expect(await ledger(client)).toEqual(metered);
    expect(metered.items.filter((entry) => entry.job_id === job_id)).toHaveLength(1);
    expect(metered.balance).toBe(FREE.included_credit - expectedCharge(await retrieve(client, job_id), 1));
    expect(await repairs()).toBe(before);
    audited.push({ client, jobIds: [job_id] });
  });

  it("never charges a job on the business's own pool or an attempt cancelled before its start", async () => {
    const client = await customer();
    const before = await repairs();
    const own = await client.call("submitJob", { ...JOB, pool_id: "mine" });
    const { app_id } = await retrieve(client, own.job_id);
    await runOnce(await FakeNode.register(client, gateway.baseUrl, app_id, { pool_id: "mine" }), own.job_id);
    expect((await retrieve(client, own.job_id)).state).toBe("succeeded");

    await operatorNode("audit-free");
    const early = await client.call("submitJob", { ...JOB, pool_id: "audit-free" });
    await expect
      .poll(async () => (await retrieve(client, early.job_id)).state, { timeout: 20_000, interval: 50 })
      .toBe("assigned");
    await client.call("cancelJob", { job_id: early.job_id });

    await auditSettled();
    expect((await ledger(client)).items.filter((entry) => entry.kind === "debit")).toEqual([]);
    expect(await repairs()).toBe(before);
    audited.push({ client, jobIds: [own.job_id, early.job_id] });
  });

  it("reading every job record again, with a new audit consumer, charges nothing twice", async () => {
    const ledgers = await Promise.all(audited.map(({ client }) => ledger(client)));
    const before = await repairs();

    await billing.stop();
    await jsm.consumers.delete(AUDIT_STREAM, CONSUMERS.billingLedgerAudit);
    billing = await startBilling(nats.url, BILLING_ENV);
    await auditSettled();

    // Every revision of an operator pool's job was read again, and no other: a self-hosted job is never charged.
    const { delivered } = await jsm.consumers.info(AUDIT_STREAM, CONSUMERS.billingLedgerAudit);
    const stored = (await jsm.streams.info(AUDIT_STREAM, { subjects_filter: ">" })).state.subjects ?? {};
    const ofOperatorJobs = Object.entries(stored)
      .filter(([subject]) =>
        operatorJobKeyFilters().some((filter) => subject.startsWith(`$KV.cjs_jobs.${filter.slice(0, 3)}.`)),
      )
      .reduce((sum, [, count]) => sum + count, 0);
    expect(ofOperatorJobs).toBeGreaterThan(0);
    expect(delivered.consumer_seq).toBeGreaterThanOrEqual(ofOperatorJobs);
    expect(delivered.consumer_seq).toBeLessThan((await jsm.streams.info(AUDIT_STREAM)).state.messages);
    expect(await Promise.all(audited.map(({ client }) => ledger(client)))).toEqual(ledgers);
    expect(await repairs()).toBe(before);
  });
});
