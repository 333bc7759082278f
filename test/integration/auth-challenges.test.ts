import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { logStreamPath, RPC_ROUTES } from "../../shared/contract/index.js";
import { ManualClock } from "../harness/manual-clock.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startGateway, type RunningGateway, type Tenant } from "../harness/system.js";

/**
 * The 401s of the real gateway, each with its `WWW-Authenticate` challenge, on a hand-moved
 * clock: a token expires by advancing it past the token's lifetime, with no waiting.
 */
const TTL_SECONDS = 60;
const EXPIRED = 'Bearer error="invalid_token", error_description="expired"';
const INVALID_TOKEN = 'Bearer error="invalid_token"';
const LIST_KEYS = RPC_ROUTES.listApiKeys;

let nats: NatsHarness;
let clock: ManualClock;
let gateway: RunningGateway;
let tenant: Tenant;

beforeAll(async () => {
  nats = await startNats();
  clock = new ManualClock();
  gateway = await startGateway(nats.url, { CJS_ACCESS_TOKEN_TTL_SECONDS: String(TTL_SECONDS) }, { clock });
  tenant = await createTenant(gateway.nc);
});

afterAll(async () => {
  await gateway?.stop();
  await nats?.stop();
});

interface Answer {
  status: number;
  challenge: string | null;
  body: { status?: string; code?: string };
}

async function send(path: string, headers: Record<string, string>, body: unknown = {}): Promise<Answer> {
  const response = await fetch(`${gateway.baseUrl}${path}`, {
    method: "POST",
    headers: { "x-app-id": tenant.app.app_id, "content-type": "application/json", ...headers },
    body: JSON.stringify(body),
  });
  return {
    status: response.status,
    challenge: response.headers.get("www-authenticate"),
    body: (await response.json()) as Answer["body"],
  };
}

/** List API keys (a `user` operation) with these headers. */
function listKeys(headers: Record<string, string>): Promise<Answer> {
  return send(LIST_KEYS.path, headers);
}

async function freshTokens() {
  return (await signedInClient(gateway.baseUrl, tenant)).tokens;
}

/** `token` with one character of its signature changed. */
function forged(token: string): string {
  const [header, payload, signature = ""] = token.split(".");
  return `${header}.${payload}.${signature[0] === "A" ? "B" : "A"}${signature.slice(1)}`;
}

describe("an expired access token", () => {
  it("answers 401 auth.token_expired with the expired challenge once the clock passes exp, and a refreshed token works", async () => {
    const tokens = await freshTokens();
    expect((await listKeys({ authorization: `Bearer ${tokens.access_token}` })).status).toBe(200);

    clock.advance((TTL_SECONDS + 1) * 1000);
    const expired = await listKeys({ authorization: `Bearer ${tokens.access_token}` });
    expect(expired).toMatchObject({
      status: 401,
      challenge: EXPIRED,
      body: { status: "ERROR", code: "auth.token_expired" },
    });

    const refreshed = await send(RPC_ROUTES.refresh.path, {}, { refresh_token: tokens.refresh_token });
    expect(refreshed.status).toBe(200);
    const { access_token } = (refreshed.body as unknown as { payload: { access_token: string } }).payload;
    expect((await listKeys({ authorization: `Bearer ${access_token}` })).status).toBe(200);
  });

  it("is still expired on the log stream route, which answers before any stream", async () => {
    const tokens = await freshTokens();
    clock.advance((TTL_SECONDS + 1) * 1000);
    const response = await fetch(`${gateway.baseUrl}${logStreamPath("job_0VbeygdjkkWnwRC9cwe1")}`, {
      headers: { "x-app-id": tenant.app.app_id, authorization: `Bearer ${tokens.access_token}` },
    });
    expect(response.status).toBe(401);
    expect(response.headers.get("www-authenticate")).toBe(EXPIRED);
    expect(await response.json()).toMatchObject({ code: "auth.token_expired" });
  });
});

describe("a token that is not genuine", () => {
  it("answers auth.invalid_credentials with invalid_token for a forged signature, expired or not", async () => {
    const tokens = await freshTokens();
    const fresh = await listKeys({ authorization: `Bearer ${forged(tokens.access_token)}` });
    expect(fresh).toMatchObject({ status: 401, challenge: INVALID_TOKEN, body: { code: "auth.invalid_credentials" } });

    clock.advance((TTL_SECONDS + 1) * 1000);
    const pastExp = await listKeys({ authorization: `Bearer ${forged(tokens.access_token)}` });
    expect(pastExp).toMatchObject({
      status: 401,
      challenge: INVALID_TOKEN,
      body: { code: "auth.invalid_credentials" },
    });
  });

  it("answers auth.invalid_credentials with invalid_token for a garbled token and for one whose session was ended", async () => {
    expect(await listKeys({ authorization: "Bearer not.a.jwt" })).toMatchObject({
      status: 401,
      challenge: INVALID_TOKEN,
      body: { code: "auth.invalid_credentials" },
    });

    const tokens = await freshTokens();
    expect((await send(RPC_ROUTES.logout.path, {}, { refresh_token: tokens.refresh_token })).status).toBe(200);
    expect(await listKeys({ authorization: `Bearer ${tokens.access_token}` })).toMatchObject({
      status: 401,
      challenge: INVALID_TOKEN,
      body: { code: "auth.invalid_credentials" },
    });
  });

  it("answers a bearer header it cannot read, or one sent beside a key, with invalid_request", async () => {
    const malformed: Array<Record<string, string>> = [
      { authorization: "Bearer two words" },
      { authorization: "Bearer a.b.c", "x-api-key": "cjs_x" },
    ];
    for (const headers of malformed) {
      expect(await listKeys(headers)).toMatchObject({
        status: 401,
        challenge: 'Bearer error="invalid_request"',
        body: { code: "auth.invalid_credentials" },
      });
    }
  });
});

describe("the Bearer scheme", () => {
  it.each(["bearer", "BEARER", "bEaReR"])("is accepted written %s", async (scheme) => {
    const tokens = await freshTokens();
    expect((await listKeys({ authorization: `${scheme} ${tokens.access_token}` })).status).toBe(200);
  });

  it("is accepted with several spaces or a tab before the token", async () => {
    const tokens = await freshTokens();
    expect((await listKeys({ authorization: `Bearer   ${tokens.access_token}` })).status).toBe(200);
    expect((await listKeys({ authorization: `Bearer\t${tokens.access_token}` })).status).toBe(200);
  });
});

describe("the other 401s", () => {
  it("challenge with a bare Bearer when no credential was sent", async () => {
    expect(await listKeys({})).toMatchObject({
      status: 401,
      challenge: "Bearer",
      body: { code: "auth.missing_credentials" },
    });
  });

  it("challenge with a bare Bearer when a user's API key or another scheme fails", async () => {
    expect(await listKeys({ "x-api-key": "cjs_not_a_key" })).toMatchObject({
      status: 401,
      challenge: "Bearer",
      body: { code: "auth.invalid_credentials" },
    });
    expect(await listKeys({ authorization: "Basic dXNlcjpwdw==" })).toMatchObject({
      status: 401,
      challenge: "Bearer",
      body: { code: "auth.invalid_credentials" },
    });
  });

  it("name the key header on an operation that takes only a node's key", async () => {
    const heartbeat = await send(RPC_ROUTES.heartbeat.path, { "x-api-key": "cjs_not_a_key" });
    expect(heartbeat).toMatchObject({
      status: 401,
      challenge: 'ApiKey header="X-API-Key"',
      body: { code: "auth.invalid_credentials" },
    });
    const bare = await send(RPC_ROUTES.heartbeat.path, {});
    expect(bare).toMatchObject({
      status: 401,
      challenge: 'ApiKey header="X-API-Key"',
      body: { code: "auth.missing_credentials" },
    });
  });

  it("carry the challenge on a failed sign-in and an unknown application", async () => {
    const login = await send(RPC_ROUTES.login.path, {}, { email: tenant.user.email, password: "not the password" });
    expect(login).toMatchObject({ status: 401, challenge: "Bearer", body: { code: "auth.login_failed" } });
    const unknownApp = await send(LIST_KEYS.path, { "x-app-id": "nosuchapp" });
    expect(unknownApp).toMatchObject({ status: 401, challenge: "Bearer", body: { code: "app.unknown" } });
  });
});
