import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ApiError,
  ComputeJobsClient,
  IntegrityError,
  type LogStreamItem,
  type Tokens,
} from "../../clients/sdk/src/index.js";
import type { ComputeClient } from "../harness/client.js";
import { FakeNode } from "../harness/fake-node.js";
import { logLines, runningJobWithLogs } from "../harness/log-jobs.js";
import { ManualClock } from "../harness/manual-clock.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import {
  createTenant,
  signedInClient,
  startGateway,
  startSystem,
  type RunningSystem,
  type Tenant,
} from "../harness/system.js";

/**
 * The SDK (clients/sdk) against the real stack: sign-in and token refresh, typed errors,
 * paging, waiting for a job's end, following its log across a dropped connection, and
 * artifacts checked against their SHA-256.
 */
const TOKEN_TTL_SECONDS = 600;

let nats: NatsHarness;
let system: RunningSystem;
let clock: ManualClock;
let tenant: Tenant;
let baseUrl: string;

beforeAll(async () => {
  nats = await startNats();
  clock = new ManualClock();
  system = await startSystem(nats.url, { gateways: 0, schedulers: 1, registries: 1 });
  const gateway = await startGateway(nats.url, { CJS_ACCESS_TOKEN_TTL_SECONDS: String(TOKEN_TTL_SECONDS) }, { clock });
  system.gateways.push(gateway);
  baseUrl = gateway.baseUrl;
  tenant = await createTenant(gateway.nc);
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

function signIn(onTokens?: (tokens: Tokens) => void) {
  return ComputeJobsClient.signIn({
    baseUrl,
    appId: tenant.app.app_id,
    email: tenant.user.email,
    password: tenant.password,
    ...(onTokens ? { onTokens } : {}),
  });
}

/** The test harness's own client (for the node plane), signed in now: the clock moves past token lifetimes. */
async function harnessUser(): Promise<ComputeClient> {
  return (await signedInClient(baseUrl, tenant)).client;
}

function uniquePool(): string {
  return `sdk-${Math.random().toString(36).slice(2, 10)}`;
}

describe("credentials", () => {
  it("a session whose access token expired is refreshed once, the call goes on, and onTokens hears the new pair", async () => {
    const heard: Tokens[] = [];
    const client = await signIn((tokens) => heard.push(tokens));
    expect(heard).toHaveLength(1);
    clock.advance((TOKEN_TTL_SECONDS + 1) * 1000);

    const keys = await client.keys.list();

    expect(keys.items).toBeInstanceOf(Array);
    expect(heard).toHaveLength(2);
    expect(heard[1]!.access_token).not.toBe(heard[0]!.access_token);
  });

  it("an API key minted through the SDK works as the credential of another client", async () => {
    const session = await signIn();
    const minted = await session.keys.create({ name: "sdk test" });
    const withKey = new ComputeJobsClient({ baseUrl, appId: tenant.app.app_id, credentials: { apiKey: minted.key } });

    expect((await withKey.keys.list()).items.map((key) => key.key_id)).toContain(minted.key_id);
  });
});

describe("errors", () => {
  it("a refusal is an ApiError with the envelope's code, the status, details and the request id", async () => {
    const client = await signIn();
    const refused = await client.jobs
      .submit({ type: "shell", command: [], pool_id: "p" } as never)
      .catch((error: unknown) => error);

    expect(refused).toBeInstanceOf(ApiError);
    const error = refused as ApiError;
    expect(error.code).toBe("request.invalid");
    expect(error.status).toBe(400);
    expect(error.details?.issues).toBeInstanceOf(Array);
    expect(error.requestId).toMatch(/\S+/);
  });
});

describe("jobs", () => {
  it("paginate walks every page of a listing, and only the filter's jobs", async () => {
    const client = await signIn();
    const pool = uniquePool();
    const submitted = [];
    for (let index = 0; index < 5; index += 1)
      submitted.push(await client.jobs.submit({ type: "shell", command: ["true"], pool_id: pool }));

    const seen: string[] = [];
    for await (const job of client.jobs.all({ pool_id: pool, limit: 2 })) seen.push(job.job_id);

    expect(seen.sort()).toEqual(submitted.map((job) => job.job_id).sort());
  });

  it("submit with wait resolves with the job once it is terminal", async () => {
    const client = await signIn();
    const pool = uniquePool();
    const node = await FakeNode.register(await harnessUser(), baseUrl, tenant.app.app_id, { pool_id: pool });

    const waiting = client.jobs.submit(
      { type: "shell", command: ["true"], pool_id: pool },
      { wait: true, pollIntervalMs: 20, maxPollIntervalMs: 100 },
    );
    const [assignment] = await node.poll(10);
    await node.finish(assignment!.job_id, "failed");
    const job = await waiting;

    expect(job.job.job_id).toBe(assignment!.job_id);
    expect(job.job.state).toBe("failed");
  });

  it("logs follow live lines to the end, resuming after a dropped connection with no line lost or repeated", async () => {
    const pool = uniquePool();
    const { node, jobId, push } = await runningJobWithLogs(await harnessUser(), baseUrl, tenant.app.app_id, pool);
    await push(1, logLines(1, 5));
    // The first stream is cut after its second event; the SDK must open it again from there.
    let opened = 0;
    const cutting = (async (url: string, init: RequestInit) => {
      const response = await fetch(url, init);
      if (!url.endsWith("/logs") || opened++ > 0) return response;
      return new Response(response.body!.pipeThrough(cutAfterEvents(2)), {
        status: response.status,
        headers: response.headers,
      });
    }) as typeof fetch;
    const client = await ComputeJobsClient.signIn({
      baseUrl,
      appId: tenant.app.app_id,
      email: tenant.user.email,
      password: tenant.password,
      fetch: cutting,
    });

    const items: LogStreamItem[] = [];
    for await (const item of client.jobs.logs(jobId)) {
      items.push(item);
      if (item.type === "log" && item.line.seq === 5) {
        await push(1, logLines(6, 8));
        await node.finish(jobId, "succeeded");
      }
    }

    expect(opened).toBeGreaterThanOrEqual(2);
    expect(items.filter((item) => item.type === "log").map((item) => item.type === "log" && item.line.seq)).toEqual([
      1, 2, 3, 4, 5, 6, 7, 8,
    ]);
    expect(items.at(-1)).toMatchObject({ type: "end", end: { state: "succeeded" } });
  });
});

describe("artifacts", () => {
  it("an upload comes back byte for byte, checked against its SHA-256", async () => {
    const client = await signIn();
    const { job_id } = await client.jobs.submit({ type: "shell", command: ["true"], pool_id: uniquePool() });
    const bytes = new TextEncoder().encode("a,b\n1,2\n".repeat(1000));

    const stored = await client.artifacts.upload(job_id, "table.csv", bytes, { contentType: "text/csv" });
    const back = await client.artifacts.bytes(job_id, "table.csv");

    expect(stored).toMatchObject({ artifact_id: "table.csv", size_bytes: bytes.byteLength, content_type: "text/csv" });
    expect(Buffer.from(back).equals(Buffer.from(bytes))).toBe(true);
  });

  it("bytes altered on the way fail the download with an IntegrityError", async () => {
    const tampering = (async (url: string, init: RequestInit) => {
      const response = await fetch(url, init);
      if (init.method !== "GET" || !url.includes("/artifacts/")) return response;
      const altered = new Uint8Array(await response.arrayBuffer());
      altered[0] = altered[0]! ^ 0xff;
      return new Response(altered, { status: response.status, headers: response.headers });
    }) as typeof fetch;
    const client = await ComputeJobsClient.signIn({
      baseUrl,
      appId: tenant.app.app_id,
      email: tenant.user.email,
      password: tenant.password,
      fetch: tampering,
    });
    const { job_id } = await client.jobs.submit({ type: "shell", command: ["true"], pool_id: uniquePool() });
    await client.artifacts.upload(job_id, "out.bin", new Uint8Array([1, 2, 3, 4]));

    await expect(client.artifacts.bytes(job_id, "out.bin")).rejects.toBeInstanceOf(IntegrityError);
  });
});

/** Passes the first `count` events of an SSE body through, then errors the stream as a dropped connection would. */
function cutAfterEvents(count: number): TransformStream<Uint8Array, Uint8Array> {
  const decoder = new TextDecoder();
  const encoder = new TextEncoder();
  let text = "";
  let passed = 0;
  return new TransformStream({
    transform(chunk, controller) {
      text += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = text.indexOf("\n\n")) >= 0) {
        const event = text.slice(0, end + 2);
        text = text.slice(end + 2);
        if (event.startsWith(":")) continue;
        controller.enqueue(encoder.encode(event));
        passed += 1;
        if (passed === count) {
          controller.error(new TypeError("terminated"));
          return;
        }
      }
    },
  });
}
