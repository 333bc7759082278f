import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { logStreamPath, RPC_ROUTES } from "../../shared/contract/index.js";
import { logLines, runningJobWithLogs } from "../harness/log-jobs.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import {
  createTenant,
  signedInClient,
  startGateway,
  startSystem,
  type RunningGateway,
  type RunningSystem,
  type Tenant,
} from "../harness/system.js";

/**
 * CORS on the real stack: one gateway with no origins set (the default), one that lists two,
 * and one that lists one with a rate limit of one request a minute, for the 429.
 */
const ORIGIN = "https://app.example.com";
const SECOND_ORIGIN = "http://localhost:5173";
const STRANGER = "https://evil.example.net";
const LIST_KEYS = RPC_ROUTES.listApiKeys;

let nats: NatsHarness;
let system: RunningSystem;
let cors: RunningGateway;
let limited: RunningGateway;
let tenant: Tenant;
let token: string;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
  [cors, limited] = await Promise.all([
    startGateway(nats.url, { CJS_CORS_ORIGINS: `${ORIGIN}, ${SECOND_ORIGIN}` }),
    startGateway(nats.url, { CJS_CORS_ORIGINS: ORIGIN, CJS_RATE_LIMIT_PER_MINUTE: "1" }),
  ]);
  tenant = await createTenant(system.gateways[0]!.nc);
  token = (await signedInClient(cors.baseUrl, tenant)).tokens.access_token;
});

afterAll(async () => {
  await Promise.all([cors?.stop(), limited?.stop()]);
  await system?.stop();
  await nats?.stop();
});

function preflight(baseUrl: string, path: string, origin: string, method = "POST"): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": method,
      "access-control-request-headers": "authorization, content-type, x-app-id",
    },
  });
}

function listKeys(baseUrl: string, headers: Record<string, string>): Promise<Response> {
  return fetch(`${baseUrl}${LIST_KEYS.path}`, {
    method: "POST",
    headers: { "x-app-id": tenant.app.app_id, "content-type": "application/json", ...headers },
    body: "{}",
  });
}

/** The comma-separated names of a header, lower-cased. */
function names(response: Response, header: string): string[] {
  return (response.headers.get(header) ?? "")
    .split(",")
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== "");
}

/** Every header whose name starts with `access-control-`. */
function corsHeaders(response: Response): string[] {
  return [...response.headers.keys()].filter((name) => name.startsWith("access-control-"));
}

function expectCorsAnswer(response: Response, origin = ORIGIN): void {
  expect(response.headers.get("access-control-allow-origin")).toBe(origin);
  expect(names(response, "access-control-expose-headers")).toEqual(
    expect.arrayContaining([
      "x-request-id",
      "traceparent",
      "retry-after",
      "ratelimit-limit",
      "ratelimit-remaining",
      "ratelimit-reset",
      "ratelimit-policy",
      "www-authenticate",
    ]),
  );
  expect(names(response, "vary")).toContain("origin");
}

describe("with CJS_CORS_ORIGINS set", () => {
  it("answers an allowed origin's preflight 204, echoing the origin, with the methods, headers and max age", async () => {
    for (const origin of [ORIGIN, SECOND_ORIGIN]) {
      const response = await preflight(cors.baseUrl, LIST_KEYS.path, origin);
      expect(response.status).toBe(204);
      expect(response.headers.get("access-control-allow-origin")).toBe(origin);
      expect(names(response, "access-control-allow-methods")).toEqual(
        expect.arrayContaining(["get", "head", "post", "put"]),
      );
      expect(names(response, "access-control-allow-headers")).toEqual(
        expect.arrayContaining([
          "authorization",
          "content-type",
          "x-app-id",
          "x-api-key",
          "idempotency-key",
          "last-event-id",
          "traceparent",
          "x-request-id",
        ]),
      );
      expect(response.headers.get("access-control-max-age")).toBe("600");
      expect(response.headers.get("access-control-allow-credentials")).toBeNull();
      expect(names(response, "vary")).toContain("origin");
    }
  });

  it("lets an allowed origin read a success and the headers a client acts on", async () => {
    const response = await listKeys(cors.baseUrl, { origin: ORIGIN, authorization: `Bearer ${token}` });
    expect(response.status).toBe(200);
    expectCorsAnswer(response);
    expect(response.headers.get("ratelimit-remaining")).not.toBeNull();
    expect(await response.json()).toMatchObject({ status: "SUCCESS" });
  });

  it("puts the same headers on error envelopes: a 401 with its challenge, a 404", async () => {
    const unauthorized = await listKeys(cors.baseUrl, { origin: ORIGIN });
    expect(unauthorized.status).toBe(401);
    expectCorsAnswer(unauthorized);
    expect(unauthorized.headers.get("www-authenticate")).toBe("Bearer");
    expect(await unauthorized.json()).toMatchObject({ status: "ERROR", code: "auth.missing_credentials" });

    const notFound = await fetch(`${cors.baseUrl}/api/no/such/operation`, {
      method: "POST",
      headers: { origin: ORIGIN },
    });
    expect(notFound.status).toBe(404);
    expectCorsAnswer(notFound);
    expect(await notFound.json()).toMatchObject({ status: "ERROR", code: "route.not_found" });
  });

  it("puts them on a 429 beside its Retry-After and rate-limit headers", async () => {
    const own = await createTenant(system.gateways[0]!.nc);
    const { tokens } = await signedInClient(limited.baseUrl, own);
    const headers = { origin: ORIGIN, "x-app-id": own.app.app_id, authorization: `Bearer ${tokens.access_token}` };
    const send = () =>
      fetch(`${limited.baseUrl}${LIST_KEYS.path}`, {
        method: "POST",
        headers: { ...headers, "content-type": "application/json" },
        body: "{}",
      });
    expect((await send()).status).toBe(200);
    const refused = await send();
    expect(refused.status).toBe(429);
    expectCorsAnswer(refused);
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused.headers.get("ratelimit-limit")).not.toBeNull();
    expect(await refused.json()).toMatchObject({ status: "ERROR", code: "rate.limited" });
  });

  it("refuses the preflight of an origin it does not list with 403 cors.origin_not_allowed and no CORS headers", async () => {
    const response = await preflight(cors.baseUrl, LIST_KEYS.path, STRANGER);
    expect(response.status).toBe(403);
    expect(corsHeaders(response)).toEqual([]);
    expect(await response.json()).toMatchObject({ status: "ERROR", code: "cors.origin_not_allowed" });
  });

  it("serves another request from an unlisted origin without CORS headers, so the browser withholds the answer", async () => {
    const response = await listKeys(cors.baseUrl, { origin: STRANGER, authorization: `Bearer ${token}` });
    expect(response.status).toBe(200);
    expect(corsHeaders(response)).toEqual([]);
    expect(names(response, "vary")).toContain("origin");
  });

  it("answers an OPTIONS that is not a preflight as an unknown operation", async () => {
    const response = await fetch(`${cors.baseUrl}${LIST_KEYS.path}`, {
      method: "OPTIONS",
      headers: { origin: ORIGIN },
    });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ status: "ERROR", code: "route.not_found" });
  });

  it("lets an allowed origin read a job's log as Server-Sent Events", async () => {
    const user = new ComputeClient({ baseUrl: cors.baseUrl, appId: tenant.app.app_id, accessToken: token });
    const { jobId, push } = await runningJobWithLogs(user, cors.baseUrl, tenant.app.app_id, "cors-logs");
    await push(
      1,
      logLines(1, 1, () => "hello from the job"),
    );
    expect((await preflight(cors.baseUrl, logStreamPath(jobId), ORIGIN, "GET")).status).toBe(204);

    const abort = new AbortController();
    const response = await fetch(`${cors.baseUrl}${logStreamPath(jobId)}`, {
      headers: { origin: ORIGIN, "x-app-id": tenant.app.app_id, authorization: `Bearer ${token}` },
      signal: abort.signal,
    });
    try {
      expect(response.status).toBe(200);
      expect(response.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expectCorsAnswer(response);
      const reader = response.body!.getReader();
      const decoder = new TextDecoder();
      let received = "";
      while (!received.includes("hello from the job")) {
        const { done, value } = await reader.read();
        if (done) throw new Error(`the stream ended before the line: ${received}`);
        received += decoder.decode(value, { stream: true });
      }
      expect(received).toContain("event: log");
    } finally {
      abort.abort();
    }
  });

  it("lets an allowed origin upload and download an artifact through its signed URLs", async () => {
    const user = new ComputeClient({ baseUrl: cors.baseUrl, appId: tenant.app.app_id, accessToken: token });
    const { job_id } = await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "no-nodes" });
    const upload = await user.call("presignUpload", { job_id, artifact_id: "report.txt" });
    const uploadPath = new URL(upload.url).pathname + new URL(upload.url).search;
    expect((await preflight(cors.baseUrl, uploadPath, ORIGIN, "PUT")).status).toBe(204);

    const put = await fetch(upload.url, {
      method: "PUT",
      headers: { origin: ORIGIN, "content-type": "text/plain" },
      body: "the report",
    });
    expect(put.status).toBe(200);
    expectCorsAnswer(put);

    const download = await user.call("presignDownload", { job_id, artifact_id: "report.txt" });
    const get = await fetch(download.url, { headers: { origin: ORIGIN } });
    expect(get.status).toBe(200);
    expectCorsAnswer(get);
    expect(names(get, "access-control-expose-headers")).toEqual(
      expect.arrayContaining(["content-disposition", "content-range", "accept-ranges", "etag"]),
    );
    expect(await get.text()).toBe("the report");

    const altered = await fetch(download.url.replace(/signature=[^&]+/, "signature=AAAA"), {
      headers: { origin: ORIGIN },
    });
    expect(altered.status).toBe(403);
    expectCorsAnswer(altered);
  });
});

describe("without CJS_CORS_ORIGINS", () => {
  it("answers a preflight like any unknown operation, 404 with the envelope and no CORS headers", async () => {
    const response = await preflight(system.gateways[0]!.baseUrl, LIST_KEYS.path, ORIGIN);
    expect(response.status).toBe(404);
    expect(corsHeaders(response)).toEqual([]);
    expect(await response.json()).toMatchObject({ status: "ERROR", code: "route.not_found" });
  });

  it("adds no CORS header and no Vary to an answer to a request with an Origin", async () => {
    const response = await listKeys(system.gateways[0]!.baseUrl, { origin: ORIGIN, authorization: `Bearer ${token}` });
    expect(response.status).toBe(200);
    expect(corsHeaders(response)).toEqual([]);
    expect(response.headers.get("vary")).toBeNull();
  });
});
