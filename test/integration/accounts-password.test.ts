/**
 * Changing a password (signed in, with the current one) and resetting it with a code sent
 * by e-mail, on two gateway replicas over one NATS: what ends where, and what the sign-in
 * guard counts.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { errorCodeOf } from "../harness/error-code.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startGateway, type RunningGateway, type Tenant } from "../harness/system.js";

let nats: NatsHarness;
let gatewayA: RunningGateway;
let gatewayB: RunningGateway;

beforeAll(async () => {
  nats = await startNats();
  [gatewayA, gatewayB] = await Promise.all([startGateway(nats.url), startGateway(nats.url)]);
});

afterAll(async () => {
  await Promise.all([gatewayA?.stop(), gatewayB?.stop()]);
  await nats?.stop();
});

const NEW_PASSWORD = "a brand new password";

function anonymousOn(gateway: RunningGateway, tenant: Tenant): ComputeClient {
  return new ComputeClient({ baseUrl: gateway.baseUrl, appId: tenant.app.app_id });
}

/** The last code the gateway "e-mailed" to the address, waiting for its delivery (it happens off the request path). */
async function lastCodeSent(gateway: RunningGateway, email: string, before = 0): Promise<string> {
  await expect.poll(() => gateway.outbox.get(email)?.length ?? 0).toBeGreaterThan(before);
  return gateway.outbox.get(email)!.at(-1)!;
}

function sentCount(gateway: RunningGateway, email: string): number {
  return gateway.outbox.get(email)?.length ?? 0;
}

describe("changing the password", () => {
  it("ends every other session of the user on every replica and keeps the caller's own", async () => {
    const tenant = await createTenant(gatewayA.nc);
    const changer = await signedInClient(gatewayA.baseUrl, tenant);
    const other = await signedInClient(gatewayA.baseUrl, tenant);
    const otherOnB = anonymousOn(gatewayB, tenant).with({ accessToken: other.tokens.access_token });
    const changerOnB = anonymousOn(gatewayB, tenant).with({ accessToken: changer.tokens.access_token });
    // Both sessions are cached on B before the change.
    await otherOnB.call("listApiKeys", {});
    await changerOnB.call("listApiKeys", {});

    await expect(
      changer.client.call("changePassword", { current_password: tenant.password, new_password: NEW_PASSWORD }),
    ).resolves.toEqual({ password_changed: true });

    expect(await errorCodeOf(other.client.call("listApiKeys", {}))).toBe("auth.invalid_credentials");
    await expect
      .poll(() => errorCodeOf(otherOnB.call("listApiKeys", {})), { timeout: 5000 })
      .toBe("auth.invalid_credentials");
    expect(await errorCodeOf(other.anonymous.call("refresh", { refresh_token: other.tokens.refresh_token }))).toBe(
      "auth.refresh_invalid",
    );

    await expect(changerOnB.call("listApiKeys", {})).resolves.toBeDefined();
    await expect(
      changer.anonymous.call("refresh", { refresh_token: changer.tokens.refresh_token }),
    ).resolves.toMatchObject({ token_type: "Bearer" });

    const anonymous = anonymousOn(gatewayB, tenant);
    expect(await errorCodeOf(anonymous.call("login", { email: tenant.user.email, password: tenant.password }))).toBe(
      "auth.login_failed",
    );
    await expect(anonymous.call("login", { email: tenant.user.email, password: NEW_PASSWORD })).resolves.toMatchObject({
      token_type: "Bearer",
    });
  });

  it("refuses a wrong current password and counts it like a failed sign-in, so it cannot be guessed", async () => {
    const tenant = await createTenant(gatewayA.nc);
    const { client } = await signedInClient(gatewayA.baseUrl, tenant);
    const wrong = { current_password: "not the password", new_password: NEW_PASSWORD };
    // The default guard slows the account down after three failures.
    for (let failure = 1; failure <= 3; failure += 1)
      expect(await errorCodeOf(client.call("changePassword", wrong))).toBe("auth.password_incorrect");
    expect(await errorCodeOf(client.call("changePassword", { ...wrong, current_password: tenant.password }))).toBe(
      "auth.too_many_attempts",
    );
    expect(
      await errorCodeOf(
        anonymousOn(gatewayB, tenant).call("login", { email: tenant.user.email, password: tenant.password }),
      ),
    ).toBe("auth.too_many_attempts");
  });

  it("holds a new password to the rules of user creation and leaves the old one in place", async () => {
    const tenant = await createTenant(gatewayA.nc);
    const { client } = await signedInClient(gatewayA.baseUrl, tenant);
    expect(
      await errorCodeOf(
        client.call("changePassword", { current_password: tenant.password, new_password: "too short" }),
      ),
    ).toBe("request.invalid");
    await expect(
      anonymousOn(gatewayA, tenant).call("login", { email: tenant.user.email, password: tenant.password }),
    ).resolves.toBeDefined();
  });

  it("needs a signed-in session: an API key of the user cannot change the password", async () => {
    const tenant = await createTenant(gatewayA.nc);
    const { client } = await signedInClient(gatewayA.baseUrl, tenant);
    const { key } = await client.call("createApiKey", { name: "no password changes" });
    const withKey = anonymousOn(gatewayA, tenant).with({ apiKey: key });
    expect(
      await errorCodeOf(
        withKey.call("changePassword", { current_password: tenant.password, new_password: NEW_PASSWORD }),
      ),
    ).toBe("auth.jwt_required");
  });
});

describe("resetting the password with an e-mailed code", () => {
  it("answers an unknown address like a known one and sends it nothing", async () => {
    const tenant = await createTenant(gatewayA.nc);
    const anonymous = anonymousOn(gatewayA, tenant);
    const known = await anonymous.raw("POST", "/api/auth/password/reset/request", { email: tenant.user.email });
    const unknown = await anonymous.raw("POST", "/api/auth/password/reset/request", { email: "ghost@example.test" });
    expect(unknown.status).toBe(200);
    expect(unknown.body).toEqual(known.body);
    await lastCodeSent(gatewayA, tenant.user.email);
    expect(gatewayA.outbox.has("ghost@example.test")).toBe(false);
  });

  it("sets the password once with the right code and ends every session of the user on every replica", async () => {
    const tenant = await createTenant(gatewayA.nc);
    const signedIn = await signedInClient(gatewayA.baseUrl, tenant);
    const onB = anonymousOn(gatewayB, tenant).with({ accessToken: signedIn.tokens.access_token });
    await onB.call("listApiKeys", {});

    const anonymous = anonymousOn(gatewayA, tenant);
    await expect(anonymous.call("requestPasswordReset", { email: tenant.user.email })).resolves.toEqual({
      expires_in: 600,
    });
    const code = await lastCodeSent(gatewayA, tenant.user.email);
    await expect(
      anonymous.call("confirmPasswordReset", { email: tenant.user.email, code, new_password: NEW_PASSWORD }),
    ).resolves.toEqual({ password_reset: true });

    expect(await errorCodeOf(signedIn.client.call("listApiKeys", {}))).toBe("auth.invalid_credentials");
    await expect
      .poll(() => errorCodeOf(onB.call("listApiKeys", {})), { timeout: 5000 })
      .toBe("auth.invalid_credentials");
    expect(await errorCodeOf(anonymous.call("refresh", { refresh_token: signedIn.tokens.refresh_token }))).toBe(
      "auth.refresh_invalid",
    );
    expect(
      await errorCodeOf(
        anonymous.call("confirmPasswordReset", {
          email: tenant.user.email,
          code,
          new_password: "yet another password",
        }),
      ),
    ).toBe("auth.otp_invalid");
    expect(await errorCodeOf(anonymous.call("login", { email: tenant.user.email, password: tenant.password }))).toBe(
      "auth.login_failed",
    );
    await expect(anonymous.call("login", { email: tenant.user.email, password: NEW_PASSWORD })).resolves.toMatchObject({
      token_type: "Bearer",
    });
  });

  it("keeps the purposes apart: a sign-in code cannot reset the password, nor a reset code sign in", async () => {
    const tenant = await createTenant(gatewayA.nc);
    const anonymous = anonymousOn(gatewayA, tenant);
    await anonymous.call("requestOtp", { email: tenant.user.email });
    const signInCode = await lastCodeSent(gatewayA, tenant.user.email);
    expect(
      await errorCodeOf(
        anonymous.call("confirmPasswordReset", {
          email: tenant.user.email,
          code: signInCode,
          new_password: NEW_PASSWORD,
        }),
      ),
    ).toBe("auth.otp_invalid");

    await anonymous.call("requestPasswordReset", { email: tenant.user.email });
    const resetCode = await lastCodeSent(gatewayA, tenant.user.email, 1);
    expect(await errorCodeOf(anonymous.call("verifyOtp", { email: tenant.user.email, code: resetCode }))).toBe(
      "auth.otp_invalid",
    );
    // Each code still works for its own purpose, and the password is unchanged.
    await expect(anonymous.call("verifyOtp", { email: tenant.user.email, code: signInCode })).resolves.toMatchObject({
      token_type: "Bearer",
    });
    await expect(
      anonymous.call("login", { email: tenant.user.email, password: tenant.password }),
    ).resolves.toBeDefined();
    await expect(
      anonymous.call("confirmPasswordReset", { email: tenant.user.email, code: resetCode, new_password: NEW_PASSWORD }),
    ).resolves.toEqual({ password_reset: true });
  });

  it("counts wrong codes towards the sign-in lock of the account", async () => {
    const tenant = await createTenant(gatewayA.nc);
    const anonymous = anonymousOn(gatewayA, tenant);
    await anonymous.call("requestPasswordReset", { email: tenant.user.email });
    const code = await lastCodeSent(gatewayA, tenant.user.email);
    const wrong = code === "000000" ? "111111" : "000000";
    for (let failure = 1; failure <= 3; failure += 1) {
      expect(
        await errorCodeOf(
          anonymous.call("confirmPasswordReset", { email: tenant.user.email, code: wrong, new_password: NEW_PASSWORD }),
        ),
      ).toBe("auth.otp_invalid");
    }
    expect(
      await errorCodeOf(
        anonymous.call("confirmPasswordReset", { email: tenant.user.email, code, new_password: NEW_PASSWORD }),
      ),
    ).toBe("auth.too_many_attempts");
  });

  it("does not reach across applications: an address asked under another app's id gets no code and its password stays", async () => {
    const tenant = await createTenant(gatewayA.nc);
    const otherApp = await createTenant(gatewayA.nc);
    const underOther = anonymousOn(gatewayA, otherApp);
    await underOther.call("requestPasswordReset", { email: tenant.user.email });
    await underOther.call("requestPasswordReset", { email: otherApp.user.email });
    await lastCodeSent(gatewayA, otherApp.user.email);
    expect(sentCount(gatewayA, tenant.user.email)).toBe(0);
    expect(
      await errorCodeOf(
        underOther.call("confirmPasswordReset", {
          email: tenant.user.email,
          code: "123456",
          new_password: NEW_PASSWORD,
        }),
      ),
    ).toBe("auth.otp_invalid");
    await expect(
      anonymousOn(gatewayA, tenant).call("login", { email: tenant.user.email, password: tenant.password }),
    ).resolves.toBeDefined();
  });
});
