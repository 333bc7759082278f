import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeJobsClient, type Tokens } from "../../clients/sdk/src/index.js";
import { CliRunner } from "../harness/cli.js";
import { ComputeClient } from "../harness/client.js";
import { errorCodeOf } from "../harness/error-code.js";
import { ManualClock } from "../harness/manual-clock.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, startGateway, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

/**
 * Sessions that last as long as their refresh token, with 60 s access tokens and the
 * gateway's clock moved by hand (no test waits for a token to expire): the gateway's
 * rotation and its grace for a token spent a moment ago, the SDK, and the real `cjs`
 * across two expiries and more, two at a time, and signed out only when the session is over.
 */
const TTL_SECONDS = 60;
const GRACE_SECONDS = 30;

let nats: NatsHarness;
let system: RunningSystem;
let clock: ManualClock;
let tenant: Tenant;
let baseUrl: string;
/** A gateway of the same system with the grace off. */
let strictUrl: string;
/**
 * A gateway whose clock runs 50 s behind this machine's: the tokens it issues expire 10 s
 * from now by the clock of a client on this machine, which therefore refreshes them ahead
 * of use, as a client does once its token's lifetime is nearly over.
 */
let laggingUrl: string;
const LAG_MS = (TTL_SECONDS - 10) * 1000;
let cli: CliRunner;

beforeAll(async () => {
  nats = await startNats();
  clock = new ManualClock();
  system = await startSystem(nats.url, { gateways: 0, schedulers: 1, registries: 1 });
  const env = { CJS_ACCESS_TOKEN_TTL_SECONDS: String(TTL_SECONDS) };
  const gateway = await startGateway(nats.url, env, { clock });
  const strict = await startGateway(nats.url, { ...env, CJS_REFRESH_REUSE_GRACE_SECONDS: "0" }, { clock });
  const lagging = await startGateway(nats.url, env, { clock: { now: () => Date.now() - LAG_MS } });
  system.gateways.push(gateway, strict, lagging);
  baseUrl = gateway.baseUrl;
  strictUrl = strict.baseUrl;
  laggingUrl = lagging.baseUrl;
  tenant = await createTenant(gateway.nc);
  cli = new CliRunner({ baseUrl, appId: tenant.app.app_id });
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
  cli?.cleanUp();
});

function anonymous(url = baseUrl): ComputeClient {
  return new ComputeClient({ baseUrl: url, appId: tenant.app.app_id });
}

async function signedIn(url = baseUrl): Promise<Tokens> {
  return anonymous(url).call("login", { email: tenant.user.email, password: tenant.password });
}

function refresh(refreshToken: string, url = baseUrl): Promise<Tokens> {
  return anonymous(url).call("refresh", { refresh_token: refreshToken });
}

function listKeysWith(accessToken: string): Promise<unknown> {
  return anonymous().with({ accessToken }).call("listApiKeys", {});
}

describe("the gateway's rotation", () => {
  it("a refresh token spent a moment ago gets the same new refresh token again, and the session goes on", async () => {
    const first = await signedIn();
    const second = await refresh(first.refresh_token);
    clock.advance((GRACE_SECONDS - 1) * 1000);

    const again = await refresh(first.refresh_token);

    expect(again.refresh_token).toBe(second.refresh_token);
    await listKeysWith(again.access_token);
    const third = await refresh(again.refresh_token);
    await listKeysWith(third.access_token);
  });

  it("two refreshes racing with one token both succeed, with the same refresh token", async () => {
    const first = await signedIn();
    const [a, b] = await Promise.all([refresh(first.refresh_token), refresh(first.refresh_token)]);
    expect(a.refresh_token).toBe(b.refresh_token);
    await listKeysWith((await refresh(a.refresh_token)).access_token);
  });

  it("past the grace, the spent token ends the session: its newest refresh token and access token stop working", async () => {
    const first = await signedIn();
    const second = await refresh(first.refresh_token);
    clock.advance((GRACE_SECONDS + 1) * 1000);

    expect(await errorCodeOf(refresh(first.refresh_token))).toBe("auth.refresh_invalid");
    expect(await errorCodeOf(refresh(second.refresh_token))).toBe("auth.refresh_invalid");
    expect(await errorCodeOf(listKeysWith(second.access_token))).toBe("auth.invalid_credentials");
  });

  it("within the grace, a token spent two refreshes ago ends the session", async () => {
    const first = await signedIn();
    const second = await refresh(first.refresh_token);
    const third = await refresh(second.refresh_token);

    expect(await errorCodeOf(refresh(first.refresh_token))).toBe("auth.refresh_invalid");
    expect(await errorCodeOf(refresh(third.refresh_token))).toBe("auth.refresh_invalid");
  });

  it("with the grace off, a spent token ends the session at once", async () => {
    const first = await signedIn(strictUrl);
    const second = await refresh(first.refresh_token, strictUrl);

    expect(await errorCodeOf(refresh(first.refresh_token, strictUrl))).toBe("auth.refresh_invalid");
    expect(await errorCodeOf(refresh(second.refresh_token, strictUrl))).toBe("auth.refresh_invalid");
  });
});

describe("a signed-in SDK client", () => {
  function sdkSignIn(heard: Tokens[], now?: () => number) {
    return ComputeJobsClient.signIn({
      baseUrl,
      appId: tenant.app.app_id,
      email: tenant.user.email,
      password: tenant.password,
      onTokens: (tokens) => void heard.push(tokens),
      ...(now ? { now } : {}),
    });
  }

  it("on the gateway's time, refreshes ahead of each of two expiries once, with two calls at once each time", async () => {
    const heard: Tokens[] = [];
    const client = await sdkSignIn(heard, () => clock.now());
    for (const expiry of [1, 2]) {
      clock.advance((TTL_SECONDS + 1) * 1000);
      await Promise.all([client.keys.list(), client.jobs.list()]);
      expect(heard).toHaveLength(1 + expiry);
    }
  });

  it("on a clock of its own, refreshes when the gateway says the token expired, once for two calls, at each of two expiries", async () => {
    const heard: Tokens[] = [];
    const client = await sdkSignIn(heard);
    for (const expiry of [1, 2]) {
      clock.advance((TTL_SECONDS + 1) * 1000);
      await Promise.all([client.keys.list(), client.jobs.list()]);
      expect(heard).toHaveLength(1 + expiry);
    }
  });
});

// Each test starts cjs three to six times, a process start each; on two busy cores one can take
// seconds, so the bound against a hang is wider than the suite's.
describe("cjs with a stored session", { timeout: 90_000 }, () => {
  function storedTokens(configDir: string): Tokens {
    return (JSON.parse(readFileSync(join(configDir, "session.json"), "utf8")) as { tokens: Tokens }).tokens;
  }

  it("jobs ls works across two expiries and two hours after login, and each new pair is written to the session file", async () => {
    const configDir = await cli.loggedIn({ email: tenant.user.email, password: tenant.password });
    const seen = [storedTokens(configDir).refresh_token];
    for (const laterMs of [(TTL_SECONDS + 1) * 1000, (TTL_SECONDS + 1) * 1000, 2 * 3600 * 1000]) {
      clock.advance(laterMs);
      const listed = await cli.run(["jobs", "ls"], { configDir });
      expect(listed.code, listed.stderr).toBe(0);
      expect(seen).not.toContain(storedTokens(configDir).refresh_token);
      seen.push(storedTokens(configDir).refresh_token);
    }
  });

  it("cjs refreshes a token about to expire on its own clock before the call, run after run, and the session goes on", async () => {
    const lagging = new CliRunner({ baseUrl: laggingUrl, appId: tenant.app.app_id });
    try {
      const configDir = await lagging.loggedIn({ email: tenant.user.email, password: tenant.password });
      const seen = [storedTokens(configDir).refresh_token];
      for (const _run of [1, 2]) {
        const listed = await lagging.run(["jobs", "ls"], { configDir });
        expect(listed.code, listed.stderr).toBe(0);
        expect(seen).not.toContain(storedTokens(configDir).refresh_token);
        seen.push(storedTokens(configDir).refresh_token);
      }
      const both = await Promise.all([
        lagging.run(["jobs", "ls"], { configDir }),
        lagging.run(["keys", "ls"], { configDir }),
      ]);
      for (const run of both) expect(run.code, run.stderr).toBe(0);
    } finally {
      lagging.cleanUp();
    }
  });

  it("two cjs that find the token expired at the same moment both succeed, and the session goes on", async () => {
    const configDir = await cli.loggedIn({ email: tenant.user.email, password: tenant.password });
    clock.advance((TTL_SECONDS + 1) * 1000);
    const both = await Promise.all([cli.run(["jobs", "ls"], { configDir }), cli.run(["keys", "ls"], { configDir })]);
    for (const run of both) expect(run.code, run.stderr).toBe(0);

    clock.advance((TTL_SECONDS + 1) * 1000);
    const next = await cli.run(["jobs", "ls"], { configDir });
    expect(next.code, next.stderr).toBe(0);
  });

  it("a session ended elsewhere: cjs says it is signed out, exits 77 and forgets the session", async () => {
    const configDir = await cli.loggedIn({ email: tenant.user.email, password: tenant.password });
    await anonymous().call("logout", { refresh_token: storedTokens(configDir).refresh_token });

    const refused = await cli.run(["jobs", "ls"], { configDir });

    expect(refused.code).toBe(77);
    expect(refused.stderr).toContain("signed out: sign in again with `cjs login`");
    expect(existsSync(join(configDir, "session.json"))).toBe(false);
  });

  it("a refresh token that is spent: cjs says it is signed out and exits 77, not 75", async () => {
    const configDir = await cli.loggedIn({ email: tenant.user.email, password: tenant.password });
    await refresh(storedTokens(configDir).refresh_token);
    clock.advance((GRACE_SECONDS + TTL_SECONDS + 1) * 1000);

    const refused = await cli.run(["jobs", "ls"], { configDir });

    expect(refused.code).toBe(77);
    expect(refused.stderr).toContain("signed out: sign in again with `cjs login`");
    expect(refused.stderr).toContain("auth.refresh_invalid");
  });
});
