/**
 * A business admin's users: list, invite, disable, enable and set-role, on the real
 * gateway over NATS; members refused, other tenants' users not found and left alone.
 */
import { Kvm } from "@nats-io/kv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { z } from "zod";
import { ComputeClient } from "../harness/client.js";
import { type Role } from "../../shared/contract/index.js";
import { BUCKETS, JsonBucket, requestRpc } from "../../shared/nats/index.js";
import { newId, randomBase62 } from "../../shared/runtime/index.js";
import { errorCodeOf, outcomeOf } from "../harness/error-code.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startGateway, type RunningGateway, type Tenant } from "../harness/system.js";

let nats: NatsHarness;
let gateway: RunningGateway;

beforeAll(async () => {
  nats = await startNats();
  gateway = await startGateway(nats.url);
});

afterAll(async () => {
  await gateway?.stop();
  await nats?.stop();
});

/** Another user of the tenant's business, made by the operator command, with a password. */
async function addUser(tenant: Tenant, role: Role): Promise<Tenant> {
  const password = `pw-${randomBase62(20)}`;
  const user = await requestRpc(gateway.nc, "adminUserCreate", {
    app_id: tenant.app.app_id,
    business_id: tenant.business.business_id,
    email: `user-${randomBase62(8).toLowerCase()}@example.test`,
    password,
    role,
  });
  return { ...tenant, user, password };
}

async function adminOf(tenant: Tenant): Promise<ComputeClient> {
  return (await signedInClient(gateway.baseUrl, tenant)).client;
}

async function statusOf(admin: ComputeClient, userId: string) {
  const { items } = await admin.call("listUsers", { limit: 500 });
  return items.find((item) => item.user_id === userId);
}

describe("users/list", () => {
  it("lists the business's users with role, status and last sign-in, a page at a time", async () => {
    const tenant = await createTenant(gateway.nc);
    const members = await Promise.all([addUser(tenant, "member"), addUser(tenant, "member")]);
    const admin = await adminOf(tenant);
    const everyone = [tenant.user.user_id, ...members.map(({ user }) => user.user_id)].sort();

    const first = await admin.call("listUsers", { limit: 2 });
    expect(first.items.map(({ user_id }) => user_id)).toEqual(everyone.slice(0, 2));
    expect(first.next_cursor).toBe(everyone[1]);
    const second = await admin.call("listUsers", { limit: 2, cursor: first.next_cursor! });
    expect(second).toEqual({ items: [expect.objectContaining({ user_id: everyone[2] })], next_cursor: null });

    const self = [...first.items, ...second.items].find(({ user_id }) => user_id === tenant.user.user_id);
    expect(self).toEqual({
      user_id: tenant.user.user_id,
      email: tenant.user.email,
      role: "admin",
      status: "active",
      created_at: tenant.user.created_at,
      last_sign_in_at: expect.any(String),
    });
    expect([...first.items, ...second.items].find(({ user_id }) => user_id === members[0]!.user.user_id)).toMatchObject(
      { role: "member", last_sign_in_at: null },
    );
  });
});

describe("users stored by an older version", () => {
  it("are listed, as active, once a gateway has started and indexed them", async () => {
    const tenant = await createTenant(gateway.nc);
    // As an older version stored a user: no status, no last sign-in, no business index entry.
    const older = {
      user_id: newId("usr"),
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      email: "older@example.test",
      role: "member",
      created_at: new Date().toISOString(),
      password_hash: "scrypt$1$1$1$AA$AA",
    };
    await new JsonBucket(await new Kvm(gateway.nc).open(BUCKETS.users), z.record(z.string(), z.unknown())).create(
      older.user_id,
      older,
    );
    const admin = await adminOf(tenant);
    expect((await admin.call("listUsers", {})).items.map(({ user_id }) => user_id)).not.toContain(older.user_id);

    const restarted = await startGateway(nats.url);
    try {
      await expect
        .poll(async () => (await admin.call("listUsers", {})).items.find(({ user_id }) => user_id === older.user_id), {
          timeout: 10_000,
        })
        .toEqual({
          user_id: older.user_id,
          email: older.email,
          role: "member",
          status: "active",
          created_at: older.created_at,
          last_sign_in_at: null,
        });
    } finally {
      await restarted.stop();
    }
  });
});

describe("members", () => {
  it("get permission.denied for every users operation, and change nothing", async () => {
    const tenant = await createTenant(gateway.nc);
    const member = await addUser(tenant, "member");
    const client = await adminOf(member);
    expect(await errorCodeOf(client.call("listUsers", {}))).toBe("permission.denied");
    expect(await errorCodeOf(client.call("inviteUser", { email: "someone@example.test" }))).toBe("permission.denied");
    expect(await errorCodeOf(client.call("disableUser", { user_id: tenant.user.user_id }))).toBe("permission.denied");
    expect(await errorCodeOf(client.call("enableUser", { user_id: tenant.user.user_id }))).toBe("permission.denied");
    expect(await errorCodeOf(client.call("setUserRole", { user_id: member.user.user_id, role: "admin" }))).toBe(
      "permission.denied",
    );
    const { items } = await (await adminOf(tenant)).call("listUsers", {});
    expect(items.map(({ role, status }) => [role, status]).sort()).toEqual([
      ["admin", "active"],
      ["member", "active"],
    ]);
  });
});

describe("users/invite", () => {
  it("adds an invited user who sets a password with the e-mailed code and becomes active", async () => {
    const tenant = await createTenant(gateway.nc);
    const admin = await adminOf(tenant);
    const email = `invitee-${randomBase62(8).toLowerCase()}@example.test`;
    const invited = await admin.call("inviteUser", { email, role: "member" });
    expect(invited).toMatchObject({ email, role: "member", status: "invited", last_sign_in_at: null });

    const anonymous = new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id });
    // The invitation has no usable password until one is set.
    expect(await errorCodeOf(anonymous.call("login", { email, password: "any password at all" }))).toBe(
      "auth.login_failed",
    );
    await expect.poll(() => gateway.outbox.get(email)?.length ?? 0).toBe(1);
    const code = gateway.outbox.get(email)![0]!;
    await anonymous.call("confirmPasswordReset", { email, code, new_password: "the invitee's own password" });
    expect(await statusOf(admin, invited.user_id)).toMatchObject({ status: "active" });
    const tokens = await anonymous.call("login", { email, password: "the invitee's own password" });
    await expect(anonymous.with({ accessToken: tokens.access_token }).call("listApiKeys", {})).resolves.toEqual({
      items: [],
    });
  });

  it("makes an invitee who signs in with a one-time code active", async () => {
    const tenant = await createTenant(gateway.nc);
    const admin = await adminOf(tenant);
    const email = `invitee-${randomBase62(8).toLowerCase()}@example.test`;
    const invited = await admin.call("inviteUser", { email });
    const anonymous = new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id });
    await anonymous.call("requestOtp", { email });
    await expect.poll(() => gateway.outbox.get(email)?.length ?? 0).toBe(2);
    await anonymous.call("verifyOtp", { email, code: gateway.outbox.get(email)![1]! });
    expect(await statusOf(admin, invited.user_id)).toMatchObject({
      status: "active",
      role: "member",
      last_sign_in_at: expect.any(String),
    });
  });

  it("refuses an e-mail that already has an account in the application, in any business", async () => {
    const tenant = await createTenant(gateway.nc);
    const otherBusiness = await createTenant(gateway.nc, { appId: tenant.app.app_id });
    const admin = await adminOf(tenant);
    expect(await errorCodeOf(admin.call("inviteUser", { email: tenant.user.email }))).toBe("resource.already_exists");
    expect(await errorCodeOf(admin.call("inviteUser", { email: otherBusiness.user.email.toUpperCase() }))).toBe(
      "resource.already_exists",
    );
    expect((await admin.call("listUsers", {})).items).toHaveLength(1);
  });
});

describe("users/disable, users/enable and users/set-role", () => {
  it("disables a user, whose sign-in is then refused like a wrong password, and enables them again", async () => {
    const tenant = await createTenant(gateway.nc);
    const member = await addUser(tenant, "member");
    const admin = await adminOf(tenant);
    const anonymous = new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id });
    const login = () => anonymous.call("login", { email: member.user.email, password: member.password });

    await expect(admin.call("disableUser", { user_id: member.user.user_id })).resolves.toMatchObject({
      status: "disabled",
    });
    await expect(admin.call("disableUser", { user_id: member.user.user_id })).resolves.toMatchObject({
      status: "disabled",
    });
    const refused = await anonymous.raw("POST", "/api/auth/LOGIN_EMAIL", {
      email: member.user.email,
      password: member.password,
    });
    const wrong = await anonymous.raw("POST", "/api/auth/LOGIN_EMAIL", {
      email: member.user.email,
      password: "not the password",
    });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual(wrong.body);

    await expect(admin.call("enableUser", { user_id: member.user.user_id })).resolves.toMatchObject({
      status: "active",
    });
    await expect(login()).resolves.toMatchObject({ token_type: "Bearer" });
  });

  it("refuses disabling yourself and leaving the business without an active admin; with a second admin it works", async () => {
    const tenant = await createTenant(gateway.nc);
    const admin = await adminOf(tenant);
    const self = tenant.user.user_id;
    expect(await errorCodeOf(admin.call("disableUser", { user_id: self }))).toBe("user.cannot_disable_self");
    expect(await errorCodeOf(admin.call("setUserRole", { user_id: self, role: "member" }))).toBe("user.last_admin");
    expect(await statusOf(admin, self)).toMatchObject({ role: "admin", status: "active" });

    const second = await addUser(tenant, "member");
    await expect(admin.call("setUserRole", { user_id: second.user.user_id, role: "admin" })).resolves.toMatchObject({
      role: "admin",
    });
    const secondAdmin = await adminOf(second);
    await expect(admin.call("setUserRole", { user_id: self, role: "member" })).resolves.toMatchObject({
      role: "member",
    });
    // The last admin now is the second one: neither a demotion nor a disabling may remove them.
    expect(await errorCodeOf(secondAdmin.call("setUserRole", { user_id: second.user.user_id, role: "member" }))).toBe(
      "user.last_admin",
    );
    await expect(secondAdmin.call("setUserRole", { user_id: self, role: "admin" })).resolves.toMatchObject({
      role: "admin",
    });
    await expect(secondAdmin.call("disableUser", { user_id: self })).resolves.toMatchObject({ status: "disabled" });
    expect(await errorCodeOf(secondAdmin.call("setUserRole", { user_id: second.user.user_id, role: "member" }))).toBe(
      "user.last_admin",
    );
  });
});

describe("two admins demoting each other at the same moment", () => {
  it("leave at least one active admin: one demotion at most succeeds, the other is refused (user.last_admin, or permission.denied when its caller was demoted first)", async () => {
    const tenant = await createTenant(gateway.nc);
    const second = await addUser(tenant, "admin");
    const [first, other] = await Promise.all([adminOf(tenant), adminOf(second)]);
    const outcomes = await Promise.all([
      outcomeOf(first.call("setUserRole", { user_id: second.user.user_id, role: "member" })),
      outcomeOf(other.call("setUserRole", { user_id: tenant.user.user_id, role: "member" })),
    ]);
    // A request is authorised by the caller's role when it is served: an admin demoted a moment before is one no more.
    for (const outcome of outcomes) expect(["ok", "user.last_admin", "permission.denied"]).toContain(outcome);
    expect(outcomes.filter((outcome) => outcome === "ok").length).toBeLessThanOrEqual(1);
    const { items } = await (await adminOf(tenant))
      .call("listUsers", {})
      .catch(async () => (await adminOf(second)).call("listUsers", {}));
    expect(items.filter(({ role, status }) => role === "admin" && status === "active").length).toBeGreaterThanOrEqual(
      1,
    );
  });
});

describe("tenancy", () => {
  it("answers not found for users of another business of the app or of another app, and changes nothing", async () => {
    const tenant = await createTenant(gateway.nc);
    const sameApp = await createTenant(gateway.nc, { appId: tenant.app.app_id });
    const otherApp = await createTenant(gateway.nc);
    const admin = await adminOf(tenant);
    for (const target of [sameApp, otherApp]) {
      const user_id = target.user.user_id;
      expect(await errorCodeOf(admin.call("disableUser", { user_id }))).toBe("resource.not_found");
      expect(await errorCodeOf(admin.call("enableUser", { user_id }))).toBe("resource.not_found");
      expect(await errorCodeOf(admin.call("setUserRole", { user_id, role: "member" }))).toBe("resource.not_found");
      expect(await statusOf(await adminOf(target), user_id)).toMatchObject({ role: "admin", status: "active" });
    }
    expect((await admin.call("listUsers", {})).items.map(({ user_id }) => user_id)).toEqual([tenant.user.user_id]);
  });
});
