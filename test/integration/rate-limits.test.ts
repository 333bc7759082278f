import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient, type RawResponse } from "../harness/client.js";
import { RPC_ROUTES } from "../../shared/contract/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { ManualClock } from "../harness/manual-clock.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { startServiceProcess } from "../harness/service-process.js";
import { metricsRegistry } from "../../shared/runtime/index.js";
import {
  createTenant,
  signedInClient,
  startGateway,
  startNodeRegistry,
  startScheduler,
  type RunningGateway,
  type RunningService,
  type Tenant,
} from "../harness/system.js";

/**
 * Per-user rate limits over two gateway replicas that share one counter in NATS KV and one
 * hand-moved clock: 20 requests a minute, 30 an hour (the second's bound, 100, out of the
 * way; its own replicas below test it). Each test uses a tenant of its own, so its budget
 * starts empty whatever the other tests did.
 */
const LIMITS = { CJS_RATE_LIMIT_PER_SECOND: "100", CJS_RATE_LIMIT_PER_MINUTE: "20", CJS_RATE_LIMIT_PER_HOUR: "30" };
const LIST_KEYS = RPC_ROUTES.listApiKeys;

let nats: NatsHarness;
let clock: ManualClock;
let gateways: RunningGateway[];
let services: RunningService[];

beforeAll(async () => {
  nats = await startNats();
  clock = new ManualClock();
  services = await Promise.all([startScheduler(nats.url), startNodeRegistry(nats.url)]);
  gateways = await Promise.all([startGateway(nats.url, LIMITS, { clock }), startGateway(nats.url, LIMITS, { clock })]);
});

afterAll(async () => {
  await Promise.all((gateways ?? []).map((gateway) => gateway.stop()));
  await Promise.all((services ?? []).map((service) => service.stop()));
  await nats?.stop();
});

/** A tenant's user with one client per gateway replica, all carrying the same access token. */
async function userOn(tenant: Tenant): Promise<ComputeClient[]> {
  const { tokens } = await signedInClient(gateways[0]!.baseUrl, tenant);
  return gateways.map(
    (gateway) =>
      new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id, accessToken: tokens.access_token }),
  );
}

/** One counted request (list API keys) through a client. */
function request(client: ComputeClient): Promise<RawResponse> {
  return client.raw(LIST_KEYS.method, LIST_KEYS.path, {});
}

/** `count` requests one after another, alternating between the clients; every status, in order. */
async function spend(clients: ComputeClient[], count: number): Promise<number[]> {
  const statuses: number[] = [];
  for (let index = 0; index < count; index += 1)
    statuses.push((await request(clients[index % clients.length]!)).status);
  return statuses;
}

const ok = (count: number) => Array.from({ length: count }, () => 200);

const PER = { second: "a second", minute: "a minute", hour: "an hour" } as const;

function expectRateLimited(response: RawResponse, window: keyof typeof PER): number {
  expect(response.status).toBe(429);
  expect(response.body).toMatchObject({ status: "ERROR", code: "rate.limited", details: { window } });
  expect((response.body as { message: string }).message).toContain(PER[window]);
  const retryAfter = response.headers.get("retry-after");
  expect(retryAfter).toMatch(/^\d+$/);
  return Number(retryAfter);
}

describe("rate limits across gateway replicas", () => {
  it("20 requests spread over both replicas pass and the 21st, on either replica, answers 429 rate.limited with Retry-After", async () => {
    const clients = await userOn(await createTenant(gateways[0]!.nc));
    expect(await spend(clients, 20)).toEqual(ok(20));
    const retryAfter = expectRateLimited(await request(clients[0]!), "minute");
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    expectRateLimited(await request(clients[1]!), "minute");
  });

  it("a retry after exactly Retry-After seconds succeeds, and one second earlier is still refused", async () => {
    const clients = await userOn(await createTenant(gateways[0]!.nc));
    expect(await spend(clients, 20)).toEqual(ok(20));
    clock.advance(7_300);
    const retryAfter = expectRateLimited(await request(clients[1]!), "minute");
    expect(retryAfter).toBe(53);
    clock.advance((retryAfter - 1) * 1000);
    expectRateLimited(await request(clients[0]!), "minute");
    clock.advance(1000);
    expect((await request(clients[1]!)).status).toBe(200);
  });

  it("every counted answer, error or not, carries RateLimit-Limit, -Remaining, -Reset and -Policy; on a 429 -Reset equals Retry-After", async () => {
    const clients = await userOn(await createTenant(gateways[0]!.nc));
    const first = await request(clients[0]!);
    expect(first.status).toBe(200);
    expect(
      Object.fromEntries(
        ["limit", "remaining", "reset", "policy"].map((name) => [name, first.headers.get(`ratelimit-${name}`)]),
      ),
    ).toEqual({
      limit: "20",
      remaining: "19",
      reset: "60",
      policy: "100;w=1, 20;w=60, 30;w=3600",
    });
    clock.advance(10_500);
    // A refused body is counted too, and its error answer carries the headers.
    const invalid = await clients[1]!.raw(LIST_KEYS.method, LIST_KEYS.path, { unexpected: true });
    expect(invalid.status).toBe(400);
    expect([invalid.headers.get("ratelimit-remaining"), invalid.headers.get("ratelimit-reset")]).toEqual(["18", "50"]);
    expect(await spend(clients, 18)).toEqual(ok(18));
    const refused = await request(clients[0]!);
    const retryAfter = expectRateLimited(refused, "minute");
    expect(refused.headers.get("ratelimit-remaining")).toBe("0");
    expect(refused.headers.get("ratelimit-limit")).toBe("20");
    expect(refused.headers.get("ratelimit-reset")).toBe(String(retryAfter));
  });

  it("past 30 requests in an hour, answers 429 naming the hour until the hour window resets", async () => {
    const tenant = await createTenant(gateways[0]!.nc);
    const [jwt] = await userOn(tenant);
    // An API key: the access token would expire while the clock moves through the hour.
    const { key } = await jwt!.call("createApiKey", { name: "hourly" });
    const clients = gateways.map(
      (gateway) => new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id, apiKey: key }),
    );
    expect(await spend(clients, 19)).toEqual(ok(19));
    expectRateLimited(await request(clients[0]!), "minute");
    clock.advance(60_000);
    expect(await spend(clients, 10)).toEqual(ok(10));
    const refused = await request(clients[1]!);
    const retryAfter = expectRateLimited(refused, "hour");
    expect(retryAfter).toBe(3540);
    expect(refused.headers.get("ratelimit-limit")).toBe("30");
    expect(refused.headers.get("ratelimit-reset")).toBe("3540");
    clock.advance((retryAfter - 1) * 1000);
    expectRateLimited(await request(clients[0]!), "hour");
    clock.advance(1000);
    expect((await request(clients[1]!)).status).toBe(200);
  });

  it("two users of one application, and users of two applications, have budgets of their own", async () => {
    const first = await createTenant(gateways[0]!.nc);
    const exhausted = await userOn(first);
    expect(await spend(exhausted, 20)).toEqual(ok(20));
    expectRateLimited(await request(exhausted[0]!), "minute");
    const sameApp = await userOn(await createTenant(gateways[0]!.nc, { appId: first.app.app_id }));
    const otherApp = await userOn(await createTenant(gateways[0]!.nc));
    expect(await spend(sameApp, 20)).toEqual(ok(20));
    expect(await spend(otherApp, 20)).toEqual(ok(20));
    expectRateLimited(await request(exhausted[1]!), "minute");
  });

  it("60 requests at once over both replicas against a limit of 20 admit exactly 20", async () => {
    const clients = await userOn(await createTenant(gateways[0]!.nc));
    const answers = await Promise.all(Array.from({ length: 60 }, (_, index) => request(clients[index % 2]!)));
    const statuses = answers.map((answer) => answer.status);
    expect(statuses.filter((status) => status === 200)).toHaveLength(20);
    expect(statuses.filter((status) => status === 429)).toHaveLength(40);
    for (const answer of answers.filter((each) => each.status === 429)) expectRateLimited(answer, "minute");
  });

  it("200 requests of one user at once, within its limits, all pass: concurrent requests do not starve each other", async () => {
    // The default minute (1000); a burst bound above the 200, which the default (50) is not.
    const burst = { CJS_RATE_LIMIT_PER_SECOND: "10000" };
    const roomy = await Promise.all([startGateway(nats.url, burst), startGateway(nats.url, burst)]);
    try {
      const tenant = await createTenant(roomy[0]!.nc);
      const { tokens } = await signedInClient(roomy[0]!.baseUrl, tenant);
      const clients = roomy.map(
        (gateway) =>
          new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id, accessToken: tokens.access_token }),
      );
      const answers = await Promise.all(Array.from({ length: 200 }, (_, index) => request(clients[index % 2]!)));
      expect(answers.map((answer) => answer.status)).toEqual(ok(200));
      // Each was counted: its own count, or a token of a lease counted ahead (that every request is counted exactly
      // once, leases included, is rate-limit-copies.test.ts's).
      for (const answer of answers) expect(Number(answer.headers.get("ratelimit-remaining"))).toBeLessThan(1000);
    } finally {
      await Promise.all(roomy.map((gateway) => gateway.stop()));
    }
  });

  it("a node key's polls and heartbeats are not counted: they pass after its user exhausted the limit", async () => {
    const tenant = await createTenant(gateways[0]!.nc);
    const clients = await userOn(tenant);
    const node = await FakeNode.register(clients[0]!, gateways[1]!.baseUrl, tenant.app.app_id, {
      pool_id: "rate-limits",
    });
    expect(await spend(clients, 19)).toEqual(ok(19));
    expectRateLimited(await request(clients[1]!), "minute");
    for (let round = 0; round < 25; round += 1) {
      await expect(node.poll(0)).resolves.toEqual([]);
      await expect(node.heartbeat()).resolves.toBeDefined();
    }
    const poll = await node.client.raw(RPC_ROUTES.poll.method, RPC_ROUTES.poll.path, { wait_seconds: 0 });
    expect(poll.status).toBe(200);
    expect(poll.headers.get("ratelimit-limit")).toBeNull();
    expectRateLimited(await request(clients[0]!), "minute");
  });

  it("opening a job log stream with a credential counts as a request and is refused with the envelope past the limit", async () => {
    const clients = await userOn(await createTenant(gateways[0]!.nc));
    const unknownJob = await clients[0]!.raw("GET", "/api/compute/jobs/job_00000000000000000000/logs");
    expect(unknownJob.status).toBe(404);
    expect(unknownJob.headers.get("ratelimit-remaining")).toBe("19");
    expect(await spend(clients, 19)).toEqual(ok(19));
    expectRateLimited(await clients[1]!.raw("GET", "/api/compute/jobs/job_00000000000000000000/logs"), "minute");
  });

  it("sign-in, a public operation, is neither counted nor refused once the user's budget is spent", async () => {
    const tenant = await createTenant(gateways[0]!.nc);
    const clients = await userOn(tenant);
    expect(await spend(clients, 20)).toEqual(ok(20));
    const anonymous = new ComputeClient({ baseUrl: gateways[1]!.baseUrl, appId: tenant.app.app_id });
    const login = await anonymous.raw(RPC_ROUTES.login.method, RPC_ROUTES.login.path, {
      email: tenant.user.email,
      password: tenant.password,
    });
    expect(login.status).toBe(200);
    expect(login.headers.get("ratelimit-limit")).toBeNull();
  });
});

describe("the burst bound: requests a second", () => {
  const BURST = { CJS_RATE_LIMIT_PER_SECOND: "5", CJS_RATE_LIMIT_PER_MINUTE: "1000", CJS_RATE_LIMIT_PER_HOUR: "30000" };
  let bursty: RunningGateway[];
  let burstClock: ManualClock;

  beforeAll(async () => {
    burstClock = new ManualClock();
    bursty = await Promise.all([
      startGateway(nats.url, BURST, { clock: burstClock }),
      startGateway(nats.url, BURST, { clock: burstClock }),
    ]);
  });

  afterAll(async () => {
    await Promise.all((bursty ?? []).map((gateway) => gateway.stop()));
  });

  async function burstUser(): Promise<ComputeClient[]> {
    const tenant = await createTenant(bursty[0]!.nc);
    const { tokens } = await signedInClient(bursty[0]!.baseUrl, tenant);
    return bursty.map(
      (gateway) =>
        new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id, accessToken: tokens.access_token }),
    );
  }

  it("the 6th request in one second over both replicas answers 429 naming the second, Retry-After 1; the next second admits again", async () => {
    const clients = await burstUser();
    expect(await spend(clients, 5)).toEqual(ok(5));
    const refused = await request(clients[1]!);
    expect(expectRateLimited(refused, "second")).toBe(1);
    expect(refused.headers.get("ratelimit-limit")).toBe("5");
    expect(refused.headers.get("ratelimit-policy")).toBe("5;w=1, 1000;w=60, 30000;w=3600");
    burstClock.advance(1_000);
    const admitted = await request(clients[0]!);
    expect(admitted.status).toBe(200);
    expect(admitted.headers.get("ratelimit-remaining")).toBe("4");
  });

  it("requests at once past a fifth of the second's limit are held back and served in turn, not refused", async () => {
    const paced = async () =>
      (await metricsRegistry.getSingleMetric("cjs_rate_limit_paced_total")?.get())?.values[0]?.value ?? 0;
    const [client] = await burstUser();
    const before = await paced();
    // 5 a second: one goes at once, the others wait their turn on this replica.
    const answers = await Promise.all(Array.from({ length: 5 }, () => request(client!)));
    expect(answers.map((answer) => answer.status)).toEqual(ok(5));
    expect(await paced()).toBeGreaterThan(before);
  });

  it("30 requests at once over both replicas against 5 a second admit exactly 5, and each second after admits 5 more", async () => {
    const clients = await burstUser();
    const answers = await Promise.all(Array.from({ length: 30 }, (_, index) => request(clients[index % 2]!)));
    expect(answers.filter((answer) => answer.status === 200)).toHaveLength(5);
    for (const answer of answers.filter((each) => each.status !== 200)) expectRateLimited(answer, "second");
    burstClock.advance(1_000);
    const next = await Promise.all(Array.from({ length: 10 }, (_, index) => request(clients[index % 2]!)));
    expect(next.filter((answer) => answer.status === 200)).toHaveLength(5);
  });
});

describe("rate-limit settings", () => {
  it("a gateway started with limits of 0 refuses to start and names each setting", async () => {
    const gateway = startServiceProcess({
      service: "gateway",
      env: {
        NATS_URL: nats.url,
        CJS_PORT: "0",
        CJS_RATE_LIMIT_PER_SECOND: "0",
        CJS_RATE_LIMIT_PER_MINUTE: "0",
        CJS_RATE_LIMIT_PER_HOUR: "-1",
      },
    });
    const { code } = await gateway.exited;
    expect(code).toBe(2);
    expect(gateway.output()).toContain("CJS_RATE_LIMIT_PER_SECOND");
    expect(gateway.output()).toContain("CJS_RATE_LIMIT_PER_MINUTE");
    expect(gateway.output()).toContain("CJS_RATE_LIMIT_PER_HOUR");
  });
});
