/**
 * Concurrency keys over HTTP on the real stack: at most `max_running` jobs of one key are
 * assigned or running at once, whatever room the nodes have; the others wait with
 * `pending_reason` `concurrency_limit`; the keys of a business take turns. Checked from
 * the jobs' timelines, not from timing. Once on a single server, once on a 3-node cluster.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Job } from "../../shared/contract/index.js";
import type { ComputeClient } from "../harness/client.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNatsCluster, type NatsClusterHarness } from "../harness/nats-cluster.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

interface Stack {
  system: RunningSystem;
  tenant: Tenant;
  user: ComputeClient;
}

async function stackOn(url: string, env: Record<string, string> = {}): Promise<Stack> {
  const system = await startSystem(url, undefined, env);
  const tenant = await createTenant(system.gateways[0]!.nc);
  const { client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant);
  return { system, tenant, user };
}

async function submitKeyed({ user }: Stack, pool: string, key: string, maxRunning: number): Promise<string> {
  return (
    await user.call("submitJob", {
      type: "shell",
      command: ["true"],
      pool_id: pool,
      concurrency: { key, max_running: maxRunning },
    })
  ).job_id;
}

function nodeIn({ system, tenant, user }: Stack, pool: string, slots: number): Promise<FakeNode> {
  return FakeNode.register(user, system.gateways[1]!.baseUrl, tenant.app.app_id, {
    name: pool,
    pool_id: pool,
    capacity: { cpu: 8, memory_mb: 8192, gpu: 0, slots },
  });
}

/** The next attempt the node is given (polled until one comes); the node must hold no other. */
async function nextRun(node: FakeNode): Promise<string> {
  await expect
    .poll(async () => (await node.poll()).length + node.running.size, { timeout: 10_000, interval: 50 })
    .toBeGreaterThan(0);
  expect(node.running.size).toBe(1);
  return [...node.running.keys()][0] as string;
}

/** When each job held its node: from its `assigned` event to its end. */
function heldSpans(jobs: readonly Job[]): Array<{ job_id: string; from: number; to: number }> {
  return jobs
    .map((job) => ({
      job_id: job.job_id,
      from: Date.parse(job.timeline.find((event) => event.state === "assigned")?.at ?? ""),
      to: Date.parse(job.finished_at ?? ""),
    }))
    .sort((a, b) => a.from - b.from);
}

/** Runs the key's jobs one at a time on a node with room for more, then checks from their timelines that no two were ever assigned or running together. */
async function runsOneAtATime(stack: Stack, pool: string) {
  const node = await nodeIn(stack, pool, 4);
  const ids = [
    await submitKeyed(stack, pool, "deploy", 1),
    await submitKeyed(stack, pool, "deploy", 1),
    await submitKeyed(stack, pool, "deploy", 1),
  ];
  const ran: string[] = [];
  for (let run = 0; run < ids.length; run += 1) {
    const running = await nextRun(node);
    ran.push(running);
    // The others of the key wait for it, and say why (once the replica answering has seen the assignment).
    for (const id of ids.filter((each) => !ran.includes(each))) {
      await expect
        .poll(async () => (await stack.user.call("retrieveJob", { job_id: id })).job.pending_reason, {
          timeout: 10_000,
          interval: 50,
        })
        .toBe("concurrency_limit");
    }
    await node.finish(running);
  }
  const jobs = await Promise.all(ids.map(async (id) => (await stack.user.call("retrieveJob", { job_id: id })).job));
  expect(jobs.map((job) => job.state)).toEqual(["succeeded", "succeeded", "succeeded"]);
  const spans = heldSpans(jobs);
  for (let index = 1; index < spans.length; index += 1)
    expect(spans[index]!.from).toBeGreaterThanOrEqual(spans[index - 1]!.to);
}

describe("concurrency keys on one server", () => {
  let nats: NatsHarness;
  let stack: Stack;

  beforeAll(async () => {
    nats = await startNats();
    stack = await stackOn(nats.url);
  }, 120_000);

  afterAll(async () => {
    await stack?.system.stop();
    await nats?.stop();
  });

  it("runs at most max_running 1 of a key at once on a node with four free slots; the others wait with concurrency_limit", async () => {
    await runsOneAtATime(stack, "conc-one");
  });

  it("places up to max_running of a key at once", async () => {
    const node = await nodeIn(stack, "conc-two", 4);
    const ids = [
      await submitKeyed(stack, "conc-two", "batch", 2),
      await submitKeyed(stack, "conc-two", "batch", 2),
      await submitKeyed(stack, "conc-two", "batch", 2),
    ];
    await expect
      .poll(
        async () => {
          await node.poll();
          return node.running.size;
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBe(2);
    const waiting = ids.find((id) => !node.running.has(id)) as string;
    await expect
      .poll(async () => (await stack.user.call("retrieveJob", { job_id: waiting })).job.pending_reason, {
        timeout: 10_000,
        interval: 50,
      })
      .toBe("concurrency_limit");
    await node.finish([...node.running.keys()][0] as string);
    await expect
      .poll(
        async () => {
          await node.poll();
          return node.running.has(waiting);
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBe(true);
  });

  it("lets the waiting jobs of two keys take turns", async () => {
    // Queued before any node exists, so the order is the queue's alone.
    const pool = "conc-turns";
    const a = [
      await submitKeyed(stack, pool, "a", 5),
      await submitKeyed(stack, pool, "a", 5),
      await submitKeyed(stack, pool, "a", 5),
    ];
    const b = [
      await submitKeyed(stack, pool, "b", 5),
      await submitKeyed(stack, pool, "b", 5),
      await submitKeyed(stack, pool, "b", 5),
    ];
    const node = await nodeIn(stack, pool, 1);
    const order: string[] = [];
    for (let run = 0; run < 6; run += 1) {
      const running = await nextRun(node);
      order.push(running);
      await node.finish(running);
    }
    expect(order).toEqual([a[0], b[0], a[1], b[1], a[2], b[2]]);
  });

  it("counts a key within its business: another business's jobs of the same key are not held by it", async () => {
    const node = await nodeIn(stack, "conc-scope", 4);
    const mine = await submitKeyed(stack, "conc-scope", "shared-name", 1);
    await expect
      .poll(
        async () => {
          await node.poll();
          return node.running.has(mine);
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBe(true);
    const neighbour = await createTenant(stack.system.gateways[0]!.nc, { appId: stack.tenant.app.app_id });
    const { client: other } = await signedInClient(stack.system.gateways[0]!.baseUrl, neighbour);
    const otherNode = await FakeNode.register(other, stack.system.gateways[0]!.baseUrl, neighbour.app.app_id, {
      name: "other",
      pool_id: "conc-scope",
    });
    const theirs = (
      await other.call("submitJob", {
        type: "shell",
        command: ["true"],
        pool_id: "conc-scope",
        concurrency: { key: "shared-name", max_running: 1 },
      })
    ).job_id;
    await expect
      .poll(async () => (await otherNode.poll()).map((job) => job.job_id), { timeout: 10_000, interval: 50 })
      .toEqual([theirs]);
  });
});

describe("concurrency keys on a 3-node cluster", () => {
  let cluster: NatsClusterHarness;
  let stack: Stack;

  beforeAll(async () => {
    cluster = await startNatsCluster();
    stack = await stackOn(cluster.url, { CJS_NATS_REPLICAS: String(cluster.replicas) });
  }, 120_000);

  afterAll(async () => {
    await stack?.system.stop();
    await cluster?.stop();
  });

  it("runs at most max_running 1 of a key at once across two scheduler replicas", async () => {
    await runsOneAtATime(stack, "conc-cluster");
  });
});
