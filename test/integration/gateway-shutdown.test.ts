import type { Subscription } from "@nats-io/transport-node";
import { afterAll, beforeAll, expect, it } from "vitest";
import { RPC_ROUTES } from "../../shared/contract/index.js";
import { isErrorCode } from "../../shared/errors/index.js";
import { subjects } from "../../shared/nats/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startGateway, startSystem, type RunningSystem } from "../harness/system.js";

/**
 * A gateway stopped with requests in flight answers every one of them before it closes:
 * none is reset. The slow requests are long polls (`wait_seconds: 30`), each on its own
 * keep-alive connection, against a gateway replica of their own that the test stops.
 */
const POLLS = 12;

let nats: NatsHarness;
let system: RunningSystem;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

/** Resolves once the scheduler has been asked `count` polls: each poll is then inside the gateway. */
function pollsSeen(subscription: Subscription, count: number): Promise<void> {
  return (async () => {
    let seen = 0;
    for await (const _msg of subscription) if (++seen >= count) return;
  })();
}

it("a gateway stopped during long polls answers every one of them with a complete envelope, resetting none", async () => {
  const entry = system.gateways[0]!;
  const tenant = await createTenant(entry.nc);
  const { client: user } = await signedInClient(entry.baseUrl, tenant);
  const doomed = await startGateway(nats.url);
  const nodes = await Promise.all(
    Array.from({ length: POLLS }, () =>
      FakeNode.register(user, doomed.baseUrl, tenant.app.app_id, { pool_id: "shutdown" }),
    ),
  );

  const watch = entry.nc.subscribe(subjects.nodePoll());
  const seen = pollsSeen(watch, POLLS);
  const route = RPC_ROUTES.poll;
  const polls = nodes.map((node) =>
    node.client.raw(route.method, route.path, { wait_seconds: 30 }).then(
      (answer) => ({ answer }),
      (error: unknown) => ({ error }),
    ),
  );
  await seen;
  watch.unsubscribe();

  await doomed.stop();
  const outcomes = await Promise.all(polls);

  for (const outcome of outcomes) {
    expect(outcome).not.toHaveProperty("error");
    const { status, body } = (
      outcome as { answer: { status: number; body: { status?: unknown; code?: unknown; payload?: unknown } } }
    ).answer;
    if (status === 200) expect(body).toMatchObject({ status: "SUCCESS", payload: { jobs: [] } });
    else expect(body.status === "ERROR" && isErrorCode(body.code)).toBe(true);
  }
});
