/**
 * Priority and the businesses' turns across the whole backlog, not a window of it: one
 * business queues 50,000 jobs in an operator pool with no node, then a second business
 * queues one job and the first one job of priority 10. A node with one slot then starts
 * the priority-10 job first; the businesses take turns, least recently served first, so
 * the other business's single job comes second — not after 50,000 — and the backlog
 * goes on after it.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { type UserContext } from "../../shared/contract/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { operatorPoolKey } from "../../shared/records/index.js";
import { metricsRegistry } from "../../shared/runtime/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

const BACKLOG = Number(process.env.BACKLOG ?? 50_000);
const POOL = "queue-order";
const JOB = { type: "shell", command: ["true"], resources: { cpu: 1, memory_mb: 256, gpu: 0 }, pool_id: POOL };

let nats: NatsHarness;
let system: RunningSystem;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 }, { CJS_OPERATOR_POOLS: POOL });
  nc = await connect({ servers: nats.url, name: "test-queue-order" });
}, 120_000);

afterAll(async () => {
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

/** The queue as the scheduler that places jobs reports it (it runs in this process). */
async function queueDepth(appId: string): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("cjs_job_queue_depth")?.get();
  return metric?.values.find((value) => value.labels.pool === operatorPoolKey(appId, POOL, []))?.value ?? 0;
}

function callerOf(tenant: Tenant): UserContext {
  return {
    app_id: tenant.app.app_id,
    business_id: tenant.business.business_id,
    user_id: tenant.user.user_id,
    role: "admin",
    key_id: null,
    operator: false,
  };
}

/** Submits straight to the scheduler, as the gateway does, many at a time: the backlog is built in seconds, not minutes. */
async function submitBacklog(caller: UserContext, count: number): Promise<string[]> {
  const ids: string[] = new Array<string>(count);
  let next = 0;
  const lane = async (): Promise<void> => {
    for (let index = next++; index < count; index = next++) {
      const body = { ...JOB, name: `backlog-${index}` };
      ids[index] = (await requestRpc(nc, "jobSubmit", { caller, body }, { timeoutMs: 30_000 })).job_id;
    }
  };
  await Promise.all(Array.from({ length: 64 }, lane));
  return ids;
}

describe("the queue's order over a backlog of 50,000 jobs", () => {
  it("starts a priority-10 job first, and a business with one job gets the next turn, not a turn after 50,000", async () => {
    const big = await createTenant(nc);
    const small = await createTenant(nc, { appId: big.app.app_id });
    const operator = await createTenant(nc, { appId: big.app.app_id, operator: true });
    for (const tenant of [big, small]) {
      await requestRpc(nc, "adminCreditSet", { business_id: tenant.business.business_id, amount: 1_000_000 });
    }
    const baseUrl = system.gateways[0]!.baseUrl;
    const bigUser = (await signedInClient(baseUrl, big)).client;
    const smallUser = (await signedInClient(baseUrl, small)).client;

    const backlog = await submitBacklog(callerOf(big), BACKLOG);
    const single = (await smallUser.call("submitJob", { ...JOB, name: "single" })).job_id;
    const urgent = (await bigUser.call("submitJob", { ...JOB, name: "urgent", priority: 10 })).job_id;
    expect((await smallUser.call("retrieveJob", { job_id: single })).job).toMatchObject({
      state: "queued",
      pending_reason: "no_nodes_in_pool",
    });
    // The scheduler places from its watch of the bucket: once its queue holds every job, a node may come.
    await expect.poll(() => queueDepth(big.app.app_id), { timeout: 60_000, interval: 100 }).toBe(BACKLOG + 2);

    const operatorUser = (await signedInClient(baseUrl, operator)).client;
    const node = await FakeNode.register(operatorUser, baseUrl, operator.app.app_id, {
      name: "one-slot",
      pool_id: POOL,
      capacity: { cpu: 1, memory_mb: 1024, gpu: 0, slots: 1 },
    });
    const started: string[] = [];
    for (let turn = 0; turn < 3; turn += 1) {
      const [job] = await vi.waitFor(
        async () => {
          const jobs = await node.poll();
          expect(jobs).toHaveLength(1);
          return jobs;
        },
        { timeout: 30_000, interval: 50 },
      );
      started.push(job!.job_id);
      await node.finish(job!.job_id);
    }
    // The urgent job was the big business's turn, so the small one's comes next; the backlog goes on after it.
    expect(started.slice(0, 2)).toEqual([urgent, single]);
    expect(backlog).toContain(started[2]);
  }, 600_000);
});
