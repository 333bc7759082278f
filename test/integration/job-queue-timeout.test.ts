/**
 * Queue timeout on the whole system: a job not started within `queue_timeout_seconds` of
 * its submit (or its `run_at`) ends `cancelled` with `job.queue_timeout`, and is never
 * charged. The operator pool has no nodes, so nothing ever starts there.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Job } from "../../shared/contract/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import type { ComputeClient } from "../harness/client.js";
import { waitUntilAudited } from "../harness/ledger-audit.js";
import { listAllLedgerEntries } from "../harness/listing.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";

const POOL = "empty-operator-pool";
const CREDIT = 1_000_000;

let nats: NatsHarness;
let system: RunningSystem;
let nc: NatsConnection;
let customer: ComputeClient;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(
    nats.url,
    { gateways: 2, schedulers: 2, registries: 1 },
    { CJS_OPERATOR_POOLS: POOL, CJS_LEDGER_AUDIT_GRACE_MS: "100" },
  );
  nc = await connect({ servers: nats.url, name: "test-queue-timeout" });
  const operator = await createTenant(nc, { operator: true });
  const tenant = await createTenant(nc, { appId: operator.app.app_id });
  customer = (await signedInClient(system.gateways[0]!.baseUrl, tenant)).client;
  await requestRpc(nc, "adminCreditSet", { business_id: tenant.business.business_id, amount: CREDIT });
}, 60_000);

afterAll(async () => {
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

async function cancelledJob(jobId: string): Promise<Job> {
  await expect
    .poll(async () => (await customer.call("retrieveJob", { job_id: jobId })).job.state, { timeout: 15_000 })
    .toBe("cancelled");
  return (await customer.call("retrieveJob", { job_id: jobId })).job;
}

describe("queue timeout", () => {
  it("a job no node starts in time ends cancelled with job.queue_timeout, and is never charged", async () => {
    const { job_id: jobId } = await customer.call("submitJob", {
      type: "shell",
      command: ["true"],
      pool_id: POOL,
      queue_timeout_seconds: 1,
    });
    const job = await cancelledJob(jobId);
    expect(job).toMatchObject({ attempt: 0, error: { code: "job.queue_timeout" }, pending_reason: null });
    const end = job.timeline.at(-1)!;
    expect(end).toMatchObject({ state: "cancelled", reason: "queue_timeout", error: { code: "job.queue_timeout" } });
    expect(Date.parse(end.at) - Date.parse(job.created_at)).toBeGreaterThanOrEqual(1000);

    await waitUntilAudited(nc);
    const ledger = await listAllLedgerEntries(customer);
    expect(ledger.items.filter((entry) => entry.kind === "debit")).toEqual([]);
    expect(ledger.balance).toBe(CREDIT);
  });

  it("counts from run_at for a scheduled job", async () => {
    const runAt = new Date(Date.now() + 2000).toISOString();
    const { job_id: jobId } = await customer.call("submitJob", {
      type: "shell",
      command: ["true"],
      pool_id: POOL,
      run_at: runAt,
      queue_timeout_seconds: 1,
    });
    const job = await cancelledJob(jobId);
    expect(job.error?.code).toBe("job.queue_timeout");
    expect(Date.parse(job.timeline.at(-1)!.at)).toBeGreaterThanOrEqual(Date.parse(runAt) + 1000);
  });
});
