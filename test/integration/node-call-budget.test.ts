import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NatsLink, natsLink, natsNodePlane } from "../../clients/agent/index.js";
import { RPC_ROUTES } from "../../shared/contract/index.js";
import type { ComputeClient } from "../harness/client.js";
import { failureOf, type Refusal } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { NATS_TOPOLOGIES, type RunningNats } from "../harness/nats-topologies.js";
import { createTenant, signedInClient, startSystemOn, type RunningSystem, type Tenant } from "../harness/system.js";

/**
 * A node's calls with its key have a budget of their own on each gateway replica: a node
 * in a loop (heartbeats, polls) is refused past it with 429 `rate.limited` and
 * `Retry-After`, over HTTP and NATS alike, the refused call changes nothing, and another
 * node goes on being served. On one server and on the 3-node cluster.
 */
const PER_SECOND = 20;
const CONTROL_PER_SECOND = 2;
/** Calls sent at once, more than either budget holds: some are refused however slow the machine. */
const AT_ONCE = 3 * PER_SECOND;

describe.each(NATS_TOPOLOGIES)("a node's call budget, on $name", (topology) => {
  let nats: RunningNats;
  let system: RunningSystem;
  let baseUrl: string;
  let link: NatsLink;

  beforeAll(async () => {
    ({ nats, system } = await startSystemOn(
      topology,
      { gateways: 1, schedulers: 1, registries: 1 },
      {
        CJS_NODE_RATE_LIMIT_PER_SECOND: String(PER_SECOND),
        CJS_NODE_CONTROL_RATE_LIMIT_PER_SECOND: String(CONTROL_PER_SECOND),
      },
    ));
    baseUrl = system.gateways[0]!.baseUrl;
    link = natsLink({ url: nats.url, credentials: {}, inboxPrefix: "_INBOX", name: "node-call-budget" });
  }, 120_000);

  afterAll(async () => {
    await link?.close();
    await system?.stop();
    await nats?.stop();
  });

  async function tenantWithNode(pool: string): Promise<{ tenant: Tenant; user: ComputeClient; node: FakeNode }> {
    const tenant = await createTenant(system.gateways[0]!.nc);
    const { client: user } = await signedInClient(baseUrl, tenant);
    return { tenant, user, node: await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: pool }) };
  }

  /** Sends AT_ONCE of `call` together; the first refusal among them (fails the test when all were served). */
  async function refusalAmong(call: () => Promise<unknown>): Promise<Refusal> {
    const outcomes = await Promise.allSettled(Array.from({ length: AT_ONCE }, call));
    const refused = outcomes.find((outcome) => outcome.status === "rejected");
    if (!refused) throw new Error(`${AT_ONCE} calls sent together were all served`);
    return failureOf(Promise.reject((refused as PromiseRejectedResult).reason));
  }

  async function lastHeartbeatOf(user: ComputeClient, nodeId: string): Promise<string | null> {
    const { items } = await user.call("listNodes", {});
    return items.find((node) => node.node_id === nodeId)!.last_heartbeat_at;
  }

  it("refuses a node heartbeating in a loop past its control budget, over HTTP and NATS, changing nothing, while another tenant's node heartbeats", async () => {
    const noisy = await tenantWithNode("budget-noisy");
    const quiet = await tenantWithNode("budget-quiet");

    const refusal = await refusalAmong(() => noisy.node.heartbeat());
    expect(refusal.code).toBe("rate.limited");
    expect(refusal.details).toMatchObject({ window: "second", limit: CONTROL_PER_SECOND, budget: "node_control" });
    expect(refusal.message).toContain("for this node");

    // The HTTP answer itself: 429 with Retry-After, and a refused heartbeat records no life sign.
    // The second's budget is spent first, then one heartbeat more: refused unless a new second
    // began in between (then it was served, changed the record, and the round goes again).
    let retryAfterSeconds = 0;
    for (let tries = 0; retryAfterSeconds === 0; tries += 1) {
      if (tries === 20) throw new Error("no heartbeat sent after a spent budget was refused in 20 rounds");
      await refusalAmong(() => noisy.node.heartbeat());
      const before = await lastHeartbeatOf(noisy.user, noisy.node.nodeId);
      const answer = await noisy.node.client.raw("POST", RPC_ROUTES.heartbeat.path, { running: [] });
      if (answer.status === 200) continue;
      expect(answer.status).toBe(429);
      expect(Number(answer.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
      expect(await lastHeartbeatOf(noisy.user, noisy.node.nodeId)).toBe(before);
      retryAfterSeconds = Number(answer.headers.get("retry-after"));
    }

    // The same node over NATS meets the same budget on this replica.
    const overNats = natsNodePlane({ link, appId: noisy.tenant.app.app_id }).withNodeKey(noisy.node.apiKey);
    expect((await refusalAmong(() => overNats.heartbeat({ running: [] }))).code).toBe("rate.limited");

    // Another node is served meanwhile, and the noisy one again once it waits as told.
    await expect(quiet.node.heartbeat()).resolves.toMatchObject({ draining: false });
    await sleep(retryAfterSeconds * 1000);
    await expect(noisy.node.heartbeat()).resolves.toMatchObject({ draining: false });
  });

  it("refuses a node polling in a loop past its budget of all calls, while its heartbeat after waiting and another node's poll are served", async () => {
    const noisy = await tenantWithNode("budget-polls");
    const quiet = await tenantWithNode("budget-polls-quiet");

    const refusal = await refusalAmong(() => noisy.node.poll(0));
    expect(refusal.code).toBe("rate.limited");
    expect(refusal.details).toMatchObject({ window: "second", limit: PER_SECOND, budget: "node" });

    await expect(quiet.node.poll(0)).resolves.toEqual([]);
    const retryAfter = (refusal as { retryAfterSeconds?: number }).retryAfterSeconds ?? 1;
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    await sleep(retryAfter * 1000);
    await expect(noisy.node.heartbeat()).resolves.toMatchObject({ draining: false });
  });
});
