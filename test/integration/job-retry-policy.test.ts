/**
 * A job's retry policy over HTTP on the whole system (two replicas of each service): a
 * failed or timed-out attempt the policy matches goes back to the queue for its backoff,
 * the timeline shows each retry, and one it does not match ends the job at once.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Job, type RpcRequest } from "../../shared/contract/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import type { ComputeClient } from "../harness/client.js";
import { failureOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { waitUntilAudited } from "../harness/ledger-audit.js";
import { listAllLedgerEntries } from "../harness/listing.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;
let nc: NatsConnection;
const OPERATOR_POOL = "retry-operator";

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, undefined, {
    CJS_OPERATOR_POOLS: OPERATOR_POOL,
    CJS_LEDGER_AUDIT_GRACE_MS: "100",
  });
  nc = await connect({ servers: nats.url, name: "test-retry-policy" });
  tenant = await createTenant(nc);
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
});

afterAll(async () => {
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

/** A backoff of exactly `seconds` each time. */
function fixedBackoff(seconds: number) {
  return { initial_seconds: seconds, factor: 1, max_seconds: seconds, jitter: 0 };
}

async function submit(pool: string, overrides: Partial<RpcRequest<"submitJob">>): Promise<string> {
  return (await user.call("submitJob", { type: "shell", command: ["run"], pool_id: pool, ...overrides })).job_id;
}

async function retrieve(jobId: string): Promise<Job> {
  return (await user.call("retrieveJob", { job_id: jobId })).job;
}

function registerNode(pool: string): Promise<FakeNode> {
  return FakeNode.register(user, system.gateways[1]!.baseUrl, tenant.app.app_id, {
    name: `node-${pool}`,
    pool_id: pool,
  });
}

/** Long-polls until the node is given `attempt` of `jobId`. */
async function pollFor(node: FakeNode, jobId: string, attempt: number) {
  await expect
    .poll(async () => (await node.poll(2), node.running.get(jobId)?.attempt), { timeout: 20_000, interval: 1 })
    .toBe(attempt);
}

function report(node: FakeNode, jobId: string, attempt: number, exitCode: number) {
  node.running.delete(jobId);
  return node.client.call("result", {
    job_id: jobId,
    attempt,
    outcome: exitCode === 0 ? "succeeded" : "failed",
    exit_code: exitCode,
  });
}

describe("a job with a retry policy", () => {
  it("runs a failed attempt again after its backoff, until one succeeds; the timeline shows each retry and why", async () => {
    const node = await registerNode("retry-backoff");
    const jobId = await submit("retry-backoff", { retry: { max_retries: 3, backoff: fixedBackoff(1) } });

    await pollFor(node, jobId, 1);
    expect(await report(node, jobId, 1, 3)).toMatchObject({ state: "queued", duplicate: false });
    const waiting = await retrieve(jobId);
    expect(waiting).toMatchObject({
      state: "queued",
      pending_reason: "retry_backoff",
      retry_count: 1,
      attempt: 1,
      exit_code: null,
      error: null,
    });
    expect(waiting.next_attempt_at).not.toBeNull();
    // The same result sent again is a duplicate, not a stale attempt.
    expect(
      await node.client.call("result", { job_id: jobId, attempt: 1, outcome: "failed", exit_code: 3 }),
    ).toMatchObject({ duplicate: true });

    await pollFor(node, jobId, 2);
    await report(node, jobId, 2, 3);
    await pollFor(node, jobId, 3);
    await report(node, jobId, 3, 0);

    const job = await retrieve(jobId);
    expect(job).toMatchObject({ state: "succeeded", attempt: 3, retry_count: 2, next_attempt_at: null });
    const retries = job.timeline.filter((event) => event.reason === "retry_scheduled");
    expect(retries).toEqual([
      expect.objectContaining({
        state: "queued",
        attempt: 1,
        exit_code: 3,
        error: expect.objectContaining({ code: "job.exit_nonzero" }),
      }),
      expect.objectContaining({
        state: "queued",
        attempt: 2,
        exit_code: 3,
        error: expect.objectContaining({ code: "job.exit_nonzero" }),
      }),
    ]);
    // Each next attempt was assigned no earlier than its retry allowed.
    for (const retry of retries) {
      const assigned = job.timeline.find((event) => event.state === "assigned" && event.attempt === retry.attempt + 1)!;
      expect(Date.parse(assigned.at)).toBeGreaterThanOrEqual(Date.parse(retry.next_attempt_at!));
    }
    expect(job.timeline.filter((event) => event.state === "failed").map((event) => event.attempt)).toEqual([1, 2]);
  });

  it("ends failed once its retries are spent", async () => {
    const node = await registerNode("retry-spent");
    const jobId = await submit("retry-spent", { retry: { max_retries: 1, backoff: fixedBackoff(0) } });
    await pollFor(node, jobId, 1);
    await report(node, jobId, 1, 1);
    await pollFor(node, jobId, 2);
    expect(await report(node, jobId, 2, 1)).toMatchObject({ state: "failed" });
    expect(await retrieve(jobId)).toMatchObject({
      state: "failed",
      retry_count: 1,
      exit_code: 1,
      error: { code: "job.exit_nonzero" },
    });
  });

  it("ends failed at once when the exit code is not in on_exit_codes, and retries one that is", async () => {
    const node = await registerNode("retry-exit-codes");
    const retry = { max_retries: 2, backoff: fixedBackoff(0), on_exit_codes: [75] };
    const other = await submit("retry-exit-codes", { retry });
    await pollFor(node, other, 1);
    expect(await report(node, other, 1, 1)).toMatchObject({ state: "failed" });
    expect(await retrieve(other)).toMatchObject({ state: "failed", retry_count: 0, exit_code: 1 });

    const listed = await submit("retry-exit-codes", { retry });
    await pollFor(node, listed, 1);
    expect(await report(node, listed, 1, 75)).toMatchObject({ state: "queued" });
    await pollFor(node, listed, 2);
    await report(node, listed, 2, 0);
    expect(await retrieve(listed)).toMatchObject({ state: "succeeded", retry_count: 1 });
  });

  it("retries a timed-out attempt when on_codes names job.timed_out", async () => {
    const node = await registerNode("retry-timeout");
    const jobId = await submit("retry-timeout", {
      timeout_seconds: 1,
      retry: { max_retries: 1, backoff: fixedBackoff(0), on_codes: ["job.timed_out"] },
    });
    await pollFor(node, jobId, 1);
    // The reconciler times attempt 1 out and the policy requeues it: the node is given attempt 2.
    await pollFor(node, jobId, 2);
    await expect.poll(async () => (await retrieve(jobId)).state, { timeout: 20_000 }).toBe("timed_out");
    const job = await retrieve(jobId);
    expect(job).toMatchObject({ attempt: 2, retry_count: 1, error: { code: "job.timed_out" } });
    expect(job.timeline.filter((event) => event.reason === "retry_scheduled")).toEqual([
      expect.objectContaining({ attempt: 1, error: expect.objectContaining({ code: "job.timed_out" }) }),
    ]);
  });

  it("in its backoff: queued, cancellable, and a manual retry is 409", async () => {
    const node = await registerNode("retry-cancel");
    const jobId = await submit("retry-cancel", { retry: { max_retries: 1, backoff: fixedBackoff(3600) } });
    await pollFor(node, jobId, 1);
    await report(node, jobId, 1, 1);
    const waiting = await retrieve(jobId);
    expect(waiting).toMatchObject({ state: "queued", pending_reason: "retry_backoff" });
    expect(Date.parse(waiting.next_attempt_at!)).toBeGreaterThan(Date.now() + 3_000_000);

    const refused = await failureOf(user.call("retryJob", { job_id: jobId }));
    expect(refused).toMatchObject({ status: 409, code: "state.conflict" });
    expect((await user.call("cancelJob", { job_id: jobId })).job).toMatchObject({
      state: "cancelled",
      next_attempt_at: null,
      retry_count: 1,
    });
  });
});

describe("a retried job on an operator pool", () => {
  it("is charged once for each attempt that ran: the failed one and the retry", async () => {
    const operatorTenant = await createTenant(nc, { operator: true });
    const operator = (await signedInClient(system.gateways[0]!.baseUrl, operatorTenant)).client;
    const customerTenant = await createTenant(nc, { appId: operatorTenant.app.app_id });
    const customer = (await signedInClient(system.gateways[0]!.baseUrl, customerTenant)).client;
    await requestRpc(nc, "adminCreditSet", { business_id: customerTenant.business.business_id, amount: 1_000_000 });
    const node = await FakeNode.register(operator, system.gateways[1]!.baseUrl, operatorTenant.app.app_id, {
      pool_id: OPERATOR_POOL,
    });

    const { job_id: jobId } = await customer.call("submitJob", {
      type: "shell",
      command: ["flaky"],
      pool_id: OPERATOR_POOL,
      retry: { max_retries: 1, backoff: fixedBackoff(0) },
    });
    await pollFor(node, jobId, 1);
    await report(node, jobId, 1, 1);
    await pollFor(node, jobId, 2);
    await report(node, jobId, 2, 0);

    const debitsOf = async () =>
      (await listAllLedgerEntries(customer)).items
        .filter((entry) => entry.kind === "debit" && entry.job_id === jobId)
        .map((entry) => entry.entry_id);
    await expect
      .poll(async () => (await debitsOf()).sort(), { timeout: 30_000 })
      .toEqual([`job.${jobId}.1`, `job.${jobId}.2`]);
    await waitUntilAudited(nc);
    expect((await debitsOf()).sort()).toEqual([`job.${jobId}.1`, `job.${jobId}.2`]);
  });
});
