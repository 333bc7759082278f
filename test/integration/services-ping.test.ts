import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildBilling } from "../../services/billing/billing.js";
import { loadConfig as loadBillingConfig } from "../../services/billing/config.js";
import { loadConfig as loadLogRelayConfig } from "../../services/log-relay/config.js";
import { buildLogRelay } from "../../services/log-relay/log-relay.js";
import { loadConfig as loadNodeRegistryConfig } from "../../services/node-registry/config.js";
import { buildNodeRegistry } from "../../services/node-registry/node-registry.js";
import { loadConfig as loadSchedulerConfig } from "../../services/scheduler/config.js";
import { buildScheduler } from "../../services/scheduler/scheduler.js";
import { loadConfig as loadWebhooksConfig } from "../../services/webhooks/config.js";
import { buildWebhooks } from "../../services/webhooks/webhooks.js";
import { decodeJson, PingReply, subjects } from "../../shared/nats/index.js";
import { createLogger, type Service, systemClock } from "../../shared/runtime/index.js";
import { type NatsHarness, startNats } from "../harness/nats-server.js";

/** Upper bound for replies that must come; the gather ends as soon as they have. */
const ANSWER_WAIT_MS = 5_000;
/** How long a stopped replica gets to (wrongly) answer before we count the replies. */
const SILENCE_WAIT_MS = 500;

const logger = createLogger({ service: "test", level: "silent" });

const SERVICES: { name: string; build: (nc: NatsConnection) => Service }[] = [
  {
    name: "scheduler",
    build: (nc) => buildScheduler({ nc, logger, clock: systemClock, config: loadSchedulerConfig({}) }),
  },
  {
    name: "node-registry",
    build: (nc) => buildNodeRegistry({ nc, logger, clock: systemClock, config: loadNodeRegistryConfig({}) }),
  },
  {
    name: "log-relay",
    build: (nc) => buildLogRelay({ nc, logger, clock: systemClock, config: loadLogRelayConfig({}) }),
  },
  { name: "billing", build: (nc) => buildBilling({ nc, logger, clock: systemClock, config: loadBillingConfig({}) }) },
  {
    name: "webhooks",
    build: (nc) => buildWebhooks({ nc, logger, clock: systemClock, config: loadWebhooksConfig({}) }),
  },
];

let nats: NatsHarness;
const connections: NatsConnection[] = [];

async function connectClient(): Promise<NatsConnection> {
  const nc = await connect({ servers: nats.url });
  connections.push(nc);
  return nc;
}

/** Gathers ping replies until `maxMessages` have come or `maxWaitMs` has passed. */
async function ping(nc: NatsConnection, service: string, maxMessages: number, maxWaitMs: number): Promise<PingReply[]> {
  const replies: PingReply[] = [];
  const messages = await nc.requestMany(subjects.servicePing(service), undefined, {
    strategy: "count",
    maxMessages,
    maxWait: maxWaitMs,
  });
  for await (const msg of messages) replies.push(PingReply.parse(decodeJson(msg.data)));
  return replies;
}

beforeAll(async () => {
  nats = await startNats();
});

afterAll(async () => {
  await Promise.all(connections.map((nc) => nc.close()));
  await nats?.stop();
});

describe.each(SERVICES)("$name", ({ name, build }) => {
  it("every replica answers the ping with its own instance id, and a stopped replica no longer does", async () => {
    const first = build(await connectClient());
    const second = build(await connectClient());
    expect([first.ready(), second.ready()]).toEqual([false, false]);
    await first.start();
    await second.start();
    expect([first.ready(), second.ready()]).toEqual([true, true]);
    const client = await connectClient();

    const before = await ping(client, name, 2, ANSWER_WAIT_MS);
    expect(before).toHaveLength(2);
    expect(before.every((reply) => reply.service === name)).toBe(true);
    const instances = new Set(before.map((reply) => reply.instance));
    expect(instances.size).toBe(2);

    await first.stop();
    expect([first.ready(), second.ready()]).toEqual([false, true]);

    // Asking for two replies makes the gather wait out SILENCE_WAIT_MS, giving a wrong second answer its chance.
    const after = await ping(client, name, 2, SILENCE_WAIT_MS);
    expect(after).toHaveLength(1);
    expect(instances).toContain(after[0]?.instance);

    await second.stop();
  });
});
