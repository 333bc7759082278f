import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../services/node-registry/config.js";
import { buildNodeRegistry, type NodeRegistry } from "../../services/node-registry/node-registry.js";
import {
  HeartbeatResponse,
  ListNodesResponse,
  type NodeContext,
  NodeReply,
  type NodeSummary,
  RegisterNodeReply,
  type Role,
  type UserContext,
} from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { BUCKETS, ensureBuckets, JsonBucket, requestRpc } from "../../shared/nats/index.js";
import {
  AllocationRecord,
  JobRecord,
  jobKey,
  NodeRecord,
  operatorPoolKey,
  selfHostedPoolKey,
} from "../../shared/records/index.js";
import { createLogger, metricsRegistry, newId } from "../../shared/runtime/index.js";
import { queuedJobRecord } from "../harness/job-records.js";
import { type NatsHarness, startNats } from "../harness/nats-server.js";

const logger = createLogger({ service: "node-registry", level: process.env.TEST_LOG_LEVEL ?? "silent" });
const INTERVAL_SECONDS = 30;
const OFFLINE_AFTER_MS = 3 * INTERVAL_SECONDS * 1000;

/** Both replicas read this clock; tests move it forward only. */
let fakeNow = Date.parse("2026-03-01T00:00:00.000Z");
const clock = { now: () => fakeNow };

let nats: NatsHarness;
let client: NatsConnection;
let replicas: NodeRegistry[] = [];
const connections: NatsConnection[] = [];
let jobs: JsonBucket<typeof JobRecord>;
let allocations: JsonBucket<typeof AllocationRecord>;
let nodes: JsonBucket<typeof NodeRecord>;

beforeAll(async () => {
  nats = await startNats();
  // A sweep period far beyond the test run: only `sweepNow` sweeps, so counts are exact.
  const config = loadConfig({ NATS_URL: nats.url, CJS_LIVENESS_SWEEP_MS: "3600000" });
  replicas = await Promise.all(
    [1, 2].map(async () => {
      const nc = await connect({ servers: nats.url });
      connections.push(nc);
      const registry = buildNodeRegistry({ nc, logger, clock, config });
      await registry.start();
      return registry;
    }),
  );
  client = await connect({ servers: nats.url });
  connections.push(client);
  const kv = await ensureBuckets(client, [BUCKETS.jobs, BUCKETS.allocations, BUCKETS.nodes], { replicas: 1 });
  jobs = new JsonBucket(kv[BUCKETS.jobs], JobRecord);
  allocations = new JsonBucket(kv[BUCKETS.allocations], AllocationRecord);
  nodes = new JsonBucket(kv[BUCKETS.nodes], NodeRecord);
});

afterAll(async () => {
  await Promise.all(replicas.map((registry) => registry.stop()));
  await Promise.all(connections.map((nc) => nc.close()));
  await nats?.stop();
});

function user(businessId: string, role: Role = "member", appId = "app1", operator = false): UserContext {
  return { app_id: appId, business_id: businessId, user_id: newId("usr"), role, key_id: null, operator };
}

function nodeCaller(owner: UserContext, node: NodeSummary): NodeContext {
  return { app_id: owner.app_id, business_id: owner.business_id, node_id: node.node_id };
}

async function register(caller: UserContext, body: Record<string, unknown> = {}): Promise<RegisterNodeReply> {
  const request = {
    name: "worker",
    hostname: "worker.local",
    pool_id: "gpu",
    capacity: { cpu: 8, memory_mb: 16_384 },
    agent_version: "1.0.0",
    ...body,
  };
  return requestRpc(client, "nodeRegister", { caller, body: request });
}

function heartbeat(
  caller: NodeContext,
  running: { job_id: string; attempt: number }[] = [],
): Promise<HeartbeatResponse> {
  return requestRpc(client, "nodeHeartbeat", { caller, body: { running } });
}

function drain(caller: UserContext | NodeContext, body: { node_id?: string; draining?: boolean }): Promise<NodeReply> {
  return requestRpc(client, "nodeDrain", { caller, body });
}

function getNode(caller: UserContext, nodeId: string): Promise<NodeReply> {
  return requestRpc(client, "nodeGet", {
    caller: { app_id: caller.app_id, business_id: caller.business_id },
    node_id: nodeId,
  });
}

function listNodes(caller: UserContext, body: Record<string, unknown> = {}): Promise<ListNodesResponse> {
  return requestRpc(client, "nodeList", { caller, body });
}

async function failureOf(promise: Promise<unknown>): Promise<AppError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof AppError) return error;
    throw error;
  }
  throw new Error("expected the call to fail");
}

/** A job record as the scheduler would store it: running attempt `attempt` on `nodeId`. */
function jobRecord(owner: UserContext, nodeId: string | null, overrides: Partial<JobRecord> = {}): JobRecord {
  const at = new Date(fakeNow).toISOString();
  return queuedJobRecord({
    job_id: newId("job"),
    app_id: owner.app_id,
    business_id: owner.business_id,
    user_id: owner.user_id,
    timeout_seconds: 3600,
    pool_id: "gpu",
    pool_key: selfHostedPoolKey(owner.business_id, "gpu"),
    state: "running",
    attempt: 1,
    node_id: nodeId,
    pending_reason: null,
    created_at: at,
    started_at: at,
    timeline: [],
    ...overrides,
  });
}

async function storeJob(record: JobRecord): Promise<JobRecord> {
  await jobs.put(jobKey(record.app_id, record.business_id, record.job_id), record);
  return record;
}

/** The stored node record: the summary hides the pool key. */
async function storedNode(nodeId: string): Promise<NodeRecord | null> {
  return (await nodes.get(nodeId))?.value ?? null;
}

describe("register", () => {
  it("registers into a self-hosted pool of the caller's business, online, with the heartbeat interval", async () => {
    const owner = user(newId("biz"));
    const reply = await register(owner, { labels: { zone: "a" } });
    expect(reply.heartbeat_interval_seconds).toBe(INTERVAL_SECONDS);
    expect(reply.node).toMatchObject({
      pool_id: "gpu",
      state: "online",
      labels: { zone: "a" },
      capacity: { cpu: 8, memory_mb: 16_384, gpu: 0, slots: 1 },
      used: { cpu: 0, memory_mb: 0, gpu: 0, slots: 0 },
      job_types: ["shell"],
      last_heartbeat_at: new Date(fakeNow).toISOString(),
    });
    expect(reply.node.node_id).toMatch(/^nod_/);
    expect(await storedNode(reply.node.node_id)).toMatchObject({
      pool_key: `sh.${owner.business_id}.gpu`,
      app_id: owner.app_id,
      user_id: owner.user_id,
      draining: false,
      offline_at: null,
    });
  });

  it("lets only an admin of the operator's business add nodes to an operator pool", async () => {
    const businessId = newId("biz");
    expect((await failureOf(register(user(businessId, "member", "app1", true), { pool_id: "default" }))).code).toBe(
      "permission.denied",
    );
    // An admin of an ordinary business cannot put a node where every business's jobs run.
    expect((await failureOf(register(user(businessId, "admin"), { pool_id: "default" }))).code).toBe(
      "permission.denied",
    );

    const reply = await register(user(businessId, "admin", "app1", true), { pool_id: "default" });
    expect(reply.node.pool_id).toBe("default");
    expect((await storedNode(reply.node.node_id))?.pool_key).toBe(operatorPoolKey("app1", "default", []));
  });
});

describe("heartbeat", () => {
  it("orders the node to stop attempts that were cancelled, reassigned or are unknown, and nothing else", async () => {
    const owner = user(newId("biz"));
    const { node } = await register(owner);
    const running = await storeJob(jobRecord(owner, node.node_id));
    const cancelled = await storeJob(jobRecord(owner, node.node_id, { state: "cancelled" }));
    const nextAttempt = await storeJob(jobRecord(owner, node.node_id, { attempt: 2 }));
    const otherNode = await storeJob(jobRecord(owner, newId("nod")));
    const missing = newId("job");

    const reply = await heartbeat(nodeCaller(owner, node), [
      { job_id: running.job_id, attempt: 1 },
      { job_id: cancelled.job_id, attempt: 1 },
      { job_id: nextAttempt.job_id, attempt: 1 },
      { job_id: otherNode.job_id, attempt: 1 },
      { job_id: missing, attempt: 1 },
    ]);
    expect(reply.draining).toBe(false);
    expect(reply.heartbeat_interval_seconds).toBe(INTERVAL_SECONDS);
    expect(reply.stop).toEqual(
      expect.arrayContaining([
        { job_id: cancelled.job_id, attempt: 1, reason: "cancelled" },
        { job_id: nextAttempt.job_id, attempt: 1, reason: "reassigned" },
        { job_id: otherNode.job_id, attempt: 1, reason: "reassigned" },
        { job_id: missing, attempt: 1, reason: "unknown" },
      ]),
    );
    expect(reply.stop).toHaveLength(4);
  });

  it("finds another business's job on an operator node through the node's allocation", async () => {
    const operator = user(newId("biz"), "admin", "app1", true);
    const { node } = await register(operator, { pool_id: "default" });
    const customer = user(newId("biz"));
    const job = await storeJob(
      jobRecord(customer, node.node_id, { pool_id: "default", pool_key: operatorPoolKey("app1", "default", []) }),
    );
    await allocations.put(node.node_id, {
      node_id: node.node_id,
      attempts: {
        [job.job_id]: {
          job_key: jobKey(customer.app_id, customer.business_id, job.job_id),
          attempt: 1,
          resources: job.resources,
          assigned_at: job.created_at,
        },
      },
    });
    const reply = await heartbeat(nodeCaller(operator, node), [{ job_id: job.job_id, attempt: 1 }]);
    expect(reply.stop).toEqual([]);
  });

  it("answers a heartbeat for a node of another business or app as not found", async () => {
    const owner = user(newId("biz"));
    const { node } = await register(owner);
    const otherBusiness = await failureOf(heartbeat({ ...nodeCaller(owner, node), business_id: newId("biz") }));
    expect(otherBusiness.code).toBe("resource.not_found");
    const otherApp = await failureOf(heartbeat({ ...nodeCaller(owner, node), app_id: "app2" }));
    expect(otherApp.code).toBe("resource.not_found");
  });
});

describe("drain", () => {
  it("drains by the node's own key and by a user, and lifts the drain", async () => {
    const owner = user(newId("biz"));
    const { node } = await register(owner);

    const byNode = await drain(nodeCaller(owner, node), { draining: true });
    expect(byNode.node.state).toBe("draining");
    expect((await heartbeat(nodeCaller(owner, node))).draining).toBe(true);

    const lifted = await drain(owner, { node_id: node.node_id, draining: false });
    expect(lifted.node.state).toBe("online");

    const byUser = await drain(owner, { node_id: node.node_id });
    expect(byUser.node.state).toBe("draining");
    expect((await getNode(owner, node.node_id)).node.state).toBe("draining");
  });

  it("needs the node id from a user, refuses a node draining another, and hides other tenants' nodes", async () => {
    const owner = user(newId("biz"));
    const { node } = await register(owner);
    const { node: sibling } = await register(owner);

    const missingId = await failureOf(drain(owner, { draining: true }));
    expect(missingId.code).toBe("request.invalid");
    expect(missingId.details).toEqual({ issues: [{ path: "node_id", message: "required with a user credential" }] });

    const otherNode = await failureOf(drain(nodeCaller(owner, node), { node_id: sibling.node_id }));
    expect(otherNode.code).toBe("permission.denied");

    const stranger = await failureOf(drain(user(newId("biz")), { node_id: node.node_id }));
    expect(stranger.code).toBe("resource.not_found");
    expect((await getNode(owner, node.node_id)).node.state).toBe("online");
  });
});

describe("list and get", () => {
  it("lists only the caller business's nodes, newest first, with their use from the allocation", async () => {
    const owner = user(newId("biz"));
    const { node: older } = await register(owner, { name: "older" });
    fakeNow += 1000;
    const { node: newer } = await register(owner, { name: "newer", pool_id: "cpu" });
    await register(user(newId("biz")));
    await allocations.put(older.node_id, {
      node_id: older.node_id,
      attempts: {
        a: {
          job_key: "x",
          attempt: 1,
          resources: { cpu: 2, memory_mb: 1024, gpu: 0 },
          assigned_at: new Date(fakeNow).toISOString(),
        },
        b: {
          job_key: "y",
          attempt: 3,
          resources: { cpu: 0.5, memory_mb: 256, gpu: 1 },
          assigned_at: new Date(fakeNow).toISOString(),
        },
      },
    });
    await drain(owner, { node_id: newer.node_id });

    const all = await listNodes(owner);
    expect(all.items.map((node) => node.node_id)).toEqual([newer.node_id, older.node_id]);
    expect(all.items[1]?.used).toEqual({ cpu: 2.5, memory_mb: 1280, gpu: 1, slots: 2 });

    expect((await listNodes(owner, { state: "draining" })).items.map((node) => node.node_id)).toEqual([newer.node_id]);
    expect((await listNodes(owner, { pool_id: "gpu" })).items.map((node) => node.node_id)).toEqual([older.node_id]);
    expect((await listNodes(user(newId("biz")))).items).toEqual([]);
    expect((await listNodes({ ...owner, app_id: "app2" })).items).toEqual([]);
  });

  it("gets a node of the caller's business and answers another tenant's or a malformed id as not found", async () => {
    const owner = user(newId("biz"));
    const { node } = await register(owner);
    expect((await getNode(owner, node.node_id)).node).toEqual(node);
    expect((await failureOf(getNode(user(newId("biz")), node.node_id))).code).toBe("resource.not_found");
    expect((await failureOf(getNode({ ...owner, app_id: "app2" }, node.node_id))).code).toBe("resource.not_found");
    expect((await failureOf(getNode(owner, "nod_*"))).code).toBe("resource.not_found");
  });
});

describe("liveness", () => {
  it("marks a node that missed its heartbeats offline on exactly one of two racing replicas; a heartbeat brings it back", async () => {
    const [first, second] = replicas as [NodeRegistry, NodeRegistry];
    // Retire the nodes of earlier tests, so the race below concerns one node only.
    fakeNow += 86_400_000;
    await first.sweepNow();

    const owner = user(newId("biz"));
    const { node } = await register(owner);
    fakeNow += OFFLINE_AFTER_MS;
    expect(await Promise.all([first.sweepNow(), second.sweepNow()])).toEqual([0, 0]);
    expect((await getNode(owner, node.node_id)).node.state).toBe("online");

    fakeNow += 1;
    // Overdue: shown offline even before a sweep records it.
    expect((await getNode(owner, node.node_id)).node.state).toBe("offline");
    const marked = await Promise.all([first.sweepNow(), second.sweepNow()]);
    expect(marked[0] + marked[1]).toBe(1);
    expect((await listNodes(owner, { state: "offline" })).items.map((item) => item.node_id)).toEqual([node.node_id]);
    const gauge = (await metricsRegistry.getSingleMetric("cjs_nodes")?.get())?.values ?? [];
    expect(gauge.find((sample) => sample.labels.state === "offline")?.value).toBeGreaterThanOrEqual(1);

    await heartbeat(nodeCaller(owner, node));
    expect((await getNode(owner, node.node_id)).node.state).toBe("online");
    expect(await Promise.all([first.sweepNow(), second.sweepNow()])).toEqual([0, 0]);
  });

  it("after a NATS outage, marks no node offline until each has had a full window to heartbeat again", async () => {
    const [first] = replicas as [NodeRegistry, NodeRegistry];
    fakeNow += 86_400_000;
    await first.sweepNow();
    const owner = user(newId("biz"));
    const { node } = await register(owner);
    fakeNow += OFFLINE_AFTER_MS;

    await nats.restart();
    // The replica notices the outage only once it has reconnected; wait for that, not for time.
    await expect
      .poll(async () => (await getNode(owner, node.node_id).catch(() => null))?.node.node_id, { timeout: 15_000 })
      .toBe(node.node_id);
    await expect.poll(() => first.ready()).toBe(true);
    fakeNow += 1;
    // Overdue by the node's last heartbeat, but the replica has listened for less than a window since it reconnected.
    expect((await getNode(owner, node.node_id)).node.state).toBe("offline");
    expect(await first.sweepNow()).toBe(0);
    fakeNow += OFFLINE_AFTER_MS;
    expect(await first.sweepNow()).toBe(1);
  });
});
