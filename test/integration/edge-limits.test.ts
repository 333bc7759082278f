import { once } from "node:events";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { ErrorEnvelope } from "../../shared/contract/index.js";
import { expectRefusal, openSocket, postJson, readResponse } from "../harness/edge-probe.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { storeSnapshot } from "../harness/store-snapshot.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";

/**
 * Input at the limits of what the edge accepts: bodies just under the body limit, the
 * longest path parameters, and signatures altered where a lax decoder would not notice.
 * Every refusal is a 4xx envelope that changes nothing.
 */
const ENV = { CJS_RATE_LIMIT_PER_MINUTE: "1000000", CJS_RATE_LIMIT_PER_HOUR: "100000000" };
const MAX_BODY_BYTES = 1_048_576;

let nats: NatsHarness;
let system: RunningSystem;
let baseUrl: string;
let user: ComputeClient;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 }, ENV);
  baseUrl = system.gateways[0]!.baseUrl;
  const tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(baseUrl, tenant));
  nc = await connect({ servers: nats.url });
});

afterAll(async () => {
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

/** A submit body whose JSON text is `bytes` long, most of it in `env`. */
function submitOfSize(bytes: number): Record<string, unknown> {
  const body = { type: "shell", command: ["true"], pool_id: "limits-no-nodes", env: {} as Record<string, string> };
  const value = 60_000;
  let index = 0;
  while (JSON.stringify(body).length + value + 20 < bytes) body.env[`V${index++}`] = "x".repeat(value);
  const last = `V${index}`;
  body.env[last] = "";
  body.env[last] = "x".repeat(bytes - JSON.stringify(body).length);
  return body;
}

describe("a body just under the body limit", () => {
  // Under the body limit, but the job record (the body plus the scheduler's fields) is over the message limit.
  it("a submit whose stored record would pass the message limit answers 413 and stores nothing", async () => {
    const before = await storeSnapshot(nc);
    const response = await postJson(user, "/api/compute/jobs/submit", submitOfSize(MAX_BODY_BYTES - 500));
    const envelope = expectRefusal(response);
    expect(response.status).toBe(413);
    expect(envelope.code).toBe("request.too_large");
    expect(envelope.message).toMatch(/job record .*\d+-byte message limit/);
    expect(envelope.details).toEqual({ max_bytes: expect.any(Number) });
    expect(await storeSnapshot(nc)).toEqual(before);
  });

  it("a submit whose env fills the body limit answers a 4xx envelope naming the limit and stores nothing", async () => {
    const body = submitOfSize(MAX_BODY_BYTES - 64);
    expect(JSON.stringify(body).length).toBe(MAX_BODY_BYTES - 64);
    const before = await storeSnapshot(nc);
    const response = await postJson(user, "/api/compute/jobs/submit", body);
    const envelope = expectRefusal(response);
    expect(response.status).toBe(413);
    expect(envelope.code).toBe("request.too_large");
    expect(envelope.message).toMatch(/\d+-byte message limit/);
    expect(envelope.details).toEqual({ max_bytes: expect.any(Number) });
    expect(await storeSnapshot(nc)).toEqual(before);
  });
});

describe("the longest path parameters", () => {
  it("an artifact named with 101 to 200 characters uploads and downloads", async () => {
    const jobId = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "limits-no-nodes" }))
      .job_id;
    for (const length of [101, 150, 200]) {
      const artifactId = `${"a".repeat(length - 4)}.txt`;
      const presigned = await user.call("presignUpload", { job_id: jobId, artifact_id: artifactId });
      const stored = await fetch(presigned.url, { method: "PUT", body: `bytes of ${length}` });
      expect(stored.status, await stored.clone().text()).toBe(200);
      const download = await fetch(
        (await user.call("presignDownload", { job_id: jobId, artifact_id: artifactId })).url,
      );
      expect(download.status).toBe(200);
      expect(await download.text()).toBe(`bytes of ${length}`);
    }
  });

  it("a path parameter longer than any id answers the 400 envelope, not the router's 414", async () => {
    const before = await storeSnapshot(nc);
    const response = await fetch(
      `${baseUrl}/api/compute/artifacts/upload/job_0000000000000000000/${"a".repeat(201)}?signature=x`,
      { method: "PUT", body: "x" },
    );
    const envelope = expectRefusal({ status: response.status, headers: response.headers, body: await response.json() });
    expect(response.status).toBe(400);
    expect(envelope.code).toBe("request.invalid");
    expect(envelope.message).toContain("longer than 200 characters");
    expect(await storeSnapshot(nc)).toEqual(before);
  });
});

describe("requests the HTTP parser refuses before any route runs", () => {
  const submitHead = (extra: string) =>
    `POST /api/compute/jobs/submit HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nX-App-ID: probe\r\n${extra}\r\n`;
  const cases: { name: string; request: string; status: number; code: string }[] = [
    {
      name: "bad chunked encoding",
      request: `${submitHead("Transfer-Encoding: chunked\r\n")}zz\r\n{}\r\n0\r\n\r\n`,
      status: 400,
      code: "request.invalid",
    },
    {
      name: "two Content-Length headers",
      request: `${submitHead("Content-Length: 2\r\nContent-Length: 3\r\n")}{}`,
      status: 400,
      code: "request.invalid",
    },
    {
      name: "a space before a header's colon",
      request: `${submitHead("Content-Length : 2\r\n")}{}`,
      status: 400,
      code: "request.invalid",
    },
    {
      name: "a 64 KiB header",
      request: `${submitHead(`X-Padding: ${"p".repeat(64 * 1024)}\r\nContent-Length: 2\r\n`)}{}`,
      status: 431,
      code: "request.headers_too_large",
    },
  ];

  for (const { name, request, status, code } of cases) {
    it(`${name} answers ${status} ${code} in the envelope and closes the connection`, async () => {
      const before = await storeSnapshot(nc);
      const socket = await openSocket(baseUrl);
      const closed = once(socket, "close");
      socket.write(request);
      const response = await readResponse(socket);
      socket.resume();
      await closed;
      expect(response.status).toBe(status);
      expect(response.headers["content-type"]).toBe("application/json");
      expect(response.headers.connection).toBe("close");
      const envelope = ErrorEnvelope.parse(JSON.parse(response.body));
      expect(envelope).toMatchObject({ status: "ERROR", code });
      expect(response.body).not.toMatch(/HPE_|FST_|statusCode/);
      expect(await storeSnapshot(nc)).toEqual(before);
    });
  }
});

// Last: the jobs it makes would slow the store snapshots of the tests above.
describe("every body size near the body limit", () => {
  // The message to the scheduler carries the request's trace headers besides the body: a
  // check that counted the data alone let some of these through to a NATS refusal (503).
  it("each answers a success or 413 request.too_large, never a 503 to retry", async () => {
    const answers = new Map<number, number>();
    for (let bytes = MAX_BODY_BYTES - 3_000; bytes <= MAX_BODY_BYTES; bytes += 16) {
      const response = await postJson(user, "/api/compute/jobs/submit", submitOfSize(bytes));
      answers.set(response.status, (answers.get(response.status) ?? 0) + 1);
      expect([200, 413], `${bytes} bytes: ${JSON.stringify(response.body).slice(0, 200)}`).toContain(response.status);
      if (response.status === 413) expect(expectRefusal(response).code).toBe("request.too_large");
    }
    // The sweep crosses the limit: both answers occur.
    expect([...answers.keys()].sort()).toEqual([200, 413]);
    // About 190 submits of nearly 1 MiB each: past the default timeout on a busy machine.
  }, 120_000);
});
