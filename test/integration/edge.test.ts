import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { ErrorEnvelope, SuccessEnvelope } from "../../shared/contract/index.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startGateway, type RunningGateway, type Tenant } from "../harness/system.js";

let nats: NatsHarness;
let gateway: RunningGateway;
let tenant: Tenant;
let client: ComputeClient;
let apiKey: string;

beforeAll(async () => {
  nats = await startNats();
  gateway = await startGateway(nats.url, { CJS_MAX_BODY_BYTES: "4096" });
  tenant = await createTenant(gateway.nc);
  ({ client } = await signedInClient(gateway.baseUrl, tenant));
  apiKey = (await client.call("createApiKey", { name: "edge" })).key;
});

afterAll(async () => {
  await gateway?.stop();
  await nats?.stop();
});

/** Sends a request and checks it got the error envelope: no payload, a code, a message. */
async function expectError(request: Promise<{ status: number; body: unknown }>, status: number, code: string) {
  const response = await request;
  expect(response.status).toBe(status);
  const envelope = ErrorEnvelope.parse(response.body);
  expect(envelope.code).toBe(code);
  expect(response.body).not.toHaveProperty("payload");
  return envelope;
}

describe("the envelope on every response", () => {
  it("wraps success as status SUCCESS, a message and an object payload", async () => {
    const response = await client.raw("POST", "/api/compute/api-keys/list", {});
    expect(response.status).toBe(200);
    expect(SuccessEnvelope.parse(response.body).payload).toHaveProperty("items");
  });

  it("answers an unknown path with 404 route.not_found", async () => {
    await expectError(client.raw("POST", "/api/compute/nothing-here", {}), 404, "route.not_found");
  });

  it("answers a wrong method with 405 and an Allow header", async () => {
    const response = await client.raw("GET", "/api/compute/api-keys/list");
    await expectError(Promise.resolve(response), 405, "route.method_not_allowed");
    expect(response.headers.get("allow")).toBe("POST");
  });

  it("answers malformed JSON with 400 request.malformed_json", async () => {
    await expectError(
      client.raw("POST", "/api/compute/api-keys/list", "{not json", { "content-type": "application/json" }),
      400,
      "request.malformed_json",
    );
  });

  it("answers a body that is not JSON with 415", async () => {
    await expectError(
      client.raw("POST", "/api/compute/api-keys/list", "name=x", {
        "content-type": "application/x-www-form-urlencoded",
      }),
      415,
      "request.unsupported_media_type",
    );
    await expectError(
      client.raw("POST", "/api/compute/api-keys/list", "hello", { "content-type": "text/plain" }),
      415,
      "request.unsupported_media_type",
    );
  });

  it("answers a body over the limit with 413 and changes nothing", async () => {
    const before = await client.call("listApiKeys", {});
    await expectError(
      client.raw("POST", "/api/compute/api-keys/create", { name: "x".repeat(8000) }),
      413,
      "request.too_large",
    );
    expect(await client.call("listApiKeys", {})).toEqual(before);
  });

  it("answers a schema violation with 400 request.invalid listing each field path and problem, and changes nothing", async () => {
    const before = await client.call("listApiKeys", {});
    const envelope = await expectError(
      client.raw("POST", "/api/compute/api-keys/create", {
        name: "",
        maxConcurrentJobs: "ten",
        allowedJobTypes: ["Bad Type"],
        colour: "red",
      }),
      400,
      "request.invalid",
    );
    const paths = (envelope.details?.issues as Array<{ path: string; message: string }>)
      .map((issue) => issue.path)
      .sort();
    expect(paths).toEqual(["allowedJobTypes[0]", "colour", "maxConcurrentJobs", "name"]);
    expect(await client.call("listApiKeys", {})).toEqual(before);
  });

  it("answers a missing X-App-ID with 400 app.missing and an unknown one with 401 app.unknown", async () => {
    const bare = (appId: string) => new ComputeClient({ baseUrl: gateway.baseUrl, appId, apiKey });
    await expectError(bare("").raw("POST", "/api/compute/api-keys/list", {}), 400, "app.missing");
    await expectError(bare("no-such-app").raw("POST", "/api/compute/api-keys/list", {}), 401, "app.unknown");
    await expectError(bare("../../etc").raw("POST", "/api/compute/api-keys/list", {}), 401, "app.unknown");
  });

  it("answers a missing credential with 401 auth.missing_credentials and a bad one with 401 auth.invalid_credentials", async () => {
    const anonymous = new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id });
    await expectError(anonymous.raw("POST", "/api/compute/api-keys/list", {}), 401, "auth.missing_credentials");
    await expectError(
      anonymous.with({ apiKey: "cjs_not-a-key" }).raw("POST", "/api/compute/api-keys/list", {}),
      401,
      "auth.invalid_credentials",
    );
    await expectError(
      anonymous.with({ accessToken: "a.b.c" }).raw("POST", "/api/compute/api-keys/list", {}),
      401,
      "auth.invalid_credentials",
    );
    await expectError(
      anonymous.raw("POST", "/api/compute/api-keys/list", {}, { authorization: "Basic dXNlcjpwYXNz" }),
      401,
      "auth.invalid_credentials",
    );
  });

  it("answers an API key on a session-only operation with 403 auth.jwt_required", async () => {
    const withKey = new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id, apiKey });
    await expectError(withKey.raw("POST", "/api/compute/api-keys/create", { name: "x" }), 403, "auth.jwt_required");
  });

  it("answers a record that is not the caller's with 404 resource.not_found", async () => {
    await expectError(
      client.raw("POST", "/api/compute/api-keys/revoke", { key_id: "key_00000000000000000000" }),
      404,
      "resource.not_found",
    );
  });

  it("treats a POST without a body as an empty object", async () => {
    const response = await client.raw("POST", "/api/compute/api-keys/list");
    expect(response.status).toBe(200);
  });
});

describe("request ids", () => {
  it("echoes a caller's X-Request-ID and makes one when none is sent", async () => {
    const echoed = await client.raw("POST", "/api/compute/api-keys/list", {}, { "x-request-id": "trace-abc.123" });
    expect(echoed.headers.get("x-request-id")).toBe("trace-abc.123");
    const made = await client.raw("POST", "/api/compute/nothing", {});
    expect(made.headers.get("x-request-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("replaces an X-Request-ID that is not a sane token", async () => {
    const response = await client.raw("POST", "/api/compute/api-keys/list", {}, { "x-request-id": "x".repeat(500) });
    expect(response.headers.get("x-request-id")).not.toBe("x".repeat(500));
  });
});

describe("operability endpoints", () => {
  it("serves Prometheus metrics with HTTP latency by route and status, NATS latency and process metrics", async () => {
    const text = await (await fetch(`${gateway.opsUrl}/metrics`)).text();
    expect(text).toContain(
      'cjs_http_request_duration_seconds_bucket{le="0.005",route="/api/compute/api-keys/list",method="POST",status="200"}',
    );
    expect(text).toContain("cjs_nats_request_duration_seconds");
    expect(text).toMatch(/^process_cpu_user_seconds_total \d/m);
  });

  it("does not serve /metrics on the public API port: 404 route.not_found, no series", async () => {
    const response = await fetch(`${gateway.baseUrl}/metrics`);
    expect(response.status).toBe(404);
    const text = await response.text();
    expect(JSON.parse(text)).toMatchObject({ status: "ERROR", code: "route.not_found" });
    expect(text).not.toContain("cjs_");
  });

  it("reports live and ready", async () => {
    expect((await fetch(`${gateway.baseUrl}/healthz`)).status).toBe(200);
    const ready = await fetch(`${gateway.baseUrl}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ ready: true, checks: { nats: true, gateway: true } });
  });
});

describe("a dependency down", () => {
  it("answers 503 service.unavailable with Retry-After when NATS is gone, and recovers when it is back", async () => {
    const other = await createTenant(gateway.nc);
    const anonymous = new ComputeClient({ baseUrl: gateway.baseUrl, appId: other.app.app_id });
    await nats.kill();
    const response = await anonymous.raw("POST", "/api/auth/LOGIN_EMAIL", {
      email: other.user.email,
      password: other.password,
    });
    await expectError(Promise.resolve(response), 503, "service.unavailable");
    expect(Number(response.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);
    expect(JSON.stringify(response.body)).not.toMatch(/nats|jetstream|stack|at \//i);
    await nats.restart();
    await expect
      .poll(
        async () =>
          (await anonymous.raw("POST", "/api/auth/LOGIN_EMAIL", { email: other.user.email, password: other.password }))
            .status,
        { timeout: 15_000 },
      )
      .toBe(200);
  });
});
