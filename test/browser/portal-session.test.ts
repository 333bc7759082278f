import type { Page, Response } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openFromNav, signIn, startPortalStack, type PortalStack } from "./portal-stack.js";

/**
 * The portal stays signed in as long as its session does, with 60 s access tokens: idle on
 * the jobs page across two expiries, through reloads, with three requests that find the
 * token expired at the same moment, and in a duplicated tab of the same session. Nobody
 * waits a minute: the gateway's clock and the page's (Playwright's clock) are moved
 * forward together, by the same amount, and the test waits on the page's requests.
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
const answers: Array<{ path: string; status: number; code: Promise<string | undefined> }> = [];

function watch(page: Page): void {
  page.on("response", (response: Response) => {
    const path = new URL(response.url()).pathname;
    if (!path.startsWith("/api/")) return;
    const status = response.status();
    const code =
      status >= 400 ? response.json().then((body: { code?: string }) => body.code) : Promise.resolve(undefined);
    answers.push({ path, status, code });
  });
}

/** Installs the page's clock on the gateway's time; it then runs as a clock does, until moved. */
async function installClock(page: Page): Promise<void> {
  await page.clock.install({ time: gatewayClock.now() });
}

/** Moves the gateway and the given pages past one access token's lifetime. */
async function expireTokens(pages: Page[]): Promise<void> {
  const ms = (TTL_SECONDS + 1) * 1000;
  gatewayClock.aheadMs += ms;
  for (const page of pages) await page.clock.fastForward(ms);
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

beforeAll(async () => {
  stack = await startPortalStack({
    gateway: { env: { CJS_ACCESS_TOKEN_TTL_SECONDS: String(TTL_SECONDS) }, clock: gatewayClock },
  });
  await installClock(stack.page);
  watch(stack.page);
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
      await expireTokens([page]);
      expect((await refreshed).status()).toBe(200);
      // The next poll of the list goes through with the new token.
      await page.waitForResponse(
        (response) => new URL(response.url()).pathname === "/api/compute/jobs/list" && response.status() === 200,
      );
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
    await expireTokens([page]);
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
    await installClock(twin);
    watch(twin);
    await twin.goto("/jobs");
    await twin.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();

    for (const _expiry of [1, 2]) {
      // Each tab's list after the expiry, awaited from before the clocks move: a tab's answer can
      // come while the other tab's clock is still being moved, and a wait begun after it would miss
      // it (the next list comes only when the clock moves again).
      const listed = [page, twin].map((tab) =>
        tab.waitForResponse(
          (response) => new URL(response.url()).pathname === "/api/compute/jobs/list" && response.status() === 200,
        ),
      );
      await expireTokens([page, twin]);
      await Promise.all(listed);
    }
    for (const tab of [page, twin]) {
      await tab.reload();
      await tab.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
    }
    expect(await refused()).toEqual([]);
    await twin.close();
  });
});
