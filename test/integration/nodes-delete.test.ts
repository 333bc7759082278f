import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { RPC_ROUTES, type RpcName, type RpcRequest, type UserContext } from "../../shared/contract/index.js";
import { BUCKETS, ensureBuckets, JsonBucket, requestRpc } from "../../shared/nats/index.js";
import { AllocationRecord } from "../../shared/records/index.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

/**
 * `nodes/delete` against the whole system (two replicas of each service). A node that
 * stays silent for 2 s is offline; each test uses its own pool.
 */
const ENV = { CJS_HEARTBEAT_INTERVAL_SECONDS: "1", CJS_HEARTBEAT_MISSES_OFFLINE: "2" };

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;
let allocations: JsonBucket<typeof AllocationRecord>;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 2, schedulers: 2, registries: 2 }, ENV);
  tenant = await createTenant(system.gateways[0]!.nc);
  user = (await signedInClient(system.gateways[0]!.baseUrl, tenant)).client;
  const kv = await ensureBuckets(system.gateways[0]!.nc, [BUCKETS.allocations], { replicas: 1 });
  allocations = new JsonBucket(kv[BUCKETS.allocations], AllocationRecord);
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

/** A node of the tenant in `pool`: a client of its key on each gateway (the first is `node`). */
async function registerNode(pool: string) {
  const registered = await user.call("registerNode", {
    name: `node-${pool}`,
    hostname: "host.local",
    pool_id: pool,
    capacity: { cpu: 8, memory_mb: 16_384 },
    agent_version: "test",
  });
  const onEachGateway = system.gateways.map(
    (gateway) => new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id, apiKey: registered.api_key }),
  );
  return { nodeId: registered.node_id, node: onEachGateway[0]!, onEachGateway };
}

/** The HTTP status, code and details of a call that must fail. */
async function refusal<N extends RpcName>(client: ComputeClient, name: N, body: RpcRequest<N>) {
  const route = RPC_ROUTES[name];
  const response = await client.raw(route.method, route.path, body);
  const envelope = response.body as { code?: unknown; details?: unknown };
  return { status: response.status, code: envelope.code, details: envelope.details };
}

async function stateOf(nodeId: string, client = user) {
  return (await client.call("listNodes", { include_offline: true })).items.find((node) => node.node_id === nodeId)
    ?.state;
}

/** Waits until the silent node's heartbeats are overdue. */
async function waitOffline(nodeId: string) {
  await expect.poll(() => stateOf(nodeId), { timeout: 15_000 }).toBe("offline");
}

describe("nodes/delete", () => {
  it("refuses an online or draining node with 409 and its state, and leaves it in place", async () => {
    const { nodeId, node } = await registerNode("delete-live");
    await node.call("heartbeat", {});
    expect(await refusal(user, "deleteNode", { node_id: nodeId })).toEqual({
      status: 409,
      code: "state.conflict",
      details: { state: "online" },
    });
    await user.call("drainNode", { node_id: nodeId, draining: true });
    await node.call("heartbeat", {});
    expect(await refusal(user, "deleteNode", { node_id: nodeId })).toEqual({
      status: 409,
      code: "state.conflict",
      details: { state: "draining" },
    });
    expect((await node.call("heartbeat", {})).draining).toBe(true);
  });

  it("deletes an offline node: its key stops working on every gateway, its job is requeued and its allocation removed", async () => {
    const pool = "delete-offline";
    const { nodeId, onEachGateway } = await registerNode(pool);
    const [onFirst, onSecond] = onEachGateway as [ComputeClient, ComputeClient];
    const { job_id: jobId } = await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool });
    await expect
      .poll(async () => (await onFirst.call("poll", { wait_seconds: 1 })).jobs.some((job) => job.job_id === jobId), {
        timeout: 15_000,
        interval: 1,
      })
      .toBe(true);
    await expect
      .poll(async () => (await allocations.get(nodeId))?.value.attempts[jobId] !== undefined, { timeout: 5_000 })
      .toBe(true);
    // The second gateway holds the key in its cache before the delete too.
    await onSecond.call("poll", { wait_seconds: 0 });
    await waitOffline(nodeId);

    const deleted = await user.call("deleteNode", { node_id: nodeId });
    expect(deleted).toMatchObject({ node_id: nodeId, keys_retired: 1 });
    const invalid = { status: 401, code: "auth.invalid_credentials" };
    expect(await refusal(onFirst, "heartbeat", {})).toMatchObject(invalid);
    await expect.poll(async () => (await refusal(onSecond, "heartbeat", {})).status, { timeout: 5_000 }).toBe(401);

    expect(await stateOf(nodeId)).toBeUndefined();
    expect(await refusal(user, "deleteNode", { node_id: nodeId })).toMatchObject({
      status: 404,
      code: "resource.not_found",
    });
    // The scheduler drops the node: its job goes back to the queue and the node's allocation record is removed.
    await expect
      .poll(async () => (await user.call("retrieveJob", { job_id: jobId })).job.state, { timeout: 15_000 })
      .toBe("queued");
    await expect.poll(() => allocations.get(nodeId), { timeout: 15_000 }).toBeNull();
  });

  it("another business of the same app, or another app, gets 404 and the node and its key stay", async () => {
    const { nodeId, node } = await registerNode("delete-tenancy");
    await waitOffline(nodeId);
    const gateway = system.gateways[0]!;
    for (const other of [
      await createTenant(gateway.nc, { appId: tenant.app.app_id }),
      await createTenant(gateway.nc),
    ]) {
      const { client } = await signedInClient(gateway.baseUrl, other);
      expect(await refusal(client, "deleteNode", { node_id: nodeId })).toMatchObject({
        status: 404,
        code: "resource.not_found",
      });
    }
    expect(await stateOf(nodeId)).toBe("offline");
    // The key still works (its heartbeat brings the node back).
    expect((await node.call("heartbeat", {})).stop).toEqual([]);
  });

  it("a delete whose key retirement never ran (a gateway crash) is finished by calling it again", async () => {
    const { nodeId, node } = await registerNode("delete-crash");
    await waitOffline(nodeId);
    // The registry's half alone, as if the gateway died right after it.
    const caller: UserContext = {
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      user_id: tenant.user.user_id,
      role: "admin",
      key_id: null,
      operator: false,
    };
    await requestRpc(system.gateways[0]!.nc, "nodeDelete", { caller, body: { node_id: nodeId } });
    expect(await refusal(user, "deleteNode", { node_id: nodeId })).toMatchObject({
      status: 404,
      code: "resource.not_found",
    });
    expect(await refusal(node, "heartbeat", {})).toMatchObject({ status: 401, code: "auth.invalid_credentials" });
  });
});
