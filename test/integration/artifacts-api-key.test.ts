import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeJobsClient } from "../../clients/sdk/src/index.js";
import { artifactPath } from "../../shared/contract/index.js";
import { CliRunner } from "../harness/cli.js";
import type { ComputeClient } from "../harness/client.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

/**
 * Artifacts for CI runners, which hold an API key and no session: `GET
 * /api/compute/jobs/{jobId}/artifacts/{id}` with a key that has `jobs:read`, through the
 * SDK, the real `cjs` and a bare HTTP client; refused without the scope; and not found for
 * a key of another business of the same app, or of another app.
 */
let nats: NatsHarness;
let system: RunningSystem;
let baseUrl: string;
let tenant: Tenant;
let user: ComputeClient;
let jobId: string;
const CONTENT = "step,seconds\nbuild,42\ntest,97\n";

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
  baseUrl = system.gateways[0]!.baseUrl;
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(baseUrl, tenant));
  jobId = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "no-nodes" })).job_id;
  const target = await user.call("presignUpload", {
    job_id: jobId,
    artifact_id: "timings.csv",
    content_type: "text/csv",
  });
  const stored = await fetch(target.url, { method: "PUT", body: CONTENT });
  expect(stored.status).toBe(200);
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

/** A key of `owner`'s user, with these scopes. */
async function keyOf(owner: Tenant, scopes: Array<"jobs:read" | "jobs:write">): Promise<string> {
  const session = (await signedInClient(baseUrl, owner)).client;
  return (await session.call("createApiKey", { name: `ci ${scopes.join(" ")}`, scopes })).key;
}

/** The download with a bare HTTP client, as a CI script with curl would do it. */
async function download(key: string, appId: string, path = artifactPath(jobId, "timings.csv"), headers = {}) {
  const response = await fetch(`${baseUrl}${path}`, { headers: { "x-app-id": appId, "x-api-key": key, ...headers } });
  const type = response.headers.get("content-type") ?? "";
  return {
    status: response.status,
    headers: response.headers,
    body: type.startsWith("application/json") ? ((await response.json()) as { code?: string }) : await response.text(),
  };
}

describe("an API key with jobs:read", () => {
  it("downloads an artifact of its business's job through the SDK, checked against its SHA-256", async () => {
    const key = await keyOf(tenant, ["jobs:read"]);
    const client = new ComputeJobsClient({ baseUrl, appId: tenant.app.app_id, credentials: { apiKey: key } });

    const bytes = await client.artifacts.bytes(jobId, "timings.csv");

    expect(new TextDecoder().decode(bytes)).toBe(CONTENT);
  });

  it("downloads it with cjs artifacts get and CJS_API_KEY, no login", async () => {
    const key = await keyOf(tenant, ["jobs:read"]);
    const cli = new CliRunner({ baseUrl, appId: tenant.app.app_id });
    try {
      const work = cli.workDir();
      const output = join(work, "timings.csv");
      const run = await cli.run(["artifacts", "get", jobId, "timings.csv", "-o", output], {
        configDir: cli.freshConfigDir(),
        env: { CJS_API_KEY: key },
      });
      expect(run.code, run.stderr).toBe(0);
      expect(readFileSync(output, "utf8")).toBe(CONTENT);
    } finally {
      cli.cleanUp();
    }
  });

  it("answers with a bare HTTP client, its SHA-256 as the ETag, and one byte range as a 206", async () => {
    const key = await keyOf(tenant, ["jobs:read"]);
    const whole = await download(key, tenant.app.app_id);
    expect(whole.status).toBe(200);
    expect(whole.body).toBe(CONTENT);
    expect(whole.headers.get("content-type")).toBe("text/csv");
    expect(whole.headers.get("etag")).toMatch(/^"[0-9a-f]{64}"$/);

    const part = await download(key, tenant.app.app_id, undefined, { range: "bytes=0-3" });
    expect(part.status).toBe(206);
    expect(part.body).toBe(CONTENT.slice(0, 4));
  });
});

describe("refusals", () => {
  it("a key without jobs:read is refused with auth.scope_missing", async () => {
    const key = await keyOf(tenant, ["jobs:write"]);
    expect(await download(key, tenant.app.app_id)).toMatchObject({ status: 403, body: { code: "auth.scope_missing" } });
  });

  it("a key of another business of the same app, or of another app, finds no such job (404)", async () => {
    const otherBusiness = await createTenant(system.gateways[0]!.nc, { appId: tenant.app.app_id });
    const otherApp = await createTenant(system.gateways[0]!.nc);
    for (const other of [otherBusiness, otherApp]) {
      const key = await keyOf(other, ["jobs:read"]);
      expect(await download(key, other.app.app_id)).toMatchObject({
        status: 404,
        body: { code: "resource.not_found" },
      });
    }
  });

  it("an artifact the job does not have is 404, a name that is not one 400, and no credential 401", async () => {
    const key = await keyOf(tenant, ["jobs:read"]);
    expect(await download(key, tenant.app.app_id, artifactPath(jobId, "missing.csv"))).toMatchObject({
      status: 404,
      body: { code: "resource.not_found" },
    });
    expect(await download(key, tenant.app.app_id, artifactPath(jobId, "no spaces.csv"))).toMatchObject({
      status: 400,
      body: { code: "request.invalid" },
    });
    const anonymous = await fetch(`${baseUrl}${artifactPath(jobId, "timings.csv")}`, {
      headers: { "x-app-id": tenant.app.app_id },
    });
    expect(anonymous.status).toBe(401);
  });
});
