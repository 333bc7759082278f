import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeNode } from "../harness/fake-node.js";
import { openFromNav, signIn, startPortalStack, type PortalStack } from "./portal-stack.js";

/**
 * The portal's settings pages in headless Chromium against the real stack: an API key
 * minted, copied, used and revoked; a node drained; a plan bought through the sandbox
 * checkout; a sign-in with a one-time code.
 */
let stack: PortalStack;

beforeAll(async () => {
  stack = await startPortalStack();
  await signIn(stack.page, stack.tenant);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

/** Lists jobs with an API key, as a script would. */
async function listJobsWith(key: string): Promise<{ status: number; code?: string }> {
  const response = await fetch(`${stack.baseUrl}/api/compute/jobs/list`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-app-id": stack.tenant.app.app_id, "x-api-key": key },
    body: "{}",
  });
  const body = (await response.json()) as { code?: string };
  return { status: response.status, ...(body.code ? { code: body.code } : {}) };
}

describe("the portal's settings pages", () => {
  it("mints a key shown once, copies it, and the key works until it is revoked in the portal", async () => {
    const { page } = stack;
    await openFromNav(page, "API keys", "API keys");
    await page.getByLabel("Name").fill("ci key");
    await page.getByLabel("Jobs per hour").fill("100");
    await page.getByLabel("jobs:read").check();
    await page.getByRole("button", { name: "Create key" }).click();
    const secret = page.getByTestId("secret");
    await secret.waitFor();
    await page.getByRole("button", { name: "Copy" }).click();
    await page.getByRole("button", { name: "Copied" }).waitFor();
    // A string: the test is typed without the DOM library; the browser runs it.
    const copied = await page.evaluate<string>("navigator.clipboard.readText()");
    expect(copied).toBe(await secret.textContent());

    expect(await listJobsWith(copied)).toEqual({ status: 200 });
    const row = page.locator("tr", { hasText: "ci key" });
    expect(await row.locator("td").nth(2).textContent()).toBe("jobs:read");
    await row.getByRole("button", { name: "Revoke ci key" }).click();
    await row.getByText("revoked").waitFor();
    expect(await listJobsWith(copied)).toEqual({ status: 401, code: "auth.invalid_credentials" });
  });

  it("drains a node and shows it draining", async () => {
    const { page } = stack;
    const node = await FakeNode.register(stack.user, stack.baseUrl, stack.tenant.app.app_id, {
      name: "drain-me",
      pool_id: "browser-nodes",
    });
    await openFromNav(page, "Nodes", "Nodes");
    const row = page.locator(`tr[data-node-id="${node.nodeId}"]`);
    await row.getByRole("button", { name: "Drain", exact: true }).click();
    await row.getByRole("button", { name: "Undrain" }).waitFor();
    expect(await row.locator(".badge").textContent()).toBe("draining");
    const { items } = await stack.user.call("listNodes", {});
    expect(items.find((listed) => listed.node_id === node.nodeId)?.state).toBe("draining");
  });

  it("buys a plan through the sandbox checkout and comes back to billing on it", async () => {
    const { page } = stack;
    await openFromNav(page, "Billing", "Billing");
    await page.getByTestId("current-plan").filter({ hasText: "Free" }).waitFor();
    await page.getByRole("button", { name: "Choose Team" }).click();
    await page.waitForURL(/\/sandbox\/checkout\//);
    await page.getByRole("button", { name: "Pay" }).click();
    await page.waitForURL(/\/billing\?checkout=done/);
    await page.getByTestId("current-plan").filter({ hasText: "Team" }).waitFor();
    const subscription = await stack.user.call("getSubscription", {});
    expect(subscription).toMatchObject({ plan: { id: "team" }, provider: "sandbox" });
  });

  it("signs in with a one-time code sent by e-mail, submitted from the keyboard", async () => {
    const context = await stack.browser.newContext({ baseURL: stack.baseUrl });
    const page = await context.newPage();
    page.setDefaultTimeout(15_000);
    const { tenant } = stack;
    // A link with ?app= (as make dev's banner prints it) fills in the application, in a browser that never signed in.
    await page.goto(`/jobs?app=${tenant.app.app_id}`);
    await page.getByRole("button", { name: "One-time code" }).click();
    expect(await page.getByLabel("App ID").inputValue()).toBe(tenant.app.app_id);
    await page.getByLabel("E-mail").fill(tenant.user.email);
    await page.getByRole("button", { name: "Send code" }).click();
    await page.getByText("a six-digit code is on its way").waitFor();
    const code = stack.system.gateways[0]!.outbox.get(tenant.user.email)?.at(-1);
    expect(code).toMatch(/^\d{6}$/);
    // The keyboard alone: Enter in the field submits the form.
    await page.getByLabel("Code from the e-mail").fill(code!);
    await page.getByLabel("Code from the e-mail").press("Enter");
    await page.getByRole("heading", { name: "Jobs", level: 1 }).waitFor();
    await context.close();
  });
});
