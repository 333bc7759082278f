import { access } from "node:fs/promises";
import type { Browser, BrowserContext, Page } from "playwright-core";
import type { ComputeClient } from "../harness/client.js";
import { launchChromium } from "../harness/browser.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import type { Clock } from "../../shared/runtime/index.js";
import {
  createTenant,
  signedInClient,
  startGateway,
  startSystem,
  type RunningSystem,
  type Tenant,
} from "../harness/system.js";

/** The build the gateway serves (`make portal`); the gateway's default CJS_PORTAL_DIR. */
const PORTAL_INDEX = "clients/portal/dist/index.html";

/** The two sizes every page is tried at (and shot at, by screenshots.ts). */
export const SIZES = [
  { name: "laptop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
] as const;
export type Size = (typeof SIZES)[number];

/** A real stack (one replica of each service), a tenant, and one headless Chromium. */
export interface PortalStack {
  nats: NatsHarness;
  system: RunningSystem;
  baseUrl: string;
  tenant: Tenant;
  /** The tenant's user, through the API (what a test sets up or checks beside the browser). */
  user: ComputeClient;
  browser: Browser;
  /** A browsing context allowed to use the clipboard (the copy buttons). */
  context: BrowserContext;
  page: Page;
  /** Errors a page of the stack threw, and what the browser refused under the portal's Content-Security-Policy: none is expected. */
  problems: string[];
  /** A new signed-out page of its own context at `size` (in `timezoneId`, else the machine's), watched for CSP refusals like the first. */
  newPage(size: Size, options?: { timezoneId?: string }): Promise<Page>;
  stop(): Promise<void>;
}

/**
 * `env`: every service's settings; `schedulerClock`: a clock the test moves for the
 * scheduler; `gateway`: the gateway's own settings and clock (token lifetimes).
 */
export async function startPortalStack(
  options: {
    env?: Record<string, string>;
    schedulerClock?: Clock;
    gateway?: { env?: Record<string, string>; clock?: Clock };
  } = {},
): Promise<PortalStack> {
  await access(PORTAL_INDEX).catch(() => {
    throw new Error(`${PORTAL_INDEX} is missing: run \`make portal\` (make test does) to build the portal.`);
  });
  const nats = await startNats();
  const system = await startSystem(
    nats.url,
    { gateways: 0, schedulers: 1, registries: 1 },
    options.env ?? {},
    options.schedulerClock ? { schedulerClock: options.schedulerClock } : {},
  );
  system.gateways.push(
    await startGateway(
      nats.url,
      { ...options.env, ...options.gateway?.env },
      options.gateway?.clock ? { clock: options.gateway.clock } : {},
    ),
  );
  const baseUrl = system.gateways[0]!.baseUrl;
  const tenant = await createTenant(system.gateways[0]!.nc);
  const { client: user } = await signedInClient(baseUrl, tenant);
  const browser = await launchChromium();
  const problems: string[] = [];
  const watch = (page: Page) => {
    page.on("console", (message) => {
      if (message.type() === "error" && message.text().includes("Content Security Policy"))
        problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(`${page.url()}: ${error.message}`));
    // A failing wait should fail well inside the test's own timeout, with Playwright's call log.
    page.setDefaultTimeout(15_000);
    return page;
  };
  const context = await browser.newContext({ baseURL: baseUrl, acceptDownloads: true });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseUrl });
  const page = watch(await context.newPage());
  return {
    nats,
    system,
    baseUrl,
    tenant,
    user,
    browser,
    context,
    page,
    problems,
    async newPage(size, options = {}) {
      const own = await browser.newContext({
        baseURL: baseUrl,
        acceptDownloads: true,
        viewport: { width: size.width, height: size.height },
        ...options,
      });
      return watch(await own.newPage());
    },
    async stop() {
      await browser.close();
      await system.stop();
      await nats.stop();
    },
  };
}

/** Signs in through the portal's form with the tenant's password; resolves once the jobs list shows. */
export async function signIn(page: Page, tenant: Tenant): Promise<void> {
  await page.goto("/");
  await page.getByLabel("App ID").fill(tenant.app.app_id);
  await page.getByLabel("E-mail").fill(tenant.user.email);
  await page.getByLabel("Password").fill(tenant.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Jobs" }).waitFor();
}

/** Goes to a page through the main navigation, as a person would. */
export async function openFromNav(page: Page, label: string, heading: string): Promise<void> {
  await page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: label, exact: true }).click();
  await page.getByRole("heading", { name: heading, level: 1 }).waitFor();
}

/** Whether the page is no wider than its window: nothing to scroll sideways (tables scroll inside their own box). */
export async function fitsWidth(page: Page): Promise<boolean> {
  return page.evaluate<boolean>("document.documentElement.scrollWidth <= window.innerWidth");
}
