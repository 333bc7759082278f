/**
 * Metering under faults: two billing replicas run as real processes and one is SIGKILLed
 * while jobs end; metering messages are also published again. Every attempt must still be
 * debited exactly once, and the balance must be the sum of the entries.
 */
import { jetstream, jetstreamManager } from "@nats-io/jetstream";
import { jobKey } from "../../shared/records/index.js";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { CONSUMERS, encodeJson, requestRpc, STREAMS, subjects } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { chargeMicros } from "../../services/billing/metering/charge.js";
import { FakeNode } from "../harness/fake-node.js";
import { listAllLedgerEntries } from "../harness/listing.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { driveNodes, type NodeDriver } from "../harness/node-driver.js";
import { startServiceProcess, type ServiceProcess } from "../harness/service-process.js";
import {
  createTenant,
  signedInClient,
  startGateway,
  startLogRelay,
  startNodeRegistry,
  startScheduler,
  type RunningGateway,
  type RunningService,
  type Tenant,
} from "../harness/system.js";

const WAVE = 20;
const SLOTS = 4;
const STARTING_CREDIT = 1000;
const FREE_RATES = { cpu_core_hour: 1, memory_gb_hour: 0.1, gpu_hour: 20 };
const JOB = { type: "shell", command: ["true"], pool_id: "default", resources: { cpu: 1, memory_mb: 1024, gpu: 0 } };

let nats: NatsHarness;
let nc: NatsConnection;
let gateway: RunningGateway;
const services: RunningService[] = [];
const billing: ServiceProcess[] = [];
let driver: NodeDriver | undefined;

beforeAll(async () => {
  nats = await startNats();
  const env = { NATS_URL: nats.url, CJS_OPS_HOST: "127.0.0.1", CJS_OPS_PORT: "0", LOG_LEVEL: "info" };
  billing.push(startServiceProcess({ service: "billing", env }), startServiceProcess({ service: "billing", env }));
  await Promise.all(billing.map((child) => child.waitForLog((line) => line.msg === "billing ready", 60_000)));
  services.push(await startScheduler(nats.url), await startNodeRegistry(nats.url), await startLogRelay(nats.url));
  gateway = await startGateway(nats.url);
  nc = await connect({ servers: nats.url, name: "test-metering" });
}, 90_000);

afterAll(async () => {
  await driver?.stop();
  await Promise.all(billing.map((child) => child.kill()));
  await gateway?.stop();
  await Promise.all(services.map((service) => service.stop().catch(() => undefined)));
  await nc?.close();
  await nats?.stop();
});

/** A node of an operator business on the operator pool, and its application (operator pools serve one application). */
async function operatorNode(): Promise<{ node: FakeNode; appId: string }> {
  const tenant = await createTenant(nc, { operator: true });
  const { client } = await signedInClient(gateway.baseUrl, tenant);
  const node = await FakeNode.register(client, gateway.baseUrl, tenant.app.app_id, {
    pool_id: "default",
    capacity: { cpu: SLOTS, memory_mb: SLOTS * 1024, gpu: 0, slots: SLOTS },
  });
  return { node, appId: tenant.app.app_id };
}

async function submitWave(client: ComputeClient, into: string[]): Promise<void> {
  for (let index = 0; index < WAVE; index += 1)
    into.push((await client.call("submitJob", { ...JOB, name: `metered-${into.length}` })).job_id);
}

const debitedJobs = async (client: ComputeClient) =>
  new Set(
    (await listAllLedgerEntries(client)).items.filter((entry) => entry.kind === "debit").map((entry) => entry.job_id),
  );

describe("a billing replica SIGKILLed mid-stream", () => {
  it("every attempt on an operator pool is still debited exactly once, copies of its message included", async () => {
    const { node, appId } = await operatorNode();
    const customer: Tenant = await createTenant(nc, { appId });
    const { client } = await signedInClient(gateway.baseUrl, customer);
    await requestRpc(nc, "adminCreditSet", { business_id: customer.business.business_id, amount: STARTING_CREDIT });

    const submitted: string[] = [];
    await submitWave(client, submitted);
    driver = driveNodes([node], {
      slots: SLOTS,
      timeoutMs: 120_000,
      until: (stats) => stats.finished.size === 2 * WAVE,
    });

    // Some charged, while the node keeps finishing jobs: then one replica dies without a goodbye.
    await expect
      .poll(async () => (await debitedJobs(client)).size, { timeout: 60_000, interval: 50 })
      .toBeGreaterThanOrEqual(WAVE / 4);
    const victim = billing[0]!;
    await victim.kill();
    expect(await victim.exited).toEqual({ code: null, signal: "SIGKILL" });
    await submitWave(client, submitted);
    await driver.done;
    expect(driver.stats.unexpected).toEqual([]);

    // Messages the victim held come back after the consumer's ack wait (30 s).
    await expect.poll(async () => (await debitedJobs(client)).size, { timeout: 90_000, interval: 200 }).toBe(2 * WAVE);

    // Copies of some messages, as a redelivery or a second publish would bring them.
    const js = jetstream(nc);
    for (const jobId of submitted.slice(0, 10)) {
      const message = {
        job_key: jobKey(customer.app.app_id, customer.business.business_id, jobId),
        job_id: jobId,
        attempt: 1,
        reason: "result",
      };
      await js.publish(subjects.metering(jobId), encodeJson(message), { msgID: `copy-${randomBase62(10)}` });
    }
    const jsm = await jetstreamManager(nc);
    await expect
      .poll(
        async () => {
          const info = await jsm.consumers.info(STREAMS.metering, CONSUMERS.billingMetering);
          return info.num_pending + info.num_ack_pending;
        },
        { timeout: 60_000, interval: 100 },
      )
      .toBe(0);

    const { balance, items } = await listAllLedgerEntries(client);
    const debits = items.filter((entry) => entry.kind === "debit");
    expect(debits.map((entry) => entry.job_id).sort()).toEqual([...submitted].sort());
    expect(new Set(items.map((entry) => entry.entry_id)).size).toBe(items.length);
    for (const debit of debits) {
      const { job } = await client.call("retrieveJob", { job_id: debit.job_id! });
      const start = job.timeline.find((event) => event.state === "running")!;
      const end = job.timeline.find((event) => event.state === "succeeded")!;
      expect(debit.amount).toBe(
        -chargeMicros(Date.parse(end.at) - Date.parse(start.at), job.resources, FREE_RATES) / 1e6,
      );
    }
    const sum = items.reduce((total, entry) => total + Math.round(entry.amount * 1e6), 0) / 1e6;
    expect(balance).toBe(sum);
    expect(items[0]!.balance_after).toBe(balance);
    expect(billing[1]!.alive()).toBe(true);
  }, 240_000);
});
