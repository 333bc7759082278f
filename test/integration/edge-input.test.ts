import { once } from "node:events";
import { Kvm } from "@nats-io/kv";
import { connect, headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ComputeClient } from "../harness/client.js";
import {
  NODE_NATS_HEADERS,
  NODE_NATS_OPERATIONS,
  RPC_ROUTES,
  type RpcName,
  type RpcRoute,
} from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { BUCKETS, decodeJson, JsonBucket, requestRpc, subjects } from "../../shared/nats/index.js";
import { expectRefusal, openSocket, postJson, readResponse } from "../harness/edge-probe.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { storeSnapshot } from "../harness/store-snapshot.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

/**
 * What the edge does with input an outside prober sends: ids that are wildcards or
 * separators, bodies that are not objects, oversized and mistyped bodies, and signed URLs
 * with parameters added. Every answer is a 4xx envelope, and a refused request changes
 * nothing. One replica of each service; rate limits high enough never to answer first.
 */
const MAX_ARTIFACT_BYTES = 4096;
const ENV = {
  CJS_RATE_LIMIT_PER_MINUTE: "1000000",
  CJS_RATE_LIMIT_PER_HOUR: "100000000",
  CJS_MAX_ARTIFACT_BYTES: String(MAX_ARTIFACT_BYTES),
};

/** The wildcard and separator characters of the probe, alone and inside ids of each kind. */
const HOSTILE = [
  "*",
  ">",
  ".",
  " ",
  "\0",
  "/",
  "..",
  "../x",
  "key_*",
  "key_>",
  "job_*",
  "job_>",
  "nod_*",
  "nod_>",
  "a b",
  "x\0y",
  "",
];

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let baseUrl: string;
let user: ComputeClient;
let anonymous: ComputeClient;
let userKeys: string[];
let node: FakeNode;
let nodeKey: string;
let jobId: string;
let nc: NatsConnection;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 }, ENV);
  baseUrl = system.gateways[0]!.baseUrl;
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user, anonymous } = await signedInClient(baseUrl, tenant));
  userKeys = [
    (await user.call("createApiKey", { name: "first" })).key,
    (await user.call("createApiKey", { name: "second" })).key,
  ];
  const registered = await user.call("registerNode", {
    name: "edge-node",
    hostname: "edge.local",
    pool_id: "edge-pool",
    capacity: { cpu: 2, memory_mb: 1024, gpu: 0, slots: 1 },
    agent_version: "test",
  });
  nodeKey = registered.api_key;
  node = await FakeNode.register(user, baseUrl, tenant.app.app_id, { pool_id: "edge-pool-2" });
  jobId = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "edge-no-nodes" })).job_id;
  nc = await connect({ servers: nats.url });
});

afterAll(async () => {
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

/** A client with the node key of the node registered first. */
function nodeClient(): ComputeClient {
  return new ComputeClient({ baseUrl, appId: tenant.app.app_id, apiKey: nodeKey });
}

/** The client whose credential a route takes: none, the user's session, or a node's key. */
function callerOf(route: RpcRoute): ComputeClient {
  if (route.auth === "public") return anonymous;
  return route.auth === "node" ? nodeClient() : user;
}

/** Every user key and the node key still authenticate, and the node is not draining. */
async function expectCredentialsWork(): Promise<void> {
  for (const key of userKeys)
    expect(
      (
        await new ComputeClient({ baseUrl, appId: tenant.app.app_id, apiKey: key }).raw(
          "POST",
          RPC_ROUTES.listApiKeys.path,
          {},
        )
      ).status,
    ).toBe(200);
  const beat = await nodeClient().call("heartbeat", { running: [] });
  expect(beat.draining).toBe(false);
}

const LOG_LINE = { seq: 1, stream: "stdout", line: "x", ts: "2026-01-01T00:00:00.000Z" };

/** Each route that takes an id in its body, with the credential that reaches its id check and a body naming `id`. */
const ID_PROBES: Array<{ route: RpcName; as: "user" | "node"; body: (id: string) => Record<string, unknown> }> = [
  { route: "revokeApiKey", as: "user", body: (id) => ({ key_id: id }) },
  { route: "updateApiKey", as: "user", body: (id) => ({ key_id: id, name: "renamed" }) },
  { route: "listUsers", as: "user", body: (id) => ({ cursor: id }) },
  { route: "disableUser", as: "user", body: (id) => ({ user_id: id }) },
  { route: "enableUser", as: "user", body: (id) => ({ user_id: id }) },
  { route: "setUserRole", as: "user", body: (id) => ({ user_id: id, role: "member" }) },
  { route: "retrieveJob", as: "user", body: (id) => ({ job_id: id }) },
  { route: "cancelJob", as: "user", body: (id) => ({ job_id: id }) },
  { route: "retryJob", as: "user", body: (id) => ({ job_id: id }) },
  { route: "logStreamUrl", as: "user", body: (id) => ({ job_id: id }) },
  { route: "presignUpload", as: "user", body: (id) => ({ job_id: id, artifact_id: "out.txt" }) },
  { route: "presignUpload", as: "user", body: (id) => ({ job_id: jobId, artifact_id: id }) },
  { route: "presignDownload", as: "user", body: (id) => ({ job_id: id, artifact_id: "out.txt" }) },
  { route: "presignDownload", as: "user", body: (id) => ({ job_id: jobId, artifact_id: id }) },
  { route: "listJobs", as: "user", body: (id) => ({ node_id: id }) },
  { route: "listJobs", as: "user", body: (id) => ({ cursor: id }) },
  { route: "drainNode", as: "user", body: (id) => ({ node_id: id }) },
  { route: "drainNode", as: "node", body: (id) => ({ node_id: id }) },
  { route: "rotateNodeKey", as: "user", body: (id) => ({ node_id: id }) },
  { route: "rotateNodeKey", as: "node", body: (id) => ({ node_id: id }) },
  { route: "heartbeat", as: "node", body: (id) => ({ running: [{ job_id: id, attempt: 1 }] }) },
  { route: "result", as: "node", body: (id) => ({ job_id: id, attempt: 1, outcome: "succeeded" }) },
  { route: "pushLogs", as: "node", body: (id) => ({ job_id: id, attempt: 1, lines: [LOG_LINE] }) },
];

describe("ids at the edge", () => {
  it("a revoke of a key id that is a wildcard, a separator or holds NUL is 400 request.invalid and leaves every key working", async () => {
    const before = await storeSnapshot(nc);
    for (const keyId of ["*", ">", "key_*", "key_>", "../x", "key_\0", "key_abc\0def", ".", ".."]) {
      const refusal = expectRefusal(
        await user.raw("POST", RPC_ROUTES.revokeApiKey.path, { key_id: keyId }),
        JSON.stringify(keyId),
      );
      expect(refusal.code).toBe("request.invalid");
      // Nothing of NATS's own error or a stack trace leaks.
      expect(JSON.stringify(refusal)).not.toMatch(/invalid key|\sat \S+ \(|\.ts:\d/);
    }
    expect(await storeSnapshot(nc)).toEqual(before);
    await expectCredentialsWork();
  });

  it("every route that takes an id answers a wildcard, separator or NUL id with 400 request.invalid, never 500, and changes nothing", async () => {
    const before = await storeSnapshot(nc);
    for (const probe of ID_PROBES) {
      const client = probe.as === "node" ? nodeClient() : user;
      for (const id of HOSTILE) {
        const context = `${probe.route} ${JSON.stringify(probe.body(id))}`;
        const refusal = expectRefusal(await client.raw("POST", RPC_ROUTES[probe.route].path, probe.body(id)), context);
        expect(refusal.code, context).toBe("request.invalid");
      }
    }
    expect(await storeSnapshot(nc)).toEqual(before);
    await expectCredentialsWork();
  });

  it("the log stream and artifact paths answer a hostile id in the path with a 4xx envelope, never 500", async () => {
    const stored = await user.call("presignUpload", { job_id: jobId, artifact_id: "probe.txt" });
    expect((await fetch(stored.url, { method: "PUT", body: "probe" })).status).toBe(200);
    const download = new URL((await user.call("presignDownload", { job_id: jobId, artifact_id: "probe.txt" })).url);
    for (const id of HOSTILE.filter((text) => text !== "")) {
      const segment = encodeURIComponent(id);
      const stream = await user.raw("GET", `/api/compute/jobs/${segment}/logs`);
      expect(expectRefusal(stream, `stream ${JSON.stringify(id)}`).code).toMatch(
        /^(request\.invalid|route\.not_found|route\.method_not_allowed)$/,
      );
      for (const path of [
        `/api/compute/artifacts/download/${segment}/probe.txt`,
        `/api/compute/artifacts/download/${jobId}/${segment}`,
      ]) {
        const response = await fetch(`${baseUrl}${path}${download.search}`);
        expectRefusal({ status: response.status, headers: response.headers, body: await response.json() }, `${path}`);
      }
    }
  });

  it("a NATS-direct node-plane message with a wildcard job id is request.invalid, as over HTTP", async () => {
    for (const id of ["*", ">", "job_*", "a.b"]) {
      const reply = await nodePlaneRequest(
        "result",
        JSON.stringify({ job_id: id, attempt: 1, outcome: "succeeded" }),
        nodeKey,
      );
      expect(reply.code).toBe("request.invalid");
    }
  });

  it("an operator command with a wildcard application or business id is refused as request.invalid", async () => {
    const business = requestRpc(nc, "adminBusinessCreate", { app_id: "*", name: "probe" });
    await expect(business).rejects.toMatchObject({ code: "request.invalid" });
    const app = requestRpc(nc, "adminAppCreate", { id: "a.b", name: "probe" });
    await expect(app).rejects.toMatchObject({ code: "request.invalid" });
    const created = requestRpc(nc, "adminUserCreate", {
      app_id: tenant.app.app_id,
      business_id: "biz_*",
      email: "probe@example.test",
      password: "a-long-password-1",
    });
    await expect(created).rejects.toMatchObject({ code: "request.invalid" });
  });

  it("a KV key of the wrong shape is refused as request.invalid before NATS sees it", async () => {
    const keys = new JsonBucket(await new Kvm(nc).open(BUCKETS.apiKeys), z.record(z.string(), z.unknown()));
    for (const key of ["*", ">", "key_*", "a.b", "key_\0"]) {
      await expect(keys.get(key)).rejects.toBeInstanceOf(AppError);
      await expect(keys.mutate(key, (record) => record)).rejects.toMatchObject({ code: "request.invalid" });
    }
  });
});

/** One request on a NATS node-plane subject; the decoded envelope. */
async function nodePlaneRequest(operation: string, payload: string, apiKey: string): Promise<Record<string, unknown>> {
  const h = natsHeaders();
  h.set(NODE_NATS_HEADERS.appId, tenant.app.app_id);
  h.set(NODE_NATS_HEADERS.apiKey, apiKey);
  const reply = await nc.request(subjects.nodePlane(operation), payload, { timeout: 10_000, headers: h });
  return decodeJson(reply.data) as Record<string, unknown>;
}

/** JSON bodies that are not objects. */
const NOT_OBJECTS: unknown[] = [null, 0, 42, -1.5, "body", "", [], [{}], true, false];

describe("bodies that are not objects", () => {
  it("a body of null, a number, a string or an array is 400 request.invalid on every route, and changes nothing", async () => {
    const before = await storeSnapshot(nc);
    for (const [name, route] of Object.entries(RPC_ROUTES) as Array<[RpcName, RpcRoute]>) {
      const callers = route.auth === "user_or_node" ? [user, nodeClient()] : [callerOf(route)];
      for (const client of callers) {
        for (const body of NOT_OBJECTS) {
          const context = `${name} ${JSON.stringify(body)}`;
          expect(expectRefusal(await postJson(client, route.path, body), context).code, context).toBe(
            "request.invalid",
          );
        }
      }
    }
    expect(await storeSnapshot(nc)).toEqual(before);
    await expectCredentialsWork();
  });

  it("null on nodes/rotate-key and nodes/drain with a node key rotates and drains nothing", async () => {
    const before = await storeSnapshot(nc);
    expect(expectRefusal(await postJson(node.client, RPC_ROUTES.rotateNodeKey.path, null)).code).toBe(
      "request.invalid",
    );
    expect(expectRefusal(await postJson(node.client, RPC_ROUTES.drainNode.path, null)).code).toBe("request.invalid");
    expect(await storeSnapshot(nc)).toEqual(before);
    expect((await node.heartbeat()).draining).toBe(false);
  });

  it("a null, number, string or array payload on the NATS-direct node plane is request.invalid, and changes nothing", async () => {
    const before = await storeSnapshot(nc);
    for (const operation of Object.keys(NODE_NATS_OPERATIONS)) {
      const key = operation === "register" ? userKeys[0]! : nodeKey;
      for (const body of NOT_OBJECTS) {
        const reply = await nodePlaneRequest(operation, JSON.stringify(body), key);
        expect(reply.code, `${operation} ${JSON.stringify(body)}`).toBe("request.invalid");
      }
    }
    expect(await storeSnapshot(nc)).toEqual(before);
    await expectCredentialsWork();
  });

  it("a POST with no body at all is still read as {}", async () => {
    expect((await node.client.raw("POST", RPC_ROUTES.heartbeat.path)).status).toBe(200);
    const reply = await nodePlaneRequest("heartbeat", "", nodeKey);
    expect(reply.status).toBe("SUCCESS");
  });
});

/** `PUT` head of an upload to `url` announcing `length` bytes, on a connection the client wants kept alive. */
function uploadHead(url: string, length: number, extra = ""): string {
  const target = new URL(url);
  return `PUT ${target.pathname}${target.search} HTTP/1.1\r\nHost: ${target.host}\r\nContent-Length: ${length}\r\nConnection: keep-alive\r\n${extra}\r\n`;
}

describe("413 and content types", () => {
  it("a JSON body announced over the limit gets 413 request.too_large with Connection: close, and the connection ends", async () => {
    const socket = await openSocket(baseUrl);
    const host = new URL(baseUrl).host;
    socket.write(
      `POST ${RPC_ROUTES.listApiKeys.path} HTTP/1.1\r\nHost: ${host}\r\nX-App-ID: ${tenant.app.app_id}\r\nContent-Type: application/json\r\nContent-Length: 5000000\r\nConnection: keep-alive\r\n\r\n{"a":`,
    );
    const response = await readResponse(socket);
    expect(response.status).toBe(413);
    expect(response.headers.connection).toBe("close");
    expect(JSON.parse(response.body)).toMatchObject({ status: "ERROR", code: "request.too_large" });
    const ended = once(socket, "end");
    socket.resume();
    await ended;
    socket.destroy();
  });

  it("an artifact upload announced over the limit gets 413 with Connection: close, and the next request on that connection is not read as its body", async () => {
    const before = await storeSnapshot(nc);
    const { url } = await user.call("presignUpload", { job_id: jobId, artifact_id: "too-big.bin" });
    const socket = await openSocket(baseUrl);
    socket.write(`${uploadHead(url, MAX_ARTIFACT_BYTES * 10)}abc`);
    const response = await readResponse(socket);
    expect(response.status).toBe(413);
    expect(response.headers.connection).toBe("close");
    expect(JSON.parse(response.body)).toMatchObject({
      status: "ERROR",
      code: "request.too_large",
      details: { max_bytes: MAX_ARTIFACT_BYTES },
    });
    // A keep-alive client's next request on the same connection: the server has ended it instead of reading on.
    const ended = once(socket, "end");
    socket.write(`POST ${RPC_ROUTES.listApiKeys.path} HTTP/1.1\r\nHost: x\r\nContent-Length: 0\r\n\r\n`);
    socket.resume();
    await ended;
    socket.destroy();
    // A new connection is served at once.
    expect((await user.raw("POST", RPC_ROUTES.listApiKeys.path, {})).status).toBe(200);
    expect(await storeSnapshot(nc)).toEqual(before);
  });

  it("an artifact upload whose Content-Type is not a media type is 400 request.invalid, and stores nothing", async () => {
    const before = await storeSnapshot(nc);
    const { url } = await user.call("presignUpload", { job_id: jobId, artifact_id: "typed.txt" });
    for (const contentType of ["not a media type", "text", "/plain", "text/"]) {
      const response = await fetch(url, { method: "PUT", body: "hello", headers: { "content-type": contentType } });
      const refusal = expectRefusal(
        { status: response.status, headers: response.headers, body: await response.json() },
        contentType,
      );
      expect(refusal.code, contentType).toBe("request.invalid");
      expect(refusal.details).toMatchObject({ issues: [{ path: "Content-Type" }] });
    }
    expect(await storeSnapshot(nc)).toEqual(before);
    // A JSON operation with the same header is 415: it takes application/json only.
    expect(
      expectRefusal(await user.raw("POST", RPC_ROUTES.listApiKeys.path, "{}", { "content-type": "not a media type" }))
        .code,
    ).toBe("request.unsupported_media_type");
  });
});

/** `url` with `extra` appended to its query. */
function withQuery(url: string, extra: string): string {
  return `${url}&${extra}`;
}

async function fetchRefusal(url: string, init: RequestInit = {}) {
  const response = await fetch(url, init);
  return expectRefusal(
    { status: response.status, headers: response.headers, body: await response.json() },
    url.replace(/signature=[^&]+/, "signature=…"),
  );
}

describe("signed URLs take only their own parameters", () => {
  it("a download URL with an extra or repeated query parameter is 403 url.signature_invalid; the URL as given works", async () => {
    const { url: upload } = await user.call("presignUpload", { job_id: jobId, artifact_id: "signed.txt" });
    expect((await fetch(upload, { method: "PUT", body: "signed" })).status).toBe(200);
    const { url } = await user.call("presignDownload", { job_id: jobId, artifact_id: "signed.txt" });
    const query = new URL(url).searchParams;
    for (const extra of [
      "x=1",
      "download=1",
      `app_id=${query.get("app_id")}`,
      `expires=${query.get("expires")}`,
      `signature=${query.get("signature")}`,
      "scope=prefix",
      "=x",
    ]) {
      expect((await fetchRefusal(withQuery(url, extra))).code, extra).toBe("url.signature_invalid");
    }
    const ok = await fetch(url);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("signed");
  });

  it("an upload URL with an extra or repeated query parameter is refused and stores nothing", async () => {
    const before = await storeSnapshot(nc);
    const { url } = await user.call("presignUpload", { job_id: jobId, artifact_id: "extra.txt" });
    const query = new URL(url).searchParams;
    for (const extra of ["x=1", `business_id=${query.get("business_id")}`, "content_type=text%2Fhtml", "attempt=1"]) {
      expect((await fetchRefusal(withQuery(url, extra), { method: "PUT", body: "nope" })).code, extra).toBe(
        "url.signature_invalid",
      );
    }
    expect(await storeSnapshot(nc)).toEqual(before);
  });

  it("a log stream URL with an extra or repeated query parameter is refused; the URL as given opens the stream", async () => {
    const { url } = await user.call("logStreamUrl", { job_id: jobId });
    const query = new URL(url, baseUrl).searchParams;
    for (const extra of [
      "x=1",
      `caller=${query.get("caller")}`,
      `expires=${query.get("expires")}`,
      "last_event_id=1&last_event_id=2",
    ]) {
      expect((await fetchRefusal(withQuery(`${baseUrl}${url}`, extra))).code, extra).toBe("url.signature_invalid");
    }
    const opened = new AbortController();
    const stream = await fetch(`${baseUrl}${url}&last_event_id=0`, { signal: opened.signal });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toMatch(/^text\/event-stream/);
    opened.abort();
  });
});
