import { createHash, randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { jetstreamManager } from "@nats-io/jetstream";
import { connect, headers as natsHeaders, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type NatsLink, natsLink, natsNodePlane, type NodePlane } from "../../clients/agent/index.js";
import type { ComputeClient } from "../harness/client.js";
import { NATS_UPLOAD_CHUNK_MAX_BYTES, NODE_NATS_HEADERS, type RpcRequest } from "../../shared/contract/index.js";
import { decodeJson, encodeJson, OBJECT_STORES, subjects } from "../../shared/nats/index.js";
import { errorCodeOf } from "../harness/error-code.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

/**
 * The gateway's NATS-direct node plane against the whole system: the same credential
 * checks, schemas and envelopes as HTTP, and artifact uploads streamed over NATS.
 */
const MAX_ARTIFACT_BYTES = 16 * 1024 * 1024;
const ENV = { CJS_MAX_ARTIFACT_BYTES: String(MAX_ARTIFACT_BYTES), CJS_NATS_UPLOAD_IDLE_SECONDS: "3" };

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;
let apiKey: string;
let nc: NatsConnection;
let link: NatsLink;
let tempDir: string;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 2, schedulers: 1, registries: 1 }, ENV);
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
  apiKey = (await user.call("createApiKey", { name: "nats node plane" })).key;
  nc = await connect({ servers: nats.url });
  link = natsLink({ url: nats.url, credentials: {}, inboxPrefix: "_INBOX", name: "test-agent" });
  tempDir = await mkdtemp(join(tmpdir(), "cjs-node-nats-"));
});

afterAll(async () => {
  await link?.close();
  await nc?.close();
  await system?.stop();
  await nats?.stop();
  if (tempDir) await rm(tempDir, { recursive: true, force: true });
});

const REGISTER: RpcRequest<"registerNode"> = {
  name: "nats-node",
  hostname: "nats.local",
  capacity: { cpu: 4, memory_mb: 4096, gpu: 0, slots: 2 },
  agent_version: "test",
};

/** A node registered over NATS in `pool` of `appId`, and its NATS node plane. */
async function registerOverNats(
  pool: string,
  appId = tenant.app.app_id,
  key = apiKey,
): Promise<{ nodeId: string; nodeKey: string; plane: NodePlane }> {
  const registered = await natsNodePlane({ link, appId }).register({ ...REGISTER, pool_id: pool }, key);
  return {
    nodeId: registered.node_id,
    nodeKey: registered.api_key,
    plane: natsNodePlane({ link, appId }).withNodeKey(registered.api_key),
  };
}

/** One raw request on a node-plane subject: the decoded envelope the gateway answered. */
async function rawRequest(
  subject: string,
  body: Uint8Array | string,
  headerValues: Record<string, string> = {},
): Promise<Record<string, unknown>> {
  const h = natsHeaders();
  for (const [name, value] of Object.entries(headerValues)) h.set(name, value);
  const reply = await nc.request(subject, body, { timeout: 10_000, headers: h });
  return decodeJson(reply.data) as Record<string, unknown>;
}

function sha256(bytes: Uint8Array): string {
  return createHash("sha256").update(bytes).digest("hex");
}

async function submit(pool: string): Promise<string> {
  return (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool, max_attempts: 1 })).job_id;
}

/**
 * Polls over NATS until the job is delivered, then waits for it to read `running` (its
 * start is written a moment after the node got it, decision 0095); returns its assignment.
 */
async function pollFor(plane: NodePlane, jobId: string) {
  for (let tries = 0; tries < 20; tries += 1) {
    const { jobs } = await plane.poll({ wait_seconds: 5 });
    const found = jobs.find((job) => job.job_id === jobId);
    if (found) {
      await expect
        .poll(async () => (await user.call("retrieveJob", { job_id: jobId })).job.state, { timeout: 10_000 })
        .toBe("running");
      return found;
    }
  }
  throw new Error(`job ${jobId} never reached the node`);
}

describe("the NATS node plane's credentials", () => {
  it("an unknown node key is answered with the auth.invalid_credentials envelope", async () => {
    const envelope = await rawRequest(subjects.nodePlane("heartbeat"), JSON.stringify({ running: [] }), {
      [NODE_NATS_HEADERS.appId]: tenant.app.app_id,
      [NODE_NATS_HEADERS.apiKey]: "cjs_00000000000000000000000000000000000000000000000000000000",
    });
    expect(envelope).toMatchObject({ status: "ERROR", code: "auth.invalid_credentials" });
    expect(envelope).not.toHaveProperty("payload");
  });

  it("a node key rotated away (revoked) is refused with auth.invalid_credentials, the new one works", async () => {
    const { nodeId, plane } = await registerOverNats("nats-revoked");
    await plane.heartbeat({ running: [] });
    const rotated = await user.call("rotateNodeKey", { node_id: nodeId, grace_seconds: 0 });
    expect(await errorCodeOf(plane.heartbeat({ running: [] }))).toBe("auth.invalid_credentials");
    await expect(
      natsNodePlane({ link, appId: tenant.app.app_id }).withNodeKey(rotated.api_key).heartbeat({ running: [] }),
    ).resolves.toMatchObject({ draining: false });
  });

  it("a user's API key where the node's own key is needed is refused with permission.denied", async () => {
    const asUser = natsNodePlane({ link, appId: tenant.app.app_id }).withNodeKey(apiKey);
    expect(await errorCodeOf(asUser.heartbeat({ running: [] }))).toBe("permission.denied");
    expect(await errorCodeOf(asUser.poll({ wait_seconds: 0 }))).toBe("permission.denied");
  });

  it("no X-App-ID is app.missing, no key is auth.missing_credentials", async () => {
    expect(await rawRequest(subjects.nodePlane("poll"), "{}")).toMatchObject({ status: "ERROR", code: "app.missing" });
    expect(
      await rawRequest(subjects.nodePlane("poll"), "{}", { [NODE_NATS_HEADERS.appId]: tenant.app.app_id }),
    ).toMatchObject({
      status: "ERROR",
      code: "auth.missing_credentials",
    });
  });

  it("a node key presented for another application is auth.invalid_credentials", async () => {
    const { nodeKey } = await registerOverNats("nats-other-app");
    const other = await createTenant(system.gateways[0]!.nc);
    expect(
      await errorCodeOf(
        natsNodePlane({ link, appId: other.app.app_id }).withNodeKey(nodeKey).heartbeat({ running: [] }),
      ),
    ).toBe("auth.invalid_credentials");
  });
});

describe("the NATS node plane's input checks", () => {
  it("malformed JSON is request.malformed_json, a body off the schema is request.invalid with its issues", async () => {
    const { nodeKey } = await registerOverNats("nats-malformed");
    const credentials = { [NODE_NATS_HEADERS.appId]: tenant.app.app_id, [NODE_NATS_HEADERS.apiKey]: nodeKey };
    expect(await rawRequest(subjects.nodePlane("heartbeat"), "{not json", credentials)).toMatchObject({
      status: "ERROR",
      code: "request.malformed_json",
    });
    const invalid = await rawRequest(
      subjects.nodePlane("heartbeat"),
      JSON.stringify({ running: "all", extra: 1 }),
      credentials,
    );
    expect(invalid).toMatchObject({ status: "ERROR", code: "request.invalid", details: { issues: expect.any(Array) } });
    expect(await rawRequest(subjects.nodePlane("poll"), "[1,2]", credentials)).toMatchObject({
      status: "ERROR",
      code: "request.invalid",
    });
    // The listener still serves: nothing crashed.
    expect(
      await rawRequest(subjects.nodePlane("heartbeat"), JSON.stringify({ running: [] }), credentials),
    ).toMatchObject({ status: "SUCCESS", message: "Heartbeat recorded" });
  });

  it("the answers are the HTTP envelope: status, message and payload", async () => {
    const { nodeKey } = await registerOverNats("nats-envelope");
    const envelope = await rawRequest(subjects.nodePlane("poll"), JSON.stringify({ wait_seconds: 0 }), {
      [NODE_NATS_HEADERS.appId]: tenant.app.app_id,
      [NODE_NATS_HEADERS.apiKey]: nodeKey,
    });
    expect(envelope).toEqual({ status: "SUCCESS", message: "Assigned jobs", payload: { jobs: [] } });
  });
});

describe("the NATS node plane's tenancy", () => {
  it("a node cannot report or push logs for another node's attempt, nor see it in its poll", async () => {
    const owner = await registerOverNats("nats-owner");
    const intruder = await registerOverNats("nats-intruder");
    const jobId = await submit("nats-owner");
    const assignment = await pollFor(owner.plane, jobId);
    expect((await intruder.plane.poll({ wait_seconds: 0 })).jobs).toEqual([]);
    const lines = [{ seq: 1, stream: "stdout" as const, line: "not mine", ts: new Date().toISOString() }];
    expect(["job.stale_attempt", "resource.not_found"]).toContain(
      await errorCodeOf(intruder.plane.pushLogs({ job_id: jobId, attempt: assignment.attempt, lines })),
    );
    expect(["job.stale_attempt", "resource.not_found"]).toContain(
      await errorCodeOf(
        intruder.plane.result({ job_id: jobId, attempt: assignment.attempt, outcome: "succeeded", exit_code: 0 }),
      ),
    );
    expect((await user.call("retrieveJob", { job_id: jobId })).job.state).toBe("running");
  });

  it("a node of another tenant cannot report for this tenant's job", async () => {
    const owner = await registerOverNats("nats-tenant-a");
    const jobId = await submit("nats-tenant-a");
    const assignment = await pollFor(owner.plane, jobId);

    const other = await createTenant(system.gateways[0]!.nc);
    const { client: otherUser } = await signedInClient(system.gateways[0]!.baseUrl, other);
    const otherKey = (await otherUser.call("createApiKey", { name: "other" })).key;
    const stranger = await registerOverNats("nats-tenant-a", other.app.app_id, otherKey);
    expect(["job.stale_attempt", "resource.not_found"]).toContain(
      await errorCodeOf(
        stranger.plane.result({ job_id: jobId, attempt: assignment.attempt, outcome: "failed", exit_code: 1 }),
      ),
    );
    expect((await user.call("retrieveJob", { job_id: jobId })).job.state).toBe("running");
  });
});

describe("artifact uploads over NATS", () => {
  /** A running job of a NATS node, with the upload URL its assignment carries. */
  async function runningJob(pool: string) {
    const node = await registerOverNats(pool);
    const jobId = await submit(pool);
    const assignment = await pollFor(node.plane, jobId);
    expect(assignment.artifact_upload_url).toEqual(expect.any(String));
    return { node, jobId, urlTemplate: assignment.artifact_upload_url! };
  }

  async function artifactFile(name: string, bytes: Uint8Array) {
    const path = join(tempDir, name);
    await writeFile(path, bytes);
    return { name, path, contentType: "application/octet-stream" };
  }

  async function downloadOverHttp(jobId: string, artifactId: string): Promise<Buffer> {
    const { url } = await user.call("presignDownload", { job_id: jobId, artifact_id: artifactId });
    const response = await fetch(url);
    expect(response.status).toBe(200);
    return Buffer.from(await response.arrayBuffer());
  }

  /** The gateways' `cjs_nats_uploads_open` gauge (every replica of this process counts into it). */
  async function openUploads(): Promise<number> {
    const text = await (await fetch(`${system.gateways[0]!.opsUrl}/metrics`)).text();
    const line = text.split("\n").find((row) => row.startsWith("cjs_nats_uploads_open "));
    return Number(line?.split(" ")[1] ?? Number.NaN);
  }

  function chunkSeq(seq: number) {
    const h = natsHeaders();
    h.set(NODE_NATS_HEADERS.chunkSeq, String(seq));
    return h;
  }

  async function chunkMessages(): Promise<number> {
    const jsm = await jetstreamManager(nc);
    const info = await jsm.streams.info(`OBJ_${OBJECT_STORES.artifacts}`, {
      subjects_filter: `$O.${OBJECT_STORES.artifacts}.C.>`,
    });
    return Object.values(info.state.subjects ?? {}).reduce((sum, count) => sum + count, 0);
  }

  it("a multi-MB artifact round-trips byte for byte (uploaded over NATS, downloaded over HTTP) with the HTTP PUT's record", async () => {
    const { node, jobId, urlTemplate } = await runningJob("nats-upload");
    const bytes = randomBytes(5 * 1024 * 1024 + 12_345);
    await node.plane.upload(urlTemplate, await artifactFile("big.bin", bytes));

    expect((await downloadOverHttp(jobId, "big.bin")).equals(bytes)).toBe(true);
    const { artifacts } = await user.call("retrieveJob", { job_id: jobId });
    expect(artifacts).toEqual([
      expect.objectContaining({
        artifact_id: "big.bin",
        size_bytes: bytes.length,
        sha256: sha256(bytes),
        content_type: "application/octet-stream",
        attempt: 1,
      }),
    ]);
  });

  it("an altered signed URL is refused with url.signature_invalid and stores nothing", async () => {
    const { node, jobId, urlTemplate } = await runningJob("nats-upload-altered");
    const url = new URL(urlTemplate.replace("{artifact_id}", "x.bin"));
    const signature = url.searchParams.get("signature")!;
    url.searchParams.set("signature", `${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`);
    expect(await errorCodeOf(node.plane.upload(url.toString(), await artifactFile("x.bin", randomBytes(1000))))).toBe(
      "url.signature_invalid",
    );
    const forged = new URL(urlTemplate.replace("{artifact_id}", "x.bin"));
    forged.searchParams.set("business_id", "bus_00000000000000000000");
    expect(
      await errorCodeOf(node.plane.upload(forged.toString(), await artifactFile("x.bin", randomBytes(1000)))),
    ).toBe("url.signature_invalid");
    expect((await user.call("retrieveJob", { job_id: jobId })).artifacts).toEqual([]);
  });

  it("a file above the size limit is request.too_large at open, before any byte is sent", async () => {
    const { urlTemplate } = await runningJob("nats-upload-large");
    const url = urlTemplate.replace("{artifact_id}", "huge.bin");
    const envelope = await rawRequest(
      subjects.nodePlaneUploadOpen(),
      JSON.stringify({ url, size_bytes: MAX_ARTIFACT_BYTES + 1 }),
    );
    expect(envelope).toMatchObject({ status: "ERROR", code: "request.too_large" });
  });

  it("a commit whose SHA-256 does not match the bytes is refused and leaves nothing behind", async () => {
    const { jobId, urlTemplate } = await runningJob("nats-upload-digest");
    const before = await chunkMessages();
    const bytes = randomBytes(NATS_UPLOAD_CHUNK_MAX_BYTES + 10);
    const opened = await rawRequest(
      subjects.nodePlaneUploadOpen(),
      JSON.stringify({ url: urlTemplate.replace("{artifact_id}", "bad.bin"), size_bytes: bytes.length }),
    );
    const subject = (opened.payload as { subject: string }).subject;
    expect(
      await rawRequest(`${subject}.chunk`, bytes.subarray(0, NATS_UPLOAD_CHUNK_MAX_BYTES), {
        [NODE_NATS_HEADERS.chunkSeq]: "1",
      }),
    ).toMatchObject({ status: "SUCCESS" });
    expect(
      await rawRequest(`${subject}.chunk`, bytes.subarray(NATS_UPLOAD_CHUNK_MAX_BYTES), {
        [NODE_NATS_HEADERS.chunkSeq]: "2",
      }),
    ).toMatchObject({ status: "SUCCESS" });
    const refused = await rawRequest(
      `${subject}.commit`,
      encodeJson({ size_bytes: bytes.length, sha256: "0".repeat(64) }),
    );
    expect(refused).toMatchObject({
      status: "ERROR",
      code: "request.invalid",
      details: { issues: [expect.objectContaining({ path: "sha256" })] },
    });
    expect((await user.call("retrieveJob", { job_id: jobId })).artifacts).toEqual([]);
    expect(await chunkMessages()).toBe(before);
  });

  it("an upload left idle is aborted: its subject stops answering and nothing is stored", async () => {
    const { jobId, urlTemplate } = await runningJob("nats-upload-idle");
    const before = await chunkMessages();
    const opened = await rawRequest(
      subjects.nodePlaneUploadOpen(),
      JSON.stringify({ url: urlTemplate.replace("{artifact_id}", "idle.bin"), size_bytes: 10 }),
    );
    const subject = (opened.payload as { subject: string }).subject;
    expect(await rawRequest(`${subject}.chunk`, randomBytes(5), { [NODE_NATS_HEADERS.chunkSeq]: "1" })).toMatchObject({
      status: "SUCCESS",
    });
    expect(await openUploads()).toBe(1);
    // The gateway's idle timeout (3 s here) ends the upload; its subject then has no responder.
    await expect.poll(openUploads, { timeout: 15_000, interval: 100 }).toBe(0);
    const late = await nc.request(`${subject}.chunk`, randomBytes(5), { timeout: 5_000, headers: chunkSeq(2) }).then(
      () => "answered",
      (error: Error) => error.name,
    );
    expect(late).not.toBe("answered");
    expect((await user.call("retrieveJob", { job_id: jobId })).artifacts).toEqual([]);
    await expect.poll(chunkMessages, { timeout: 10_000 }).toBe(before);
  });
});
