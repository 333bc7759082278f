/**
 * The life of a user's API key against a real nats-server and the real services: expiry
 * (with the operator's maximum), scopes on RPCs and on the log stream, rename and budget
 * through `api-keys/update`, and the last use's time and address. Both gateways share a
 * clock that the tests move, so a key expires without waiting for it.
 */
import { jetstream } from "@nats-io/jetstream";
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { API_KEY_SCOPES, logStreamPath, User, type RpcRequest } from "../../shared/contract/index.js";
import { BUCKETS, requestRpc } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { ManualClock } from "../harness/manual-clock.js";
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

const MAX_TTL_DAYS = 30;
const DAY_MS = 86_400_000;
const clock = new ManualClock();

let nats: NatsHarness;
let system: RunningSystem;
let nc: NatsConnection;
/** Caps key lifetimes at MAX_TTL_DAYS. */
let capped: RunningGateway;
/** Sets no maximum. */
let uncapped: RunningGateway;
let tenant: Tenant;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 0, schedulers: 1, registries: 1 });
  capped = await startGateway(nats.url, { CJS_API_KEY_MAX_TTL_DAYS: String(MAX_TTL_DAYS) }, { clock });
  uncapped = await startGateway(nats.url, {}, { clock });
  nc = await connect({ servers: nats.url, name: "test-api-keys" });
  tenant = await createTenant(nc);
}, 60_000);

afterAll(async () => {
  await capped?.stop();
  await uncapped?.stop();
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

/** A session of `who` on `gateway`, signed in at the clock's current time. */
async function session(gateway: RunningGateway = capped, who: Tenant = tenant): Promise<ComputeClient> {
  return (await signedInClient(gateway.baseUrl, who)).client;
}

/** A new key of the tenant's user, and a client that calls with it. */
async function newKey(body: Omit<RpcRequest<"createApiKey">, "name"> = {}, gateway: RunningGateway = capped) {
  const created = await (await session(gateway)).call("createApiKey", { name: "test key", ...body });
  return {
    created,
    client: new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id, apiKey: created.key }),
  };
}

async function listed(keyId: string) {
  return (await (await session()).call("listApiKeys", {})).items.find((item) => item.key_id === keyId);
}

describe("expiry", () => {
  it("gives a key created without expires_at the operator's maximum, and none where no maximum is set", async () => {
    const { created } = await newKey();
    expect(Date.parse(created.expires_at!)).toBe(clock.now() + MAX_TTL_DAYS * DAY_MS);
    expect((await listed(created.key_id))?.expires_at).toBe(created.expires_at);

    const { created: forever } = await newKey({}, uncapped);
    expect(forever.expires_at).toBeNull();
  });

  it("keeps an expires_at within the maximum, and refuses one in the past or beyond it with 400 naming expires_at", async () => {
    const within = new Date(clock.now() + 7 * DAY_MS).toISOString();
    expect((await newKey({ expires_at: within })).created.expires_at).toBe(within);

    const user = await session();
    for (const expires_at of [
      new Date(clock.now() - 1000).toISOString(),
      new Date(clock.now() + (MAX_TTL_DAYS + 1) * DAY_MS).toISOString(),
    ]) {
      const refused = await user.raw("POST", "/api/compute/api-keys/create", { name: "refused", expires_at });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: "request.invalid", details: { issues: [{ path: "expires_at" }] } });
    }
    const farAway = new Date(clock.now() + 400 * DAY_MS).toISOString();
    expect((await newKey({ expires_at: farAway }, uncapped)).created.expires_at).toBe(farAway);
  });

  it("answers 401 auth.key_expired with a WWW-Authenticate challenge once a key's expires_at has passed", async () => {
    const expiresAt = clock.now() + 3_600_000;
    const { created, client } = await newKey({ expires_at: new Date(expiresAt).toISOString() });
    expect((await client.raw("POST", "/api/compute/jobs/list", {})).status).toBe(200);

    clock.advance(3_600_000);
    for (const gateway of [capped, uncapped]) {
      const answer = await new ComputeClient({
        baseUrl: gateway.baseUrl,
        appId: tenant.app.app_id,
        apiKey: created.key,
      }).raw("POST", "/api/compute/jobs/list", {});
      expect(answer.status).toBe(401);
      expect(answer.body).toMatchObject({
        code: "auth.key_expired",
        details: { expired_at: new Date(expiresAt).toISOString() },
      });
      expect(answer.headers.get("www-authenticate")).toBe("Bearer");
    }
  });

  it("answers an expired key that was also revoked, or presented to another app, as invalid: only a usable key's holder learns it expired", async () => {
    const { created, client } = await newKey({ expires_at: new Date(clock.now() + 60_000).toISOString() });
    const other = await createTenant(nc);
    await (await session()).call("revokeApiKey", { key_id: created.key_id });
    clock.advance(60_000);
    expect((await client.raw("POST", "/api/compute/jobs/list", {})).body).toMatchObject({
      code: "auth.invalid_credentials",
    });
    const elsewhere = client.with({ apiKey: created.key, appId: other.app.app_id });
    expect((await elsewhere.raw("POST", "/api/compute/jobs/list", {})).body).toMatchObject({
      code: "auth.invalid_credentials",
    });
  });
});

describe("scopes", () => {
  it("lets a key with jobs:read list jobs, and refuses its submit with 403 auth.scope_missing naming jobs:write, queueing nothing", async () => {
    const { created, client } = await newKey({ scopes: ["jobs:read"] });
    expect(created.scopes).toEqual(["jobs:read"]);
    expect((await client.call("listJobs", { pool_id: "scoped" })).items).toEqual([]);

    const refused = await client.raw("POST", "/api/compute/jobs/submit", {
      type: "shell",
      command: ["true"],
      pool_id: "scoped",
    });
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "auth.scope_missing", details: { scope: "jobs:write" } });
    expect((refused.body as { message: string }).message).toContain("jobs:write");
    expect((await (await session()).call("listJobs", { pool_id: "scoped" })).items).toEqual([]);
    // The key cannot read its own kind either without keys:read.
    expect((await client.raw("POST", "/api/compute/api-keys/list", {})).body).toMatchObject({
      code: "auth.scope_missing",
      details: { scope: "keys:read" },
    });
  });

  it("refuses the job log stream to a key without jobs:read, and opens it for one with it", async () => {
    const { job_id } = await (await session()).call("submitJob", {
      type: "shell",
      command: ["true"],
      pool_id: "scoped-logs",
    });
    const writer = await newKey({ scopes: ["jobs:write"] });
    const refused = await writer.client.raw("GET", logStreamPath(job_id));
    expect(refused.status).toBe(403);
    expect(refused.body).toMatchObject({ code: "auth.scope_missing", details: { scope: "jobs:read" } });

    const reader = await newKey({ scopes: ["jobs:read"] });
    const controller = new AbortController();
    const opened = await fetch(`${capped.baseUrl}${logStreamPath(job_id)}`, {
      headers: { "x-app-id": tenant.app.app_id, "x-api-key": reader.created.key },
      signal: controller.signal,
    });
    expect(opened.status).toBe(200);
    expect(opened.headers.get("content-type")).toContain("text/event-stream");
    controller.abort();
  });

  it("gives a key created without scopes, and a key record written before scopes existed, every scope", async () => {
    const { created, client } = await newKey();
    expect(created.scopes).toBeNull();
    expect((await client.call("submitJob", { type: "shell", command: ["true"], pool_id: "unscoped" })).state).toBe(
      "queued",
    );

    const older = await newKey({ scopes: ["jobs:read"] });
    const kv = await new Kvm(jetstream(nc)).open(BUCKETS.apiKeys);
    const entry = await kv.get(older.created.key_id);
    const { scopes: _scopes, ...withoutScopes } = entry!.json<Record<string, unknown>>();
    await kv.put(older.created.key_id, JSON.stringify(withoutScopes));
    await expect
      .poll(async () => (await older.client.raw("POST", "/api/compute/api-keys/list", {})).status, {
        timeout: 5000,
        interval: 50,
      })
      .toBe(200);
    expect(
      (await older.client.call("submitJob", { type: "shell", command: ["true"], pool_id: "unscoped" })).state,
    ).toBe("queued");
  });

  it("refuses an empty, unknown or repeated scope with 400", async () => {
    const user = await session();
    for (const scopes of [[], ["jobs:delete"], ["jobs:read", "jobs:read"]]) {
      const refused = await user.raw("POST", "/api/compute/api-keys/create", { name: "bad scopes", scopes });
      expect(refused.status).toBe(400);
      expect(refused.body).toMatchObject({ code: "request.invalid" });
    }
    expect((await newKey({ scopes: [...API_KEY_SCOPES] })).created.scopes).toEqual([...API_KEY_SCOPES]);
  });
});

describe("update", () => {
  it("renames the caller's key and sets, then removes, its monthly budget", async () => {
    const { created } = await newKey();
    const user = await session();
    expect(await user.call("updateApiKey", { key_id: created.key_id, name: "renamed" })).toMatchObject({
      key_id: created.key_id,
      name: "renamed",
      budget_credits_per_month: null,
    });
    expect(await user.call("updateApiKey", { key_id: created.key_id, budget_credits_per_month: 12.5 })).toMatchObject({
      name: "renamed",
      budget_credits_per_month: 12.5,
    });
    expect(await listed(created.key_id)).toMatchObject({
      name: "renamed",
      budget_credits_per_month: 12.5,
      spent_credits_this_month: 0,
    });
    expect(await user.call("updateApiKey", { key_id: created.key_id, budget_credits_per_month: null })).toMatchObject({
      budget_credits_per_month: null,
    });
  });

  it("answers 404 for the key of another user of the business, of another business and of another app, and changes none of them", async () => {
    const { created } = await newKey();
    const colleague = await createTenant(nc, { appId: tenant.app.app_id });
    const otherApp = await createTenant(nc);
    const sameBusinessUser = { ...tenant, user: await sameBusinessColleague() };
    for (const who of [sameBusinessUser, colleague, otherApp]) {
      const client = await session(capped, who);
      const refused = await client.raw("POST", "/api/compute/api-keys/update", {
        key_id: created.key_id,
        name: "stolen",
      });
      expect(refused.status).toBe(404);
      expect(refused.body).toMatchObject({ code: "resource.not_found" });
    }
    expect(await listed(created.key_id)).toMatchObject({ name: "test key" });
  });

  it("answers 409 state.conflict for a revoked key, 400 for an empty change, and 403 auth.jwt_required to an API key", async () => {
    const { created, client } = await newKey();
    const user = await session();
    expect((await user.raw("POST", "/api/compute/api-keys/update", { key_id: created.key_id })).body).toMatchObject({
      code: "request.invalid",
    });
    expect(
      (await client.raw("POST", "/api/compute/api-keys/update", { key_id: created.key_id, name: "by itself" })).body,
    ).toMatchObject({ code: "auth.jwt_required" });
    await user.call("revokeApiKey", { key_id: created.key_id });
    const refused = await user.raw("POST", "/api/compute/api-keys/update", {
      key_id: created.key_id,
      name: "too late",
    });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "state.conflict", details: { state: "revoked" } });
    expect(await listed(created.key_id)).toMatchObject({ name: "test key" });
  });
});

describe("last use", () => {
  it("lists when and from which address a key was last used", async () => {
    const { created, client } = await newKey();
    expect(created).toMatchObject({ last_used_at: null, last_used_ip: null });
    await client.call("listJobs", {});
    await expect
      .poll(async () => (await listed(created.key_id))?.last_used_ip, { timeout: 5000, interval: 50 })
      .toBe("127.0.0.1");
    expect((await listed(created.key_id))?.last_used_at).toBe(new Date(clock.now()).toISOString());
  });
});

/** Another user of the tenant's own business (a member), with the tenant user's password. */
async function sameBusinessColleague(): Promise<User> {
  return requestRpc(nc, "adminUserCreate", {
    app_id: tenant.app.app_id,
    business_id: tenant.business.business_id,
    email: `colleague-${randomBase62(8).toLowerCase()}@example.test`,
    password: tenant.password,
    role: "member",
  });
}

// Last in the file: it stops billing.
describe("while billing does not answer", () => {
  it("still lists the keys, with spent_credits_this_month null", async () => {
    const { created } = await newKey();
    await system.billing.stop();
    const item = await listed(created.key_id);
    expect(item).toMatchObject({ key_id: created.key_id, name: "test key", spent_credits_this_month: null });
  });
});
