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
  stop(): Promise<void>;
}

/** `gateway`: the gateway's own settings and clock (token lifetimes, a clock the test moves). */
export async function startPortalStack(
  options: { gateway?: { env?: Record<string, string>; clock?: Clock } } = {},
): Promise<PortalStack> {
  await access(PORTAL_INDEX).catch(() => {
    throw new Error(`${PORTAL_INDEX} is missing: run \`make portal\` (make test does) to build the portal.`);
  });
  const nats = await startNats();
  const system = await startSystem(nats.url, { gateways: 0, schedulers: 1, registries: 1 });
  system.gateways.push(
    await startGateway(nats.url, options.gateway?.env, options.gateway?.clock ? { clock: options.gateway.clock } : {}),
  );
  const baseUrl = system.gateways[0]!.baseUrl;
  const tenant = await createTenant(system.gateways[0]!.nc);
  const { client: user } = await signedInClient(baseUrl, tenant);
  const browser = await launchChromium();
  const context = await browser.newContext({ baseURL: baseUrl, acceptDownloads: true });
  await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: baseUrl });
  const page = await context.newPage();
  // A failing wait should fail well inside the test's own timeout, with Playwright's call log.
  page.setDefaultTimeout(15_000);
  return {
    nats,
    system,
    baseUrl,
    tenant,
    user,
    browser,
    context,
    page,
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
