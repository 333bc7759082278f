import { createHash, randomBytes } from "node:crypto";
import { request } from "node:http";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import type { Artifact, PresignedUrl } from "../../shared/contract/index.js";
import { OBJECT_STORES } from "../../shared/nats/index.js";
import { errorCodeOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
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
 * Artifacts end to end against one replica of each service, plus two gateways with their
 * own settings: one whose URLs live a second, one that takes at most 1 MiB.
 */
const SMALL_LIMIT_BYTES = 1024 * 1024;

let nats: NatsHarness;
let system: RunningSystem;
let shortLived: RunningGateway;
let smallLimit: RunningGateway;
let tenant: Tenant;
let user: ComputeClient;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
  shortLived = await startGateway(nats.url, { CJS_ARTIFACT_URL_TTL_SECONDS: "1" });
  smallLimit = await startGateway(nats.url, { CJS_MAX_ARTIFACT_BYTES: String(SMALL_LIMIT_BYTES) });
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
});

afterAll(async () => {
  await Promise.all([shortLived?.stop(), smallLimit?.stop()]);
  await system?.stop();
  await nats?.stop();
});

/** A queued job of the tenant (no node needed to hold artifacts). */
async function submitJob(client = user, pool = "no-nodes"): Promise<string> {
  return (await client.call("submitJob", { type: "shell", command: ["true"], pool_id: pool })).job_id;
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

/**
 * A PUT through `fetch`. `redirect: "error"`: otherwise undici tees a stream body to be able
 * to replay it on a redirect, and the unread copy holds the whole upload in memory.
 */
async function put(url: string, body: RequestInit["body"], headers: Record<string, string> = {}): Promise<Response> {
  return fetch(url, { method: "PUT", body, headers, duplex: "half", redirect: "error" } as RequestInit);
}

/** The error code of an envelope answer, with its status. */
async function refusal(response: Response): Promise<{ status: number; code: unknown }> {
  const body = (await response.json()) as { code?: unknown };
  return { status: response.status, code: body.code };
}

async function upload(jobId: string, artifactId: string, bytes: Uint8Array): Promise<Artifact> {
  const presigned = await user.call("presignUpload", { job_id: jobId, artifact_id: artifactId });
  const response = await put(presigned.url, bytes);
  const envelope = (await response.json()) as { status: string; payload: Artifact };
  expect(response.status, JSON.stringify(envelope)).toBe(200);
  return envelope.payload;
}

/** `url` with one character of its signature changed. */
function withAlteredSignature(url: string): string {
  const parsed = new URL(url);
  const signature = parsed.searchParams.get("signature")!;
  parsed.searchParams.set("signature", `${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`);
  return parsed.toString();
}

/** Random content of `totalBytes`, made block by block as it is sent and hashed on the way; `onBlock` sees the bytes sent so far. */
function generatedBody(totalBytes: number, { blockBytes = 256 * 1024, onBlock = (_sentBytes: number) => {} } = {}) {
  const hash = createHash("sha256");
  let produced = 0;
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (produced >= totalBytes) return controller.close();
      const block = randomBytes(Math.min(blockBytes, totalBytes - produced));
      produced += block.length;
      hash.update(block);
      onBlock(produced);
      controller.enqueue(block);
    },
  });
  return { stream, sent: () => hash.digest("hex") };
}

const collectGarbage = (() => {
  setFlagsFromString("--expose-gc");
  return runInNewContext("gc") as () => void;
})();

function mib(bytes: number): string {
  return (bytes / 1024 / 1024).toFixed(1);
}

/**
 * The peak growth of this process's memory (the gateway serves from it) over a baseline.
 * `sample` runs a full garbage collection first: V8 lets up to 64 MiB of dead buffers pile
 * up before it collects on its own, which would hide whether anything holds the artifact.
 * The transfer calls it every few MiB it moves, so the peak is seen mid-flight. Live
 * memory is the JS heap plus buffers; rss is what the operating system sees.
 */
function watchMemory() {
  const measure = () => {
    // The second collection also frees the buffers the first found dead (they are swept lazily).
    collectGarbage();
    collectGarbage();
    const { rss, heapUsed, external } = process.memoryUsage();
    return { rss, live: heapUsed + external };
  };
  const baseline = measure();
  const peak = { ...baseline };
  return {
    sample() {
      const now = measure();
      peak.rss = Math.max(peak.rss, now.rss);
      peak.live = Math.max(peak.live, now.live);
    },
    growth: () => ({ live: peak.live - baseline.live, rss: peak.rss - baseline.rss }),
  };
}

describe("artifacts through presigned URLs", () => {
  it("round-trip byte for byte with their headers, and show in the job's retrieve", async () => {
    const jobId = await submitJob();
    const bytes = randomBytes(300_000);
    const presigned = await user.call("presignUpload", {
      job_id: jobId,
      artifact_id: "report.txt",
      content_type: "text/plain; charset=utf-8",
    });
    expect(presigned).toMatchObject({
      method: "PUT",
      url: expect.stringContaining(`/api/compute/artifacts/upload/${jobId}/report.txt?`),
    });
    const lifetimeMs = Date.parse(presigned.expires_at) - Date.now();
    expect(lifetimeMs).toBeGreaterThan(890_000);
    expect(lifetimeMs).toBeLessThanOrEqual(900_000);

    const stored = await put(presigned.url, bytes, { "content-type": "application/x-ignored" });
    expect(stored.status).toBe(200);
    const envelope = (await stored.json()) as { status: string; payload: Artifact };
    expect(envelope).toMatchObject({
      status: "SUCCESS",
      payload: {
        artifact_id: "report.txt",
        size_bytes: 300_000,
        sha256: sha256(bytes),
        content_type: "text/plain; charset=utf-8",
        attempt: null,
      },
    });

    const download: PresignedUrl = await user.call("presignDownload", { job_id: jobId, artifact_id: "report.txt" });
    expect(download.method).toBe("GET");
    const response = await fetch(download.url);
    expect(response.status).toBe(200);
    expect(
      Object.fromEntries(
        ["content-type", "content-length", "etag", "content-disposition", "accept-ranges"].map((name) => [
          name,
          response.headers.get(name),
        ]),
      ),
    ).toEqual({
      "content-type": "text/plain; charset=utf-8",
      "content-length": "300000",
      etag: `"${sha256(bytes)}"`,
      "content-disposition": 'attachment; filename="report.txt"',
      "accept-ranges": "bytes",
    });
    expect(Buffer.from(await response.arrayBuffer()).equals(bytes)).toBe(true);
    const head = await fetch(download.url, { method: "HEAD" });
    expect([head.status, head.headers.get("content-length"), head.headers.get("etag"), await head.text()]).toEqual([
      200,
      "300000",
      `"${sha256(bytes)}"`,
      "",
    ]);

    const retrieved = await user.call("retrieveJob", { job_id: jobId });
    expect(retrieved.artifacts).toEqual([envelope.payload]);
  });

  it("answers a Range with 206 and the slice, and an unsatisfiable one with 416", async () => {
    const jobId = await submitJob();
    const bytes = randomBytes(400_000);
    await upload(jobId, "data.bin", bytes);
    const { url } = await user.call("presignDownload", { job_id: jobId, artifact_id: "data.bin" });

    const middle = await fetch(url, { headers: { range: "bytes=131000-263999" } });
    expect(middle.status).toBe(206);
    expect(middle.headers.get("content-range")).toBe("bytes 131000-263999/400000");
    expect(middle.headers.get("content-length")).toBe("133000");
    expect(Buffer.from(await middle.arrayBuffer()).equals(bytes.subarray(131_000, 264_000))).toBe(true);

    const suffix = await fetch(url, { headers: { range: "bytes=-10" } });
    expect(suffix.status).toBe(206);
    expect(Buffer.from(await suffix.arrayBuffer()).equals(bytes.subarray(399_990))).toBe(true);

    const beyond = await fetch(url, { headers: { range: "bytes=400000-" } });
    expect(beyond.headers.get("content-range")).toBe("bytes */400000");
    expect(await refusal(beyond)).toEqual({ status: 416, code: "request.range_not_satisfiable" });
  });

  it("stores an empty artifact, and a second upload of a name replaces the first", async () => {
    const jobId = await submitJob();
    expect(await upload(jobId, "empty", new Uint8Array(0))).toMatchObject({
      size_bytes: 0,
      sha256: sha256(new Uint8Array(0)),
      content_type: "application/octet-stream",
    });
    const { url } = await user.call("presignDownload", { job_id: jobId, artifact_id: "empty" });
    const empty = await fetch(url);
    expect([empty.status, empty.headers.get("content-length"), (await empty.arrayBuffer()).byteLength]).toEqual([
      200,
      "0",
      0,
    ]);

    await upload(jobId, "log.txt", Buffer.from("first"));
    const second = await upload(jobId, "log.txt", Buffer.from("second version"));
    const { artifacts } = await user.call("retrieveJob", { job_id: jobId });
    expect(artifacts.map((artifact) => artifact.artifact_id)).toEqual(["empty", "log.txt"]);
    expect(artifacts[1]).toEqual(second);
    const latest = await fetch((await user.call("presignDownload", { job_id: jobId, artifact_id: "log.txt" })).url);
    expect(await latest.text()).toBe("second version");
  });

  it("leaves nothing behind when the client goes away mid-upload", async () => {
    const jobId = await submitJob();
    const jsm = await jetstreamManager(system.gateways[0]!.nc);
    const storedMessages = async () => (await jsm.streams.info(`OBJ_${OBJECT_STORES.artifacts}`)).state.messages;
    const before = await storedMessages();
    const { url } = await user.call("presignUpload", { job_id: jobId, artifact_id: "cut.bin" });
    // 2 MiB of a longer body, then the client is gone (its own connection, so no pool keeps one open).
    const cut = request(url, { method: "PUT", agent: false, headers: { "content-length": String(8 * 1024 * 1024) } });
    cut.on("error", () => {});
    cut.write(randomBytes(2 * 1024 * 1024));
    await expect.poll(storedMessages, { timeout: 5000 }).toBeGreaterThan(before);
    cut.destroy();
    await expect.poll(storedMessages, { timeout: 5000 }).toBe(before);
    expect((await user.call("retrieveJob", { job_id: jobId })).artifacts).toEqual([]);
  });

  // 100 MiB through NATS on a loaded 2-core machine took over 30 s once: the bound below is on a hang, not a speed.
  it("streams a 50 MB artifact both ways byte for byte while the gateway's memory stays flat", async () => {
    const jobId = await submitJob();
    await upload(jobId, "warm-up.bin", randomBytes(2 * 1024 * 1024));
    const totalBytes = 50 * 1024 * 1024;
    const sampleEveryBytes = 4 * 1024 * 1024;
    const memory = watchMemory();

    const { url } = await user.call("presignUpload", { job_id: jobId, artifact_id: "big.bin" });
    const body = generatedBody(totalBytes, {
      onBlock: (sentBytes) => sentBytes % sampleEveryBytes === 0 && memory.sample(),
    });
    const stored = await put(url, body.stream, { "content-type": "application/octet-stream" });
    expect(stored.status).toBe(200);
    const sent = body.sent();
    expect(((await stored.json()) as { payload: Artifact }).payload).toMatchObject({
      size_bytes: totalBytes,
      sha256: sent,
    });

    const download = await fetch((await user.call("presignDownload", { job_id: jobId, artifact_id: "big.bin" })).url);
    expect(download.headers.get("content-length")).toBe(String(totalBytes));
    const received = createHash("sha256");
    let receivedBytes = 0;
    for await (const chunk of download.body!) {
      received.update(chunk);
      const before = receivedBytes;
      receivedBytes += chunk.length;
      if (Math.floor(receivedBytes / sampleEveryBytes) > Math.floor(before / sampleEveryBytes)) memory.sample();
    }
    expect(receivedBytes).toBe(totalBytes);
    expect(received.digest("hex")).toBe(sent);

    // Holding the artifact would add 50 MiB to both. Live memory is exact; rss also keeps the
    // dead buffers of the last few MiB moved and what the allocator has not given back.
    const growth = memory.growth();
    const report = `live memory grew by ${mib(growth.live)} MiB, rss by ${mib(growth.rss)} MiB`;
    expect(growth.live, report).toBeLessThan(16 * 1024 * 1024);
    expect(growth.rss, report).toBeLessThan(40 * 1024 * 1024);
  }, 120_000);
});

describe("signed URLs", () => {
  it("refuse an altered signature, path, tenancy or method with 403 url.signature_invalid", async () => {
    const jobId = await submitJob();
    await upload(jobId, "a.txt", Buffer.from("a"));
    await upload(jobId, "b.txt", Buffer.from("b"));
    const { url } = await user.call("presignDownload", { job_id: jobId, artifact_id: "a.txt" });
    const otherTenant = await createTenant(system.gateways[0]!.nc);
    const altered = [
      withAlteredSignature(url),
      url.replace("/a.txt?", "/b.txt?"),
      url.replace(`app_id=${tenant.app.app_id}`, `app_id=${otherTenant.app.app_id}`),
      url.replace(/&?expires=\d+/, (part) => part.replace(/\d+$/, (expires) => String(Number(expires) + 3600))),
      url.split("?")[0]!,
    ];
    for (const candidate of altered)
      expect(await refusal(await fetch(candidate)), candidate).toEqual({ status: 403, code: "url.signature_invalid" });
    expect(await refusal(await put(url, "x"))).toEqual({ status: 405, code: "route.method_not_allowed" });
    const uploadUrl = (await user.call("presignUpload", { job_id: jobId, artifact_id: "a.txt" })).url;
    expect(await refusal(await fetch(uploadUrl.replace("/upload/", "/download/")))).toEqual({
      status: 403,
      code: "url.signature_invalid",
    });
    expect(await (await fetch(url)).text()).toBe("a");
  });

  it("refuse an expired URL with 403 url.expired", async () => {
    const jobId = await submitJob();
    await upload(jobId, "soon.txt", Buffer.from("soon"));
    const { client: shortUser } = await signedInClient(shortLived.baseUrl, tenant);
    const { url, expires_at } = await shortUser.call("presignDownload", { job_id: jobId, artifact_id: "soon.txt" });
    expect(Date.parse(expires_at) - Date.now()).toBeLessThanOrEqual(1000);
    const codeOf = async () => {
      const response = await fetch(url);
      return response.status === 200 ? (await response.text(), "served") : (await refusal(response)).code;
    };
    await expect.poll(codeOf, { timeout: 5000, interval: 200 }).toBe("url.expired");
  });
});

describe("limits and tenancy", () => {
  it("refuses an upload over CJS_MAX_ARTIFACT_BYTES with 413, declared or streamed, and stores nothing", async () => {
    const jobId = await submitJob();
    const { client } = await signedInClient(smallLimit.baseUrl, tenant);
    const presign = () => client.call("presignUpload", { job_id: jobId, artifact_id: "huge.bin" });
    expect(await refusal(await put((await presign()).url, randomBytes(SMALL_LIMIT_BYTES + 1)))).toEqual({
      status: 413,
      code: "request.too_large",
    });
    const streamed = generatedBody(3 * SMALL_LIMIT_BYTES, { blockBytes: 64 * 1024 });
    expect(await refusal(await put((await presign()).url, streamed.stream))).toEqual({
      status: 413,
      code: "request.too_large",
    });
    expect((await user.call("retrieveJob", { job_id: jobId })).artifacts).toEqual([]);
    expect(await errorCodeOf(user.call("presignDownload", { job_id: jobId, artifact_id: "huge.bin" }))).toBe(
      "resource.not_found",
    );
    const exact = await put((await presign()).url, randomBytes(SMALL_LIMIT_BYTES));
    expect(exact.status).toBe(200);
  });

  it("answers another tenant's user, or a job or artifact that does not exist, with 404", async () => {
    const jobId = await submitJob();
    await upload(jobId, "mine.txt", Buffer.from("mine"));
    const { client: stranger } = await signedInClient(
      system.gateways[0]!.baseUrl,
      await createTenant(system.gateways[0]!.nc),
    );
    expect(await errorCodeOf(stranger.call("presignUpload", { job_id: jobId, artifact_id: "x.txt" }))).toBe(
      "resource.not_found",
    );
    expect(await errorCodeOf(stranger.call("presignDownload", { job_id: jobId, artifact_id: "mine.txt" }))).toBe(
      "resource.not_found",
    );
    expect(await errorCodeOf(user.call("presignDownload", { job_id: jobId, artifact_id: "absent.txt" }))).toBe(
      "resource.not_found",
    );
    expect(
      await errorCodeOf(user.call("presignUpload", { job_id: `job_${"0".repeat(20)}`, artifact_id: "x.txt" })),
    ).toBe("resource.not_found");
  });

  it("presigns with a JWT only and checks the artifact name", async () => {
    const jobId = await submitJob();
    const key = await user.call("createApiKey", { name: "ci" });
    const withKey = user.with({ apiKey: key.key });
    expect(await errorCodeOf(withKey.call("presignUpload", { job_id: jobId, artifact_id: "x.txt" }))).toBe(
      "auth.jwt_required",
    );
    for (const artifact_id of ["..", "a/b", "", "x".repeat(201)]) {
      expect(await errorCodeOf(user.call("presignUpload", { job_id: jobId, artifact_id })), artifact_id).toBe(
        "request.invalid",
      );
    }
  });
});

/** An operator business in the tenant's app with a signed-in admin: its nodes serve the operator pools. */
async function operatorClient(): Promise<ComputeClient> {
  const operator = await createTenant(system.gateways[0]!.nc, { appId: tenant.app.app_id, operator: true });
  return (await signedInClient(system.gateways[0]!.baseUrl, operator)).client;
}

describe("the agent's upload URL", () => {
  it("comes with each assignment and takes any name of the job after replacing {artifact_id}", async () => {
    const node = await FakeNode.register(user, system.gateways[0]!.baseUrl, tenant.app.app_id, { pool_id: "agents" });
    const jobId = await submitJob(user, "agents");
    const [assignment] = await node.poll(10);
    expect(assignment?.job_id).toBe(jobId);
    const template = assignment!.artifact_upload_url!;
    expect(template).toContain(`/api/compute/artifacts/upload/${jobId}/{artifact_id}?`);

    const stored = await put(template.replace("{artifact_id}", "out.log"), "hello from the agent");
    expect(stored.status).toBe(200);
    expect(((await stored.json()) as { payload: Artifact }).payload).toMatchObject({
      artifact_id: "out.log",
      size_bytes: 20,
      attempt: 1,
    });
    expect((await put(template.replace("{artifact_id}", "metrics.json"), "{}")).status).toBe(200);
    const otherJob = await submitJob();
    expect(await refusal(await put(template.replace(jobId, otherJob).replace("{artifact_id}", "x"), "x"))).toEqual({
      status: 403,
      code: "url.signature_invalid",
    });

    const { artifacts } = await user.call("retrieveJob", { job_id: jobId });
    expect(artifacts.map(({ artifact_id, attempt }) => ({ artifact_id, attempt }))).toEqual([
      { artifact_id: "metrics.json", attempt: 1 },
      { artifact_id: "out.log", attempt: 1 },
    ]);
  });

  it("stores an operator node's upload with the job's owner, not the node's business", async () => {
    const operator = await operatorClient();
    const node = await FakeNode.register(operator, system.gateways[0]!.baseUrl, tenant.app.app_id, {
      pool_id: "default",
    });
    const jobId = await submitJob(user, "default");
    const [assignment] = await node.poll(10);
    expect(assignment?.job_id).toBe(jobId);
    expect(
      (await put(assignment!.artifact_upload_url!.replace("{artifact_id}", "result.csv"), "a,b\n1,2\n")).status,
    ).toBe(200);
    expect(
      (await user.call("retrieveJob", { job_id: jobId })).artifacts.map((artifact) => artifact.artifact_id),
    ).toEqual(["result.csv"]);
  });
});
