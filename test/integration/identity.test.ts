import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { errorCodeOf } from "../harness/error-code.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startGateway, type RunningGateway, type Tenant } from "../harness/system.js";

let nats: NatsHarness;
let gatewayA: RunningGateway;
let gatewayB: RunningGateway;
let tenant: Tenant;

beforeAll(async () => {
  nats = await startNats();
  [gatewayA, gatewayB] = await Promise.all([startGateway(nats.url), startGateway(nats.url)]);
  tenant = await createTenant(gatewayA.nc);
});

afterAll(async () => {
  await Promise.all([gatewayA?.stop(), gatewayB?.stop()]);
  await nats?.stop();
});

describe("sign-in with e-mail and password", () => {
  it("returns an access token, a refresh token, the token type and the lifetime", async () => {
    const anonymous = new ComputeClient({ baseUrl: gatewayA.baseUrl, appId: tenant.app.app_id });
    const tokens = await anonymous.call("login", { email: tenant.user.email, password: tenant.password });
    expect(tokens.token_type).toBe("Bearer");
    expect(tokens.expires_in).toBe(900);
    expect(tokens.access_token.split(".")).toHaveLength(3);
    expect(tokens.refresh_token).toMatch(/^ses_/);
  });

  it("answers an unknown e-mail exactly like a wrong password", async () => {
    const anonymous = new ComputeClient({ baseUrl: gatewayA.baseUrl, appId: tenant.app.app_id });
    const wrongPassword = await anonymous.raw("POST", "/api/auth/LOGIN_EMAIL", {
      email: tenant.user.email,
      password: "not the password",
    });
    const unknownEmail = await anonymous.raw("POST", "/api/auth/LOGIN_EMAIL", {
      email: "nobody@example.test",
      password: "not the password",
    });
    expect(wrongPassword.status).toBe(401);
    expect(unknownEmail.status).toBe(401);
    expect(unknownEmail.body).toEqual(wrongPassword.body);
    expect(wrongPassword.body).toEqual({
      status: "ERROR",
      code: "auth.login_failed",
      message: "The e-mail or the password is wrong.",
    });
  });

  it("refuses a user of one app signing in under another app's id", async () => {
    const other = await createTenant(gatewayA.nc);
    const client = new ComputeClient({ baseUrl: gatewayA.baseUrl, appId: other.app.app_id });
    expect(await errorCodeOf(client.call("login", { email: tenant.user.email, password: tenant.password }))).toBe(
      "auth.login_failed",
    );
  });
});

describe("JWKS", () => {
  it("publishes the public signing key with its kid, and no private part", async () => {
    const response = await fetch(`${gatewayB.baseUrl}/.well-known/jwks.json`);
    const jwks = (await response.json()) as { keys: Array<Record<string, unknown>> };
    expect(jwks.keys).toHaveLength(1);
    expect(jwks.keys[0]).toMatchObject({ kty: "OKP", crv: "Ed25519", alg: "EdDSA", use: "sig" });
    expect(jwks.keys[0]?.kid).toEqual(expect.any(String));
    expect(jwks.keys[0]).not.toHaveProperty("d");
  });

  it("is the same key on every gateway replica, so a token from one works on the other", async () => {
    const { tokens } = await signedInClient(gatewayA.baseUrl, tenant);
    const onB = new ComputeClient({
      baseUrl: gatewayB.baseUrl,
      appId: tenant.app.app_id,
      accessToken: tokens.access_token,
    });
    await expect(onB.call("listApiKeys", {})).resolves.toEqual({ items: expect.any(Array) });
  });
});

describe("API keys", () => {
  it("mints a key shown once, lists it without the secret, and refuses it everywhere once revoked", async () => {
    const { client } = await signedInClient(gatewayA.baseUrl, tenant);
    const created = await client.call("createApiKey", {
      name: "ci runner",
      maxJobsPerHour: 100,
      allowedJobTypes: ["shell"],
    });
    expect(created.key).toMatch(/^cjs_[0-9A-Za-z]{58}$/);
    expect(created).toMatchObject({
      name: "ci runner",
      maxJobsPerHour: 100,
      maxConcurrentJobs: null,
      allowedJobTypes: ["shell"],
      revoked_at: null,
    });

    const withKeyOnA = new ComputeClient({ baseUrl: gatewayA.baseUrl, appId: tenant.app.app_id, apiKey: created.key });
    const withKeyOnB = new ComputeClient({ baseUrl: gatewayB.baseUrl, appId: tenant.app.app_id, apiKey: created.key });
    const listed = await withKeyOnB.call("listApiKeys", {});
    const mine = listed.items.find((item) => item.key_id === created.key_id);
    expect(mine).toMatchObject({ name: "ci runner", hint: created.key.slice(-4) });
    expect(JSON.stringify(listed)).not.toContain(created.key);
    await withKeyOnA.call("listApiKeys", {});

    await client.call("revokeApiKey", { key_id: created.key_id });
    expect(await errorCodeOf(withKeyOnA.call("listApiKeys", {}))).toBe("auth.invalid_credentials");
    await expect
      .poll(() => errorCodeOf(withKeyOnB.call("listApiKeys", {})), { timeout: 5000 })
      .toBe("auth.invalid_credentials");
  });

  it("cannot mint keys with an API key: creating one needs a signed-in session", async () => {
    const { client } = await signedInClient(gatewayA.baseUrl, tenant);
    const created = await client.call("createApiKey", { name: "k" });
    const withKey = client.with({ apiKey: created.key });
    const response = await withKey.raw("POST", "/api/compute/api-keys/create", { name: "another" });
    expect(response.status).toBe(403);
    expect(response.body).toMatchObject({ status: "ERROR", code: "auth.jwt_required" });
  });

  it("refuses a key of one app presented under another app's id", async () => {
    const { client } = await signedInClient(gatewayA.baseUrl, tenant);
    const created = await client.call("createApiKey", { name: "k" });
    const other = await createTenant(gatewayA.nc);
    const crossApp = new ComputeClient({ baseUrl: gatewayA.baseUrl, appId: other.app.app_id, apiKey: created.key });
    expect(await errorCodeOf(crossApp.call("listApiKeys", {}))).toBe("auth.invalid_credentials");
  });

  it("answers not found when revoking another tenant's key, and leaves that key working", async () => {
    const { client } = await signedInClient(gatewayA.baseUrl, tenant);
    const created = await client.call("createApiKey", { name: "victim" });
    const other = await createTenant(gatewayA.nc);
    const { client: otherClient } = await signedInClient(gatewayA.baseUrl, other);
    expect(await errorCodeOf(otherClient.call("revokeApiKey", { key_id: created.key_id }))).toBe("resource.not_found");
    await expect(client.with({ apiKey: created.key }).call("listApiKeys", {})).resolves.toBeDefined();
  });
});

describe("refresh and logout", () => {
  // The grace for the token the last refresh spent is tested with a moved clock in session-refresh.test.ts.
  it("rotates the refresh token; reusing a spent one (other than the last, just spent) ends the whole session", async () => {
    const { anonymous, tokens } = await signedInClient(gatewayA.baseUrl, tenant);
    const second = await anonymous.call("refresh", { refresh_token: tokens.refresh_token });
    expect(second.refresh_token).not.toBe(tokens.refresh_token);
    const third = await anonymous.call("refresh", { refresh_token: second.refresh_token });
    expect(await errorCodeOf(anonymous.call("refresh", { refresh_token: tokens.refresh_token }))).toBe(
      "auth.refresh_invalid",
    );
    // The reuse ended the family: the newest refresh token and its access token are dead too.
    expect(await errorCodeOf(anonymous.call("refresh", { refresh_token: third.refresh_token }))).toBe(
      "auth.refresh_invalid",
    );
    expect(await errorCodeOf(anonymous.with({ accessToken: third.access_token }).call("listApiKeys", {}))).toBe(
      "auth.invalid_credentials",
    );
  });

  it("logout ends the session on every replica: its access token and refresh token stop working", async () => {
    const { anonymous, client, tokens } = await signedInClient(gatewayA.baseUrl, tenant);
    const onB = new ComputeClient({
      baseUrl: gatewayB.baseUrl,
      appId: tenant.app.app_id,
      accessToken: tokens.access_token,
    });
    await onB.call("listApiKeys", {});
    await anonymous.call("logout", { refresh_token: tokens.refresh_token });
    expect(await errorCodeOf(client.call("listApiKeys", {}))).toBe("auth.invalid_credentials");
    await expect
      .poll(() => errorCodeOf(onB.call("listApiKeys", {})), { timeout: 5000 })
      .toBe("auth.invalid_credentials");
    expect(await errorCodeOf(anonymous.call("refresh", { refresh_token: tokens.refresh_token }))).toBe(
      "auth.refresh_invalid",
    );
  });
});

describe("one-time codes", () => {
  it("signs in once with the code sent, and never again with the same code", async () => {
    const anonymous = new ComputeClient({ baseUrl: gatewayA.baseUrl, appId: tenant.app.app_id });
    await expect(anonymous.call("requestOtp", { email: tenant.user.email })).resolves.toEqual({ expires_in: 600 });
    await expect.poll(() => gatewayA.outbox.get(tenant.user.email)?.length ?? 0).toBeGreaterThan(0);
    const code = gatewayA.outbox.get(tenant.user.email)?.at(-1) as string;
    expect(code).toMatch(/^\d{6}$/);
    const tokens = await anonymous.call("verifyOtp", { email: tenant.user.email, code });
    expect(tokens.token_type).toBe("Bearer");
    expect(await errorCodeOf(anonymous.call("verifyOtp", { email: tenant.user.email, code }))).toBe("auth.otp_invalid");
  });

  it("answers a request for an unknown address the same way, and sends nothing", async () => {
    const anonymous = new ComputeClient({ baseUrl: gatewayA.baseUrl, appId: tenant.app.app_id });
    await expect(anonymous.call("requestOtp", { email: "ghost@example.test" })).resolves.toEqual({ expires_in: 600 });
    expect(gatewayA.outbox.has("ghost@example.test")).toBe(false);
  });
});
