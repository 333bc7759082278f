/**
 * Operator pools and applications: two applications, each with an operator business and
 * a node in the operator pool `default`. A job of application B never reaches application
 * A's node, even while that node has room and takes A's own jobs; it waits for, and goes
 * to, B's node. A pool declared shared (`CJS_SHARED_OPERATOR_POOLS`) does take jobs of
 * every application on any application's node.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { type Assignment } from "../../shared/contract/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";

const SHARED_POOL = "everyone";
const JOB = {
  type: "shell",
  command: ["true"],
  resources: { cpu: 1, memory_mb: 256, gpu: 0 },
  env: { SECRET: "of-its-own-app" },
};

let nats: NatsHarness;
let system: RunningSystem;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(
    nats.url,
    { gateways: 1, schedulers: 1, registries: 1 },
    { CJS_OPERATOR_POOLS: `default,${SHARED_POOL}`, CJS_SHARED_OPERATOR_POOLS: SHARED_POOL },
  );
  nc = await connect({ servers: nats.url, name: "test-operator-pool-tenancy" });
}, 120_000);

afterAll(async () => {
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

/** An application with an operator business (which registers nodes) and a customer business with credit (which submits). */
async function application(): Promise<{ appId: string; operator: ComputeClient; customer: ComputeClient }> {
  const operator = await createTenant(nc, { operator: true });
  const customer = await createTenant(nc, { appId: operator.app.app_id });
  await requestRpc(nc, "adminCreditSet", { business_id: customer.business.business_id, amount: 1_000 });
  const baseUrl = system.gateways[0]!.baseUrl;
  return {
    appId: operator.app.app_id,
    operator: (await signedInClient(baseUrl, operator)).client,
    customer: (await signedInClient(baseUrl, customer)).client,
  };
}

/** Long-polls until `jobId` is delivered; returns every job the node was given meanwhile. */
async function pollUntil(node: FakeNode, jobId: string): Promise<Assignment[]> {
  const given: Assignment[] = [];
  while (!given.some((job) => job.job_id === jobId)) given.push(...(await node.poll(5)));
  return given;
}

describe("operator pools and applications", () => {
  it("never gives a job of application B to application A's node in the pool default, and gives it to B's node", async () => {
    const a = await application();
    const b = await application();
    const nodeA = await FakeNode.register(a.operator, system.gateways[0]!.baseUrl, a.appId, {
      name: "node-a",
      pool_id: "default",
    });

    // A's node is known to the placer once it has taken A's own job.
    const first = (await a.customer.call("submitJob", { ...JOB, name: "a-first" })).job_id;
    await pollUntil(nodeA, first);

    // B's job is queued before A's second: were they in one pool, B's (never served) business would have its turn first.
    const fromB = (await b.customer.call("submitJob", { ...JOB, name: "b-job" })).job_id;
    const second = (await a.customer.call("submitJob", { ...JOB, name: "a-second" })).job_id;
    const givenToA = await pollUntil(nodeA, second);

    expect(givenToA.map((job) => job.job_id)).not.toContain(fromB);
    expect((await b.customer.call("retrieveJob", { job_id: fromB })).job).toMatchObject({
      state: "queued",
      node_id: null,
      pending_reason: "no_nodes_in_pool",
    });

    const nodeB = await FakeNode.register(b.operator, system.gateways[0]!.baseUrl, b.appId, {
      name: "node-b",
      pool_id: "default",
    });
    const givenToB = await pollUntil(nodeB, fromB);
    expect(givenToB.find((job) => job.job_id === fromB)?.env).toEqual(JOB.env);
    expect((await b.customer.call("retrieveJob", { job_id: fromB })).job).toMatchObject({ node_id: nodeB.nodeId });
    expect((await nodeA.poll(0)).map((job) => job.job_id)).not.toContain(fromB);
  });

  it("gives a job of application B to application A's node in a pool declared shared", async () => {
    const a = await application();
    const b = await application();
    const nodeA = await FakeNode.register(a.operator, system.gateways[0]!.baseUrl, a.appId, {
      name: "node-a-shared",
      pool_id: SHARED_POOL,
    });

    const fromB = (await b.customer.call("submitJob", { ...JOB, name: "b-shared", pool_id: SHARED_POOL })).job_id;
    await pollUntil(nodeA, fromB);
    expect((await b.customer.call("retrieveJob", { job_id: fromB })).job).toMatchObject({ node_id: nodeA.nodeId });
  });
});
