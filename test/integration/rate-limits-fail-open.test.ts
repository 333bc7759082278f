import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { RPC_ROUTES } from "../../shared/contract/index.js";
import { BUCKETS } from "../../shared/nats/index.js";
import { metricsRegistry } from "../../shared/runtime/index.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startGateway, type RunningGateway } from "../harness/system.js";

/**
 * When the counters cannot be read, the limiter lets requests through uncounted rather
 * than failing them. Its own file: breaking the counter bucket would disturb other tests.
 */
let nats: NatsHarness;
let gateway: RunningGateway;

beforeAll(async () => {
  nats = await startNats();
  gateway = await startGateway(nats.url, { CJS_RATE_LIMIT_PER_MINUTE: "2" });
});

afterAll(async () => {
  await gateway?.stop();
  await nats?.stop();
});

async function failOpenCount(): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("cjs_rate_limit_fail_open_total")?.get();
  return metric?.values.reduce((sum, { value }) => sum + value, 0) ?? 0;
}

describe("rate limits when the counters are unreachable", () => {
  it("let requests through uncounted, without RateLimit headers, and count them in cjs_rate_limit_fail_open_total", async () => {
    const { client } = await signedInClient(gateway.baseUrl, await createTenant(gateway.nc));
    const route = RPC_ROUTES.listApiKeys;
    const counted = await client.raw(route.method, route.path, {});
    expect(counted.status).toBe(200);
    expect(counted.headers.get("ratelimit-remaining")).toBe("1");

    const jsm = await jetstreamManager(gateway.nc);
    await jsm.streams.delete(`KV_${BUCKETS.rateLimits}`);
    const before = await failOpenCount();
    const answers = [];
    for (let index = 0; index < 3; index += 1) answers.push(await client.raw(route.method, route.path, {}));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(answers.map((answer) => answer.headers.get("ratelimit-limit"))).toEqual([null, null, null]);
    expect((await failOpenCount()) - before).toBe(3);
  });
});
