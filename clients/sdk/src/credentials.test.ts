import { describe, expect, it } from "vitest";
import { ComputeJobsClient } from "./client.js";
import type { Tokens } from "./credentials.js";
import { ApiError } from "./errors.js";

/**
 * A session's refresh in the client, against a scripted gateway: one refresh at a time,
 * the refresh request carrying no credential, a pair kept by another process taken
 * instead of a spent refresh token, and a client clock set wrong. (The same against the
 * real gateway with a moved clock: test/integration/session-refresh.test.ts.)
 */
const TTL_SECONDS = 60;

/** An unsigned token with the claims the client reads; the scripted gateway tells tokens apart by their `jti`. */
function accessToken(iatSeconds: number, jti: string): string {
  const part = (value: object) => Buffer.from(JSON.stringify(value)).toString("base64url");
  return `${part({ alg: "none" })}.${part({ iat: iatSeconds, exp: iatSeconds + TTL_SECONDS, jti })}.x`;
}

interface Seen {
  path: string;
  authorization: string | undefined;
  refreshToken?: string;
}

/**
 * A gateway that accepts only the access token of its newest pair (and answers
 * `auth.token_expired` to older ones, and to it after `expire`) and rotates the refresh token on each refresh;
 * `hold` delays the answer to a request until the test lets it go.
 */
function scriptedGateway(nowSeconds: () => number) {
  let generation = 0;
  let expired = false;
  let current: Tokens = { access_token: accessToken(nowSeconds(), "t0"), refresh_token: "r0" };
  const seen: Seen[] = [];
  const held: Array<{ path: string; release: Promise<void> }> = [];
  const envelope = (status: number, body: object) =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } });
  const send = (async (url: string, init: RequestInit) => {
    const path = new URL(url).pathname;
    const headers = init.headers as Record<string, string>;
    const body = JSON.parse(String(init.body ?? "{}")) as { refresh_token?: string };
    seen.push({
      path,
      authorization: headers.authorization,
      ...(body.refresh_token ? { refreshToken: body.refresh_token } : {}),
    });
    const hold = held.find((each) => each.path === path);
    if (hold) {
      held.splice(held.indexOf(hold), 1);
      await hold.release;
    }
    if (path === "/api/auth/refresh") {
      if (body.refresh_token !== current.refresh_token)
        return envelope(401, { status: "ERROR", code: "auth.refresh_invalid", message: "spent" });
      generation += 1;
      expired = false;
      current = { access_token: accessToken(nowSeconds(), `t${generation}`), refresh_token: `r${generation}` };
      return envelope(200, { status: "SUCCESS", message: "ok", payload: { ...current, token_type: "Bearer" } });
    }
    if (expired || headers.authorization !== `Bearer ${current.access_token}`)
      return envelope(401, { status: "ERROR", code: "auth.token_expired", message: "expired" });
    return envelope(200, { status: "SUCCESS", message: "ok", payload: { items: [] } });
  }) as unknown as typeof fetch;
  return {
    send,
    seen,
    get current() {
      return current;
    },
    refreshes: () => seen.filter((each) => each.path === "/api/auth/refresh"),
    /** From now until the next refresh, the current access token is refused as expired (the gateway's clock moved). */
    expire() {
      expired = true;
    },
    /** The next request to `path` waits for `release`. */
    hold(path: string, release: Promise<void>) {
      held.push({ path, release });
    },
  };
}

function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

function clientOf(
  gateway: ReturnType<typeof scriptedGateway>,
  now: () => number,
  extra: { onTokens?: (tokens: Tokens) => void; loadTokens?: () => Tokens | undefined } = {},
) {
  return new ComputeJobsClient({
    baseUrl: "http://gateway.test",
    appId: "app",
    credentials: { tokens: gateway.current, ...extra },
    fetch: gateway.send,
    now,
    retry: { baseDelayMs: 1, maxRetries: 1 },
  });
}

describe("a session's refresh", () => {
  it("a call that finds its access token about to expire refreshes once, with no credential on the refresh, and goes on", async () => {
    let nowMs = Date.now();
    const gateway = scriptedGateway(() => Math.floor(nowMs / 1000));
    const heard: Tokens[] = [];
    const client = clientOf(gateway, () => nowMs, { onTokens: (tokens) => heard.push(tokens) });
    nowMs += (TTL_SECONDS - 10) * 1000;

    await client.keys.list();

    expect(gateway.refreshes()).toEqual([{ path: "/api/auth/refresh", authorization: undefined, refreshToken: "r0" }]);
    expect(heard.map((tokens) => tokens.refresh_token)).toEqual(["r1"]);
    expect(gateway.seen.at(-1)!.authorization).toBe(`Bearer ${gateway.current.access_token}`);
  });

  it("two calls that find the token expired at the same moment share one refresh, and so do two more after the next expiry", async () => {
    let nowMs = Date.now();
    const gateway = scriptedGateway(() => Math.floor(nowMs / 1000));
    const client = clientOf(gateway, () => nowMs);
    for (const expiry of [1, 2]) {
      nowMs += (TTL_SECONDS + 1) * 1000;
      await Promise.all([client.keys.list(), client.jobs.list()]);
      expect(gateway.refreshes()).toHaveLength(expiry);
    }
    expect(gateway.refreshes().map((each) => each.refreshToken)).toEqual(["r0", "r1"]);
  });

  it("calls refused auth.token_expired share the refresh in flight, and one refused after it retries with the new token alone", async () => {
    const nowMs = Date.now();
    // The client's clock sees no expiry: only the gateway's answers say so.
    const gateway = scriptedGateway(() => Math.floor(nowMs / 1000));
    const client = clientOf(gateway, () => nowMs);
    const stale = gateway.current.access_token;
    gateway.expire();
    const late = deferred();
    gateway.hold("/api/compute/jobs/list", late.promise);

    const first = client.keys.list();
    const second = client.keys.list();
    const third = client.jobs.list();
    await Promise.all([first, second]);
    late.resolve();
    await third;

    expect(gateway.refreshes()).toHaveLength(1);
    const sent = gateway.seen.filter((each) => each.path !== "/api/auth/refresh").map((each) => each.authorization);
    expect(sent.filter((each) => each === `Bearer ${stale}`)).toHaveLength(3);
    expect(sent.filter((each) => each === `Bearer ${gateway.current.access_token}`)).toHaveLength(3);
  });

  it("a newer pair kept by another process is taken instead of spending the old refresh token", async () => {
    let nowMs = Date.now();
    const gateway = scriptedGateway(() => Math.floor(nowMs / 1000));
    const ours = gateway.current;
    const other = clientOf(gateway, () => nowMs);
    nowMs += (TTL_SECONDS + 1) * 1000;
    await other.keys.list();
    const keptByOther = gateway.current;

    const client = new ComputeJobsClient({
      baseUrl: "http://gateway.test",
      appId: "app",
      credentials: { tokens: ours, loadTokens: () => keptByOther },
      fetch: gateway.send,
      now: () => nowMs,
    });
    await client.keys.list();

    expect(gateway.refreshes().map((each) => each.refreshToken)).toEqual(["r0"]);
    expect(gateway.seen.at(-1)!.authorization).toBe(`Bearer ${keptByOther.access_token}`);
  });

  it("a kept pair the gateway finds expired as well is refreshed at its refusal, and the call goes through", async () => {
    let nowMs = Date.now();
    const gateway = scriptedGateway(() => Math.floor(nowMs / 1000));
    const ours = gateway.current;
    const other = clientOf(gateway, () => nowMs);
    nowMs += (TTL_SECONDS + 1) * 1000;
    await other.keys.list();
    const keptByOther = gateway.current;
    gateway.expire();

    // This client's clock is behind: it sees neither token as expiring.
    const client = new ComputeJobsClient({
      baseUrl: "http://gateway.test",
      appId: "app",
      credentials: { tokens: ours, loadTokens: () => keptByOther },
      fetch: gateway.send,
      now: () => nowMs - 3_600_000,
    });
    await client.keys.list();

    expect(gateway.refreshes().map((each) => each.refreshToken)).toEqual(["r0", "r1"]);
    expect(gateway.seen.at(-1)!.authorization).toBe(`Bearer ${gateway.current.access_token}`);
  });

  it("a client clock an hour fast refreshes once, then learns the gateway's time and stops", async () => {
    const gatewayMs = Date.now();
    const gateway = scriptedGateway(() => Math.floor(gatewayMs / 1000));
    const client = clientOf(gateway, () => gatewayMs + 3_600_000);
    for (let call = 0; call < 3; call += 1) await client.keys.list();
    expect(gateway.refreshes()).toHaveLength(1);
  });

  it("a refresh token that is spent fails the call with auth.refresh_invalid, and no pair is kept", async () => {
    let nowMs = Date.now();
    const gateway = scriptedGateway(() => Math.floor(nowMs / 1000));
    const heard: Tokens[] = [];
    const client = new ComputeJobsClient({
      baseUrl: "http://gateway.test",
      appId: "app",
      credentials: {
        tokens: { ...gateway.current, refresh_token: "spent" },
        onTokens: (tokens) => void heard.push(tokens),
      },
      fetch: gateway.send,
      now: () => nowMs,
    });
    nowMs += (TTL_SECONDS + 1) * 1000;

    const refused = await client.keys.list().catch((error: unknown) => error);

    expect(refused).toBeInstanceOf(ApiError);
    expect(refused).toMatchObject({ code: "auth.refresh_invalid", status: 401 });
    expect(heard).toEqual([]);
    expect(gateway.seen.map((each) => each.path)).toEqual(["/api/auth/refresh"]);
  });

  it("a session the service ended is heard once, and its refused refresh token is never sent again", async () => {
    let nowMs = Date.now();
    const gateway = scriptedGateway(() => Math.floor(nowMs / 1000));
    const ended: ApiError[] = [];
    const client = new ComputeJobsClient({
      baseUrl: "http://gateway.test",
      appId: "app",
      credentials: {
        tokens: { ...gateway.current, refresh_token: "revoked" },
        onEnded: (error) => void ended.push(error),
      },
      fetch: gateway.send,
      now: () => nowMs,
    });
    nowMs += (TTL_SECONDS + 1) * 1000;

    const refusals = [];
    for (let call = 0; call < 3; call += 1) refusals.push(await client.keys.list().catch((error: unknown) => error));

    for (const refused of refusals) expect(refused).toMatchObject({ code: "auth.refresh_invalid", status: 401 });
    expect(ended.map((error) => error.code)).toEqual(["auth.refresh_invalid"]);
    expect(gateway.refreshes()).toHaveLength(1);
  });

  it("after a refusal, a newer pair kept by another process is taken and the session goes on", async () => {
    let nowMs = Date.now();
    const gateway = scriptedGateway(() => Math.floor(nowMs / 1000));
    const kept: { pair?: Tokens } = {};
    const client = new ComputeJobsClient({
      baseUrl: "http://gateway.test",
      appId: "app",
      credentials: { tokens: { ...gateway.current, refresh_token: "revoked" }, loadTokens: () => kept.pair },
      fetch: gateway.send,
      now: () => nowMs,
    });
    nowMs += (TTL_SECONDS + 1) * 1000;
    await expect(client.keys.list()).rejects.toMatchObject({ code: "auth.refresh_invalid" });

    // Another process signs in again and keeps its pair where this client reads it.
    kept.pair = gateway.current;
    await client.keys.list();

    expect(gateway.refreshes().map((each) => each.refreshToken)).toEqual(["revoked", "r0"]);
    expect(gateway.seen.at(-1)!.authorization).toBe(`Bearer ${gateway.current.access_token}`);
  });
});
