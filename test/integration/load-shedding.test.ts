import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RPC_ROUTES } from "../../shared/contract/index.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { startGateway, type RunningGateway } from "../harness/system.js";

/**
 * Load shedding (@fastify/under-pressure): while the gateway's event loop is saturated, a
 * new request is refused at once with 503 `service.unavailable` and `Retry-After`, and
 * served again once the loop is free.
 */
let nats: NatsHarness;
let gateway: RunningGateway;

beforeAll(async () => {
  nats = await startNats();
  gateway = await startGateway(nats.url, { CJS_SHED_EVENT_LOOP_DELAY_MS: "100", CJS_SHED_RETRY_AFTER_SECONDS: "3" });
});

afterAll(async () => {
  await gateway?.stop();
  await nats?.stop();
});

function listKeys() {
  return gateway.gateway.app.inject({
    method: "POST",
    url: RPC_ROUTES.listApiKeys.path,
    headers: { "content-type": "application/json", "x-app-id": "no-such-app" },
    payload: "{}",
  });
}

/** Keeps this process's event loop busy for `ms` in one turn, as a gateway drowning in work would. */
function blockEventLoop(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

describe("load shedding", () => {
  it("refuses requests with 503 service.unavailable and Retry-After while the event loop is saturated, and serves again after", async () => {
    // Not saturated: the request reaches the handler (an unknown app is refused there).
    expect((await listKeys()).json()).toMatchObject({ code: "app.unknown" });

    // Saturated until a sample of the delay sees it (under-pressure samples once a second).
    let refused = await listKeys();
    await expect
      .poll(
        async () => {
          blockEventLoop(400);
          refused = await listKeys();
          return refused.statusCode;
        },
        { timeout: 20_000, interval: 0 },
      )
      .toBe(503);
    expect(refused.headers["retry-after"]).toBe("3");
    expect(refused.json()).toEqual({
      status: "ERROR",
      code: "service.unavailable",
      message: expect.any(String),
      details: { retry_after_seconds: 3 },
    });

    // Free again: the next sample sees an idle loop.
    await expect.poll(async () => (await listKeys()).statusCode, { timeout: 20_000, interval: 200 }).not.toBe(503);
    expect((await listKeys()).json()).toMatchObject({ code: "app.unknown" });
  });
});
