import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../services/node-registry/config.js";
import { buildNodeRegistry, type NodeRegistry } from "../../services/node-registry/node-registry.js";
import { type ListNodesRequest, type UserContext } from "../../shared/contract/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { createLogger, newId } from "../../shared/runtime/index.js";
import { type NatsHarness, startNats } from "../harness/nats-server.js";

/** The registry on a clock the test moves: offline after 90 s of silence, hidden one hour later. */
const logger = createLogger({ service: "node-registry", level: process.env.TEST_LOG_LEVEL ?? "silent" });
const HIDE_AFTER_SECONDS = 3600;
let fakeNow = Date.parse("2026-03-01T00:00:00.000Z");
const clock = { now: () => fakeNow };

let nats: NatsHarness;
let nc: NatsConnection;
let registry: NodeRegistry;

beforeAll(async () => {
  nats = await startNats();
  nc = await connect({ servers: nats.url });
  const config = loadConfig({
    NATS_URL: nats.url,
    CJS_LIVENESS_SWEEP_MS: "3600000",
    CJS_NODES_HIDE_OFFLINE_AFTER_SECONDS: String(HIDE_AFTER_SECONDS),
  });
  registry = buildNodeRegistry({ nc, logger, clock, config });
  await registry.start();
});

afterAll(async () => {
  await registry?.stop();
  await nc?.close();
  await nats?.stop();
});

const caller: UserContext = {
  app_id: "app1",
  business_id: newId("biz"),
  user_id: newId("usr"),
  role: "member",
  key_id: null,
  operator: false,
};

async function register(name: string): Promise<string> {
  const body = {
    name,
    hostname: `${name}.local`,
    pool_id: "own",
    capacity: { cpu: 1, memory_mb: 512 },
    agent_version: "1.0.0",
  };
  return (await requestRpc(nc, "nodeRegister", { caller, body })).node.node_id;
}

async function listed(body: Partial<ListNodesRequest> = {}): Promise<Record<string, string>> {
  const { items } = await requestRpc(nc, "nodeList", { caller, body });
  return Object.fromEntries(items.map((node) => [node.node_id, node.state]));
}

describe("nodes/list and long-offline nodes", () => {
  it("hides a node offline for longer than the setting unless include_offline or state offline asks for it", async () => {
    const silent = await register("silent");
    fakeNow += 91_000;
    // Offline, but not for long: still listed, swept or not.
    expect(await listed()).toEqual({ [silent]: "offline" });
    expect(await registry.sweepNow()).toBe(1);
    fakeNow += HIDE_AFTER_SECONDS * 1000 - 1000;
    const fresh = await register("fresh");
    expect(await listed()).toEqual({ [silent]: "offline", [fresh]: "online" });

    fakeNow += 2000;
    expect(await listed()).toEqual({ [fresh]: "online" });
    expect(await listed({ include_offline: true })).toEqual({ [silent]: "offline", [fresh]: "online" });
    expect(await listed({ state: "offline" })).toEqual({ [silent]: "offline" });
  });
});
