import { once } from "node:events";
import { mkdtemp, rm } from "node:fs/promises";
import { connect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type Agent, buildAgent, loadConfig as loadAgentConfig } from "../../clients/agent/index.js";
import { createLogger, systemClock } from "../../shared/runtime/index.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";

/**
 * The whole system and a real agent, every one logging everything (level trace) through
 * the production logger: after a job that uploads an artifact, a log stream read through
 * its signed URL, signed artifact URLs used and misused, no line holds a credential.
 */
const lines: string[] = [];
const destination = { write: (line: string) => void lines.push(line) };
const loggerFor = (service: string) => createLogger({ service, level: "trace", destination });

/** A query parameter that carries a credential, wherever it is in a line. */
const CREDENTIAL_PARAMETER = /[?&](signature|token|access_token|refresh_token|api_key|key|password)=/i;

let nats: NatsHarness;
let system: RunningSystem;
let agent: Agent | undefined;
let stopped = false;
let workDir: string;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(
    nats.url,
    { gateways: 1, schedulers: 1, registries: 1 },
    { CJS_HEARTBEAT_INTERVAL_SECONDS: "1" },
    { loggerFor },
  );
  workDir = await mkdtemp(join(tmpdir(), "cjs-secrets-test-"));
});

afterAll(async () => {
  await agent?.stop();
  if (!stopped) await system?.stop();
  await nats?.stop();
  await rm(workDir, { recursive: true, force: true });
});

/** A log line with every serialised Buffer (`{"type":"Buffer","data":[…]}`) turned back into its text. */
function readable(line: string): string {
  return line.replace(/\{"type":"Buffer","data":\[([\d,]*)\]\}/g, (_, bytes: string) =>
    Buffer.from(bytes === "" ? [] : bytes.split(",").map(Number)).toString("latin1"),
  );
}

/** Sends a request line with `query` and a malformed header, and waits for the server to close the connection. */
async function malformedRequest(baseUrl: string, query: string): Promise<void> {
  const { hostname, port } = new URL(baseUrl);
  const socket = connect(Number(port), hostname);
  socket.resume();
  await once(socket, "connect");
  socket.write(`GET /api/compute/logs/stream?${query} HTTP/1.1\r\nHost: ${hostname}\r\nnot a header\r\n\r\n`);
  await once(socket, "close");
}

/** Reads a server-sent event stream until its text holds `expected`, then lets it go. */
async function readStreamUntil(url: URL, expected: string): Promise<string> {
  const response = await fetch(url, { headers: { accept: "text/event-stream" } });
  expect(response.status).toBe(200);
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader();
  let text = "";
  while (!text.includes(expected)) {
    const { value, done } = await reader.read();
    if (done) break;
    text += value;
  }
  await reader.cancel();
  return text;
}

describe("credentials never reach a log line", () => {
  it("no token, key, password or URL signature minted during a job's life is logged by any service or the agent", async () => {
    const baseUrl = system.gateways[0]!.baseUrl;
    const tenant = await createTenant(system.gateways[0]!.nc);
    const { client: user, tokens } = await signedInClient(baseUrl, tenant);
    const apiKey = (await user.call("createApiKey", { name: "secrets test" })).key;
    const pool = "secrets";
    agent = buildAgent({
      config: loadAgentConfig({
        CJS_GATEWAY_URL: baseUrl,
        CJS_APP_ID: tenant.app.app_id,
        CJS_API_KEY: apiKey,
        CJS_POOL: pool,
        CJS_SLOTS: "1",
        CJS_WORK_DIR: workDir,
        LOG_LEVEL: "trace",
      }),
      logger: loggerFor("agent"),
      clock: systemClock,
      env: process.env,
    });
    await agent.start();

    const { job_id: jobId } = await user.call("submitJob", {
      type: "shell",
      command: ["sh", "-c", 'echo hello-from-the-job; printf data > "$CJS_ARTIFACTS_DIR/out.txt"'],
      pool_id: pool,
      max_attempts: 1,
    });
    await expect
      .poll(async () => (await user.call("retrieveJob", { job_id: jobId })).job.state, {
        timeout: 20_000,
        interval: 100,
      })
      .toBe("succeeded");

    const minted: string[] = [];
    const { url: streamPath } = await user.call("logStreamUrl", { job_id: jobId });
    minted.push(streamPath);
    expect(await readStreamUntil(new URL(streamPath, baseUrl), "hello-from-the-job")).toContain("hello-from-the-job");

    const upload = await user.call("presignUpload", { job_id: jobId, artifact_id: "extra.txt" });
    minted.push(upload.url);
    expect((await fetch(new URL(upload.url, baseUrl), { method: "PUT", body: "extra" })).status).toBeLessThan(300);
    const download = await user.call("presignDownload", { job_id: jobId, artifact_id: "out.txt" });
    minted.push(download.url);
    expect(await (await fetch(new URL(download.url, baseUrl))).text()).toBe("data");
    // Refused and unrouted requests log too: a tampered signature, an unknown path with credentials in its query.
    const tampered = download.url.replace(
      /signature=([^&]+)/,
      (_, signature: string) => `signature=${signature.slice(1)}A`,
    );
    expect((await fetch(new URL(tampered, baseUrl))).status).toBe(403);
    const probe = "probe-secret-0123456789";
    expect((await fetch(`${baseUrl}/no/such/path?signature=${probe}&api_key=${probe}`)).status).toBe(404);
    // One the HTTP parser refuses: fastify logs the parser's error, which holds the raw bytes read.
    await malformedRequest(baseUrl, `signature=${probe}`);

    await agent.stop();
    agent = undefined;
    await system.stop();
    stopped = true;

    const signatures = minted
      .map((url) => new URL(url, baseUrl).searchParams.get("signature"))
      .filter((value): value is string => value !== null);
    expect(signatures.length).toBe(minted.length);
    const secrets = [
      tokens.access_token,
      tokens.refresh_token,
      apiKey,
      tenant.password,
      probe,
      ...signatures,
      new URL(tampered, baseUrl).searchParams.get("signature")!,
    ];
    const log = lines.map(readable).join("");
    expect(lines.length).toBeGreaterThan(0);
    for (const secret of secrets) expect(log, `a log line holds ${secret}`).not.toContain(secret);
    for (const line of lines.map(readable)) expect(line).not.toMatch(CREDENTIAL_PARAMETER);
  });
});
