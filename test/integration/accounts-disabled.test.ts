/**
 * A user disabled, or given another role, on one gateway replica is treated so at once on
 * the other: each replica caches user records and evicts them from its KV watch. Every
 * credential is warmed into the other replica's cache first, so a refusal there proves
 * the eviction, not a cold read.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { type Role } from "../../shared/contract/index.js";
import { requestRpc } from "../../shared/nats/index.js";
import { randomBase62 } from "../../shared/runtime/index.js";
import { errorCodeOf, outcomeOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import {
  createTenant,
  signedInClient,
  startGateway,
  startNodeRegistry,
  type RunningGateway,
  type RunningService,
  type Tenant,
} from "../harness/system.js";

let nats: NatsHarness;
let gatewayA: RunningGateway;
let gatewayB: RunningGateway;
let registry: RunningService;
let tenant: Tenant;
let adminOnA: ComputeClient;

beforeAll(async () => {
  nats = await startNats();
  [gatewayA, gatewayB, registry] = await Promise.all([
    startGateway(nats.url),
    startGateway(nats.url),
    startNodeRegistry(nats.url),
  ]);
  tenant = await createTenant(gatewayA.nc);
  ({ client: adminOnA } = await signedInClient(gatewayA.baseUrl, tenant));
});

afterAll(async () => {
  await Promise.all([gatewayA?.stop(), gatewayB?.stop(), registry?.stop()]);
  await nats?.stop();
});

async function addUser(role: Role): Promise<Tenant> {
  const password = `pw-${randomBase62(20)}`;
  const user = await requestRpc(gatewayA.nc, "adminUserCreate", {
    app_id: tenant.app.app_id,
    business_id: tenant.business.business_id,
    email: `user-${randomBase62(8).toLowerCase()}@example.test`,
    password,
    role,
  });
  return { ...tenant, user, password };
}

/** The user signed in on replica B, with an API key they minted there: both already in B's caches. */
async function signedInOnB(user: Tenant) {
  const session = await signedInClient(gatewayB.baseUrl, user);
  const { key } = await session.client.call("createApiKey", { name: "warm" });
  const withKey = session.anonymous.with({ apiKey: key });
  await session.client.call("listApiKeys", {});
  await withKey.call("listApiKeys", {});
  return { ...session, withKey };
}

describe("a disabled user", () => {
  it("is refused at once on the other replica: access token, refresh token and API key", async () => {
    const member = await addUser("member");
    const onB = await signedInOnB(member);

    await adminOnA.call("disableUser", { user_id: member.user.user_id });

    await expect
      .poll(() => errorCodeOf(onB.client.call("listApiKeys", {})), { timeout: 5000 })
      .toBe("auth.invalid_credentials");
    await expect
      .poll(() => errorCodeOf(onB.withKey.call("listApiKeys", {})), { timeout: 5000 })
      .toBe("auth.invalid_credentials");
    expect(await errorCodeOf(onB.anonymous.call("refresh", { refresh_token: onB.tokens.refresh_token }))).toBe(
      "auth.refresh_invalid",
    );
  });

  it("gets no sign-in code and cannot sign in on either replica", async () => {
    const member = await addUser("member");
    await adminOnA.call("disableUser", { user_id: member.user.user_id });
    for (const gateway of [gatewayA, gatewayB]) {
      const anonymous = new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id });
      await expect(anonymous.call("requestOtp", { email: member.user.email })).resolves.toEqual({ expires_in: 600 });
      await expect(anonymous.call("requestPasswordReset", { email: member.user.email })).resolves.toEqual({
        expires_in: 600,
      });
      expect(gateway.outbox.has(member.user.email)).toBe(false);
      expect(await errorCodeOf(anonymous.call("login", { email: member.user.email, password: member.password }))).toBe(
        "auth.login_failed",
      );
    }
  });

  it("cannot use a sign-in or reset code sent before they were disabled", async () => {
    const member = await addUser("member");
    const anonymous = new ComputeClient({ baseUrl: gatewayB.baseUrl, appId: tenant.app.app_id });
    await anonymous.call("requestOtp", { email: member.user.email });
    await anonymous.call("requestPasswordReset", { email: member.user.email });
    const [signInCode, resetCode] = gatewayB.outbox.get(member.user.email)!;
    await adminOnA.call("disableUser", { user_id: member.user.user_id });
    expect(await errorCodeOf(anonymous.call("verifyOtp", { email: member.user.email, code: signInCode! }))).toBe(
      "auth.otp_invalid",
    );
    expect(
      await errorCodeOf(
        anonymous.call("confirmPasswordReset", {
          email: member.user.email,
          code: resetCode!,
          new_password: "a password set while disabled",
        }),
      ),
    ).toBe("auth.otp_invalid");
  });

  it("keeps the keys of the nodes they registered working, and gets old sessions back ended when enabled", async () => {
    const owner = await addUser("member");
    const onB = await signedInOnB(owner);
    const node = await FakeNode.register(onB.client, gatewayB.baseUrl, tenant.app.app_id, { pool_id: "own" });
    await node.heartbeat();

    await adminOnA.call("disableUser", { user_id: owner.user.user_id });
    await expect
      .poll(() => errorCodeOf(onB.withKey.call("listApiKeys", {})), { timeout: 5000 })
      .toBe("auth.invalid_credentials");
    await expect(node.heartbeat()).resolves.toBeDefined();

    await adminOnA.call("enableUser", { user_id: owner.user.user_id });
    // Their API keys work again; the sessions that disabling ended stay ended.
    await expect
      .poll(() => onB.withKey.call("listApiKeys", {}).then(() => "accepted"), { timeout: 5000 })
      .toBe("accepted");
    expect(await errorCodeOf(onB.client.call("listApiKeys", {}))).toBe("auth.invalid_credentials");
  });
});

describe("a role change", () => {
  it("applies at once on the other replica to the user's session, whatever the token's claim says", async () => {
    const member = await addUser("member");
    const onB = await signedInOnB(member);
    expect(await errorCodeOf(onB.client.call("listUsers", {}))).toBe("permission.denied");

    await adminOnA.call("setUserRole", { user_id: member.user.user_id, role: "admin" });
    await expect.poll(() => outcomeOf(onB.client.call("listUsers", {})), { timeout: 5000 }).toBe("ok");

    await adminOnA.call("setUserRole", { user_id: member.user.user_id, role: "member" });
    await expect.poll(() => errorCodeOf(onB.client.call("listUsers", {})), { timeout: 5000 }).toBe("permission.denied");
  });

  it("leaves an API key with the lower of the role it was minted with and the user's role now", async () => {
    const member = await addUser("member");
    const onB = await signedInOnB(member);
    const mintedAsMember = onB.withKey;

    await adminOnA.call("setUserRole", { user_id: member.user.user_id, role: "admin" });
    await expect.poll(() => outcomeOf(onB.client.call("listUsers", {})), { timeout: 5000 }).toBe("ok");
    expect(await errorCodeOf(mintedAsMember.call("listUsers", {}))).toBe("permission.denied");

    const { key } = await onB.client.call("createApiKey", { name: "minted as admin" });
    const mintedAsAdmin = onB.anonymous.with({ apiKey: key });
    await expect(mintedAsAdmin.call("listUsers", {})).resolves.toBeDefined();

    await adminOnA.call("setUserRole", { user_id: member.user.user_id, role: "member" });
    await expect
      .poll(() => errorCodeOf(mintedAsAdmin.call("listUsers", {})), { timeout: 5000 })
      .toBe("permission.denied");
  });
});
