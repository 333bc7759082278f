import type { Page, Request, Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { openFromNav, signIn, startPortalStack, type PortalStack } from "./portal-stack.js";

/**
 * The portal stays signed in as long as its session does, with 60 s access tokens: idle on
 * the jobs page across two expiries, through reloads, with three requests that find the
 * token expired at the same moment, and in a duplicated tab of the same session. Nobody
 * waits a minute: the gateway's clock and the browser's (Playwright's clock, one for all
 * tabs of the context) are moved forward together, by the same amount, and the test waits
 * on the pages' requests.
 */
const TTL_SECONDS = 60;
const REFRESH_PATH = "/api/auth/refresh";
const USAGE_PATHS = [
  "/api/compute/billing/ledger/list",
  "/api/compute/billing/subscription",
  "/api/compute/api-keys/list",
];

/** The gateway's time: this machine's, plus what the test moved it forward by. */
const gatewayClock = {
  aheadMs: 0,
  now(): number {
    return Date.now() + this.aheadMs;
  },
};

let stack: PortalStack;
/** Every API answer the pages got, in order; a refusal's error code is read from its body. */
const answers: Array<{ tab: string; path: string; status: number; code: Promise<string | undefined> }> = [];

function watch(page: Page, tab: string): void {
  const isRefresh = (request: Request) => new URL(request.url()).pathname === REFRESH_PATH;
  page.on("request", (request) => {
    if (isRefresh(request)) refreshesInFlight += 1;
  });
  const ended = (request: Request) => {
    if (isRefresh(request)) refreshesInFlight -= 1;
  };
  page.on("requestfinished", ended);
  page.on("requestfailed", ended);
  page.on("response", (response: Response) => {
    const path = new URL(response.url()).pathname;
    if (!path.startsWith("/api/")) return;
    const status = response.status();
    const code =
      status >= 400 ? response.json().then((body: { code?: string }) => body.code) : Promise.resolve(undefined);
    answers.push({ tab, path, status, code });
  });
}

/** Installs the browser's clock on the gateway's time; it then runs as a clock does, until moved. */
async function installClock(page: Page): Promise<void> {
  await page.clock.install({ time: gatewayClock.now() });
}

/** Refresh requests sent and not yet answered, in every tab. */
let refreshesInFlight = 0;

/**
 * Moves the gateway and the browser past one access token's lifetime. Each jump waits for
 * the refreshes in flight: one sent before it would reach the gateway a minute late in the
 * gateway's time, past the grace for a refresh token spent by another tab a moment before
 * (docs/api.md), which no client meets in real time.
 */
async function expireTokens(page: Page): Promise<void> {
  await expect.poll(() => refreshesInFlight, { timeout: 15_000 }).toBe(0);
  const ms = (TTL_SECONDS + 1) * 1000;
  gatewayClock.aheadMs += ms;
  // The clock is the context's: one jump moves every tab of it.
  await page.clock.fastForward(ms);
}

/** When an access token was issued (its `iat`), in epoch ms. */
function issuedAtMs(authorization: string | null): number {
  const payload = authorization?.split(".")[1];
  if (payload === undefined) return 0;
  return (JSON.parse(Buffer.from(payload, "base64url").toString("utf8")) as { iat: number }).iat * 1000;
}

/**
 * The next list of `tab` answered 200 to a request sent with a token issued after the next
 * expiry: the tab has gone on with a new pair. Awaited from before the clock moves, so an
 * answer that comes during the jump is not missed; the threshold (half a token's lifetime
 * after now, on the gateway's clock) tells a token of after the jump from one of before.
 */
function listedAfterExpiry(tab: Page): Promise<Response> {
  const threshold = gatewayClock.now() + (TTL_SECONDS * 1000) / 2;
  return tab.waitForResponse(async (response) => {
    if (new URL(response.url()).pathname !== "/api/compute/jobs/list" || response.status() !== 200) return false;
    return issuedAtMs(await response.request().headerValue("authorization")) >= threshold;
  });
}

/** The next refresh answer of `page`, which must be a success. */
function nextRefresh(page: Page): Promise<Response> {
  return page.waitForResponse((response) => new URL(response.url()).pathname === REFRESH_PATH);
}

/**
 * The refusals other than `auth.token_expired`: a tab whose clock had not yet been moved
 * with the gateway's may send a token the gateway already finds expired, which the SDK
 * refreshes and sends again, as it does when a client's clock is behind.
 */
async function refused(): Promise<Array<{ path: string; status: number; code: string | undefined }>> {
  const read = await Promise.all(answers.map(async ({ path, status, code }) => ({ path, status, code: await code })));
  return read.filter((answer) => answer.status >= 400 && answer.code !== "auth.token_expired");
}

/** What each tab was answered since `from`, and where it is: a failed wait says why it waited. */
async function since(from: number, tabs: Page[]): Promise<string> {
  const lines = await Promise.all(
    answers.slice(from).map(async ({ tab, path, status, code }) => `${tab} ${status} ${path} ${(await code) ?? ""}`),
  );
  const where = tabs.map((tab) => tab.url());
  return [...lines, `tabs at ${where.join(", ")}`].join("\n");
}

beforeAll(async () => {
  stack = await startPortalStack({
    gateway: { env: { CJS_ACCESS_TOKEN_TTL_SECONDS: String(TTL_SECONDS) }, clock: gatewayClock },
  });
  await installClock(stack.page);
  watch(stack.page, "first");
  await signIn(stack.page, stack.tenant);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

describe("a signed-in portal", () => {
  it("stays signed in while idle on the jobs page across two expiries, and through a reload after each", async () => {
    const { page } = stack;
    for (const _expiry of [1, 2]) {
      const refreshed = nextRefresh(page);
      const listed = listedAfterExpiry(page);
      await expireTokens(page);
      expect((await refreshed).status()).toBe(200);
      // The next poll of the list goes through with the new token.
      await listed;
      await page.reload();
      await page.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
    }
    expect(await refused()).toEqual([]);
  });

  it("three requests that find the token expired at the same moment share one refresh", async () => {
    const { page } = stack;
    // The keys page loads once and does not poll: nothing refreshes before the three requests.
    const opened = answers.length;
    await openFromNav(page, "API keys", "API keys");
    // Its list answered before the clock moves, so it is not counted with the three.
    await expect.poll(() => answers.slice(opened).some((answer) => answer.path === USAGE_PATHS[2])).toBe(true);
    await expireTokens(page);
    const before = answers.length;
    // The usage page loads three things at once: the ledger, the subscription and the keys.
    await openFromNav(page, "Usage", "Usage");
    await page.getByTestId("credit-balance").waitFor();
    await expect.poll(() => answers.slice(before).filter((answer) => USAGE_PATHS.includes(answer.path)).length).toBe(3);
    expect(answers.slice(before).filter((answer) => answer.path === REFRESH_PATH)).toHaveLength(1);
    expect(await refused()).toEqual([]);
  });

  it("a duplicated tab of the same session: both stay signed in across two expiries and reloads", async () => {
    const { page, context } = stack;
    await openFromNav(page, "Jobs", "Jobs");
    // A duplicated tab starts with a copy of its tab's session storage, the refresh token included
    // (copied once: the tab's own storage goes on from there, through its reloads).
    const copied = await page.evaluate<Record<string, string>>("({ ...sessionStorage })");
    const twin = await context.newPage();
    twin.setDefaultTimeout(15_000);
    await twin.addInitScript((entries: Record<string, string>) => {
      if (sessionStorage.length > 0) return;
      for (const [key, value] of Object.entries(entries)) sessionStorage.setItem(key, value);
    }, copied);
    watch(twin, "twin");
    await twin.goto("/jobs");
    await twin.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();

    for (const expiry of [1, 2]) {
      // Each tab's list with a token of after the expiry: awaited from before the clock moves, as
      // a tab's answer can come during the jump.
      const listed = [page, twin].map(listedAfterExpiry);
      const from = answers.length;
      await expireTokens(page);
      await Promise.all(listed).catch(async (error: unknown) => {
        throw new Error(`expiry ${expiry}: ${String(error)}\n${await since(from, [page, twin])}`);
      });
    }
    for (const tab of [page, twin]) {
      await tab.reload();
      await tab.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
    }
    expect(await refused()).toEqual([]);
    await twin.close();
  });

  it("a reload while the service is out of reach shows the sign-in page and keeps the session for the next reload", async () => {
    const { page } = stack;
    await openFromNav(page, "Jobs", "Jobs");
    // The service out of the tab's reach: every API request fails as a refused connection would.
    await page.route("**/api/**", (route) => route.abort("connectionrefused"));
    await page.reload();
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("cjs.refresh_token"))).not.toBeNull();

    await page.unroute("**/api/**");
    await page.reload();
    await page.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
    expect(await refused()).toEqual([]);
  });

  it("a session ended elsewhere: the tab goes to the sign-in page saying so, and never sends its refused token again", async () => {
    const { page, baseUrl, tenant } = stack;
    await openFromNav(page, "Jobs", "Jobs");
    await expect.poll(() => refreshesInFlight).toBe(0);
    const refreshToken = await page.evaluate(() => sessionStorage.getItem("cjs.refresh_token"));
    // Signed out elsewhere: the session's current refresh token ends it on the service.
    await new ComputeClient({ baseUrl, appId: tenant.app.app_id }).call("logout", {
      refresh_token: refreshToken ?? "",
    });
    const from = answers.length;

    const refreshed = nextRefresh(page);
    await expireTokens(page);
    expect((await refreshed).status()).toBe(401);
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();
    await page.getByRole("status").filter({ hasText: "Your session has ended" }).waitFor();
    // A reload starts from what the tab kept: nothing, so it asks nothing and shows the sign-in page.
    await page.reload();
    await page.getByRole("heading", { name: "Sign in", level: 1 }).waitFor();

    const refreshes = answers.slice(from).filter((answer) => answer.path === REFRESH_PATH);
    expect(await Promise.all(refreshes.map(async ({ status, code }) => [status, await code]))).toEqual([
      [401, "auth.refresh_invalid"],
    ]);
  });
});
