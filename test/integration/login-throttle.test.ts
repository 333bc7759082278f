import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, startGateway, type RunningGateway } from "../harness/system.js";

let nats: NatsHarness;
let slowing: RunningGateway;
let locking: RunningGateway;
let lenient: RunningGateway;

beforeAll(async () => {
  nats = await startNats();
  // Each replica reads the shared counters with its own thresholds; the client address comes from X-Forwarded-For.
  [slowing, locking, lenient] = await Promise.all([
    startGateway(nats.url, {
      CJS_TRUST_PROXY: "true",
      CJS_LOGIN_SLOW_AFTER_FAILURES: "2",
      CJS_LOGIN_LOCK_AFTER_FAILURES: "50",
    }),
    startGateway(nats.url, {
      CJS_TRUST_PROXY: "true",
      CJS_LOGIN_SLOW_AFTER_FAILURES: "100",
      CJS_LOGIN_LOCK_AFTER_FAILURES: "3",
      CJS_LOGIN_LOCK_SECONDS: "600",
    }),
    startGateway(nats.url, {
      CJS_TRUST_PROXY: "true",
      CJS_LOGIN_SLOW_AFTER_FAILURES: "100",
      CJS_LOGIN_LOCK_AFTER_FAILURES: "100",
    }),
  ]);
});

afterAll(async () => {
  await Promise.all([slowing?.stop(), locking?.stop(), lenient?.stop()]);
  await nats?.stop();
});

function loginFrom(gateway: RunningGateway, appId: string, address: string, email: string, password: string) {
  return new ComputeClient({ baseUrl: gateway.baseUrl, appId }).raw(
    "POST",
    "/api/auth/LOGIN_EMAIL",
    { email, password },
    { "x-forwarded-for": address },
  );
}

describe("sign-in throttling", () => {
  it("slows an account down after repeated failures: 429 auth.too_many_attempts with Retry-After", async () => {
    const tenant = await createTenant(slowing.nc);
    for (const address of ["10.0.0.1", "10.0.0.2"]) {
      expect((await loginFrom(slowing, tenant.app.app_id, address, tenant.user.email, "wrong password")).status).toBe(
        401,
      );
    }
    const throttled = await loginFrom(slowing, tenant.app.app_id, "10.0.0.3", tenant.user.email, tenant.password);
    expect(throttled.status).toBe(429);
    expect(throttled.body).toMatchObject({ status: "ERROR", code: "auth.too_many_attempts" });
    expect(Number(throttled.headers.get("retry-after"))).toBe(1);
  });

  it("locks an account after more failures, refusing even the right password for the lock period", async () => {
    const tenant = await createTenant(locking.nc);
    for (let attempt = 0; attempt < 3; attempt += 1) {
      expect(
        (await loginFrom(locking, tenant.app.app_id, `10.1.0.${attempt}`, tenant.user.email, "wrong password")).status,
      ).toBe(401);
    }
    const locked = await loginFrom(locking, tenant.app.app_id, "10.1.0.9", tenant.user.email, tenant.password);
    expect(locked.status).toBe(429);
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(590);
  });

  it("treats an unknown e-mail exactly like a real account, so the lock reveals nothing", async () => {
    const tenant = await createTenant(locking.nc);
    const ghost = "ghost-account@example.test";
    const answers = [];
    for (let attempt = 0; attempt < 4; attempt += 1) {
      answers.push((await loginFrom(locking, tenant.app.app_id, `10.2.0.${attempt}`, ghost, "whatever")).status);
    }
    expect(answers).toEqual([401, 401, 401, 429]);
  });

  it("a successful sign-in clears the account's failures", async () => {
    const tenant = await createTenant(locking.nc);
    for (let round = 0; round < 2; round += 1) {
      for (let attempt = 0; attempt < 2; attempt += 1) {
        expect(
          (await loginFrom(locking, tenant.app.app_id, `10.3.${round}.${attempt}`, tenant.user.email, "wrong")).status,
        ).toBe(401);
      }
      expect(
        (await loginFrom(locking, tenant.app.app_id, `10.3.${round}.9`, tenant.user.email, tenant.password)).status,
      ).toBe(200);
    }
  });
});

describe("one-time code tries", () => {
  it("burns a code after five wrong tries, so the right code no longer works", async () => {
    const tenant = await createTenant(lenient.nc);
    const client = new ComputeClient({ baseUrl: lenient.baseUrl, appId: tenant.app.app_id });
    await client.call("requestOtp", { email: tenant.user.email });
    await expect.poll(() => lenient.outbox.get(tenant.user.email)?.length ?? 0).toBe(1);
    const code = lenient.outbox.get(tenant.user.email)?.[0] as string;
    const wrong = code === "000000" ? "111111" : "000000";
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const response = await client.raw(
        "POST",
        "/api/auth/verify-otp",
        { email: tenant.user.email, code: wrong },
        { "x-forwarded-for": `10.4.0.${attempt}` },
      );
      expect(response.body).toMatchObject({ code: "auth.otp_invalid" });
    }
    const right = await client.raw(
      "POST",
      "/api/auth/verify-otp",
      { email: tenant.user.email, code },
      { "x-forwarded-for": "10.4.0.9" },
    );
    expect(right.status).toBe(401);
    expect(right.body).toMatchObject({ code: "auth.otp_invalid" });
  });

  it("a new code replaces the old one: the old code stops working", async () => {
    const tenant = await createTenant(lenient.nc);
    const client = new ComputeClient({ baseUrl: lenient.baseUrl, appId: tenant.app.app_id });
    await client.call("requestOtp", { email: tenant.user.email });
    await expect.poll(() => lenient.outbox.get(tenant.user.email)?.length ?? 0).toBe(1);
    await client.call("requestOtp", { email: tenant.user.email });
    await expect.poll(() => lenient.outbox.get(tenant.user.email)?.length ?? 0).toBe(2);
    const [first, second] = lenient.outbox.get(tenant.user.email) as [string, string];
    if (first !== second) {
      const old = await client.raw("POST", "/api/auth/verify-otp", { email: tenant.user.email, code: first });
      expect(old.status).toBe(401);
    }
    await expect(client.call("verifyOtp", { email: tenant.user.email, code: second })).resolves.toMatchObject({
      token_type: "Bearer",
    });
  });
});
