import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { requestRpc } from "../../shared/nats/index.js";
import { errorCodeOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { uploadArtifact } from "../harness/job-data.js";
import { startWebhookReceiver, type WebhookReceiver } from "../harness/webhook-receiver.js";
import { fitsWidth, openFromNav, signIn, SIZES, startPortalStack, type PortalStack } from "./portal-stack.js";

/**
 * The portal's other pages in headless Chromium against the real stack: schedules (the
 * cron preview in the reader's time zone, pause and resume, its runs), webhooks (the
 * secret shown once, a test, the delivery log, a delivery sent again), users for admins
 * only, usage with the ledger's export, deletes behind a confirmation, and every page at a
 * laptop's and a phone's width.
 */
const ENV = {
  // Schedules tick every second here, and are checked often: a schedule's run shows at once.
  CJS_SCHEDULE_MIN_INTERVAL_SECONDS: "1",
  CJS_SCHEDULE_CHECK_INTERVAL_MS: "100",
  // A webhook's failed try is final at once, so the log shows a failed delivery to send again.
  CJS_WEBHOOK_RETRY_SCHEDULE_SECONDS: "1",
  CJS_WEBHOOK_RETRY_WINDOW_SECONDS: "1",
  // A node without heartbeats is offline within a few seconds, so it may be deleted.
  CJS_HEARTBEAT_INTERVAL_SECONDS: "1",
  CJS_HEARTBEAT_MISSES_OFFLINE: "1",
};
const HOUR_MS = 3_600_000;

let stack: PortalStack;
let page: Page;
let receiver: WebhookReceiver;
/** What the webhook receiver answers next. */
let answer = 500;
let scheduleId: string;
let webhookId: string;

beforeAll(async () => {
  stack = await startPortalStack({ env: ENV });
  page = stack.page;
  receiver = await startWebhookReceiver(() => answer);
  await signIn(page, stack.tenant);
}, 90_000);

afterAll(async () => {
  await receiver?.close();
  await stack?.stop();
});

describe("schedules", () => {
  it("previews a cron expression's next runs in the reader's own time zone, then creates the schedule", async () => {
    const reader = await stack.newPage(SIZES[0], { timezoneId: "Asia/Kolkata" });
    await signIn(reader, stack.tenant);
    await openFromNav(reader, "Schedules", "Schedules");
    await reader.getByLabel("Cron expression").fill("61 * * * *");
    await reader.getByTestId("cron-preview").getByText("Not a cron expression").waitFor();

    await reader.getByLabel("Cron expression").fill("0 * * * *");
    await reader.getByLabel("Time zone").fill("America/New_York");
    const preview = reader.getByTestId("cron-preview");
    // The browser may name the zone by its older name, Asia/Calcutta.
    const zone = await reader.evaluate<string>("Intl.DateTimeFormat().resolvedOptions().timeZone");
    expect(["Asia/Kolkata", "Asia/Calcutta"]).toContain(zone);
    await preview.getByText(`Next runs, in your time zone (${zone})`).waitFor();
    const next = Math.ceil((Date.now() + 1) / HOUR_MS) * HOUR_MS;
    const times = preview.locator("time");
    await expect
      .poll(() => times.evaluateAll((found) => found.map((time) => time.getAttribute("datetime"))))
      .toEqual([0, 1, 2, 3, 4].map((hours) => new Date(next + hours * HOUR_MS).toISOString()));
    // On the hour in New York is half past in Kolkata (UTC+5:30).
    expect(await times.first().textContent()).toMatch(/\s\d{1,2}:30\s/);

    await reader.getByLabel("Schedule name (optional)").fill("hourly sync");
    await reader.getByLabel("Command, one argument per line").fill("./sync.sh");
    await reader.getByLabel("Pool").fill("sched");
    await reader.getByRole("button", { name: "Create schedule" }).click();
    await reader.waitForURL(/\/schedules\/sch_/);
    await reader.getByRole("heading", { name: "hourly sync", level: 1 }).waitFor();
    const created = new URL(reader.url()).pathname.split("/").pop()!;
    const { schedule } = await stack.user.call("retrieveSchedule", { schedule_id: created });
    expect(schedule).toMatchObject({ cron: "0 * * * *", timezone: "America/New_York", job: { pool_id: "sched" } });
    await reader.context().close();
  });

  it("pauses and resumes a schedule, shows its runs, and deletes it only once confirmed", async () => {
    const { schedule } = await stack.user.call("createSchedule", {
      name: "every second",
      cron: "* * * * * *",
      job: { type: "shell", name: "tick job", command: ["true"], pool_id: "sched-idle" },
    });
    scheduleId = schedule.schedule_id;
    await openFromNav(page, "Schedules", "Schedules");
    await page.getByRole("link", { name: "every second" }).click();
    await page.getByRole("heading", { name: "every second", level: 1 }).waitFor();
    await page
      .getByRole("table", { name: "Runs of the schedule" })
      .getByRole("link", { name: "tick job" })
      .first()
      .waitFor();

    await page.getByRole("button", { name: "Pause every second" }).click();
    await page.locator(".title-row .badge", { hasText: "paused" }).waitFor();
    expect((await stack.user.call("retrieveSchedule", { schedule_id: scheduleId })).schedule.state).toBe("paused");
    await page.getByRole("button", { name: "Resume every second" }).click();
    await page.locator(".title-row .badge", { hasText: "active" }).waitFor();

    await page.getByRole("link", { name: "All its runs" }).click();
    await page.waitForURL((url) => url.pathname === "/jobs" && url.searchParams.get("schedule") === scheduleId);
    await page.locator("table.runs tbody tr").first().waitFor();
    expect(await page.getByLabel("Schedule").inputValue()).toBe(scheduleId);
    await page.goBack();

    await page.getByRole("button", { name: "Delete…" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete the schedule every second?" });
    await dialog.getByRole("button", { name: "Keep" }).click();
    expect((await stack.user.call("retrieveSchedule", { schedule_id: scheduleId })).schedule.state).toBe("active");
    await page.getByRole("button", { name: "Delete…" }).click();
    await dialog.getByRole("button", { name: "Delete the schedule" }).click();
    await page.waitForURL((url) => url.pathname === "/schedules");
    expect(await errorCodeOf(stack.user.call("retrieveSchedule", { schedule_id: scheduleId }))).toBe(
      "resource.not_found",
    );
    // Its jobs are kept.
    expect((await stack.user.call("listJobs", { schedule_id: scheduleId })).items.length).toBeGreaterThan(0);
  });
});

describe("webhooks", () => {
  it("shows a new webhook's secret once, sends a test, logs its failed delivery and sends it again", async () => {
    await openFromNav(page, "Webhooks", "Webhooks");
    await page.getByLabel("URL").fill(receiver.url);
    await page.getByRole("button", { name: "Create webhook" }).click();
    const secret = page.getByTestId("secret");
    await secret.waitFor();
    const shown = (await secret.textContent())!;
    expect(shown).toMatch(/^whsec_/);
    await page.getByRole("button", { name: "Done" }).click();
    await secret.waitFor({ state: "detached" });
    await page.reload();
    const row = page.locator("tr", { hasText: receiver.url });
    await row.waitFor();
    webhookId = (await row.getAttribute("data-webhook-id"))!;
    expect(await page.content()).not.toContain(shown);

    await row.getByRole("button", { name: "Send a test" }).click();
    await page.waitForURL(`**/webhooks/${webhookId}`);
    const delivery = page.locator("tbody tr", { hasText: "webhook.test" });
    await delivery.locator(".badge", { hasText: "failed" }).waitFor();
    expect(await delivery.getByTestId("last-answer").textContent()).toBe("HTTP 500");

    answer = 200;
    await delivery.getByRole("button", { name: /^Send webhook\.test of .* again$/ }).click();
    await delivery.locator(".badge", { hasText: "succeeded" }).waitFor();
    expect(await delivery.getByTestId("last-answer").textContent()).toBe("HTTP 200");
    await delivery.locator("summary", { hasText: "2" }).click();
    expect(await delivery.locator("ol.tries li").allTextContents()).toEqual([
      expect.stringContaining("HTTP 500"),
      expect.stringContaining("HTTP 200"),
    ]);
    expect(receiver.received).toHaveLength(2);
  });

  it("deletes a webhook only once confirmed", async () => {
    await openFromNav(page, "Webhooks", "Webhooks");
    await page.getByRole("button", { name: `Delete ${receiver.url}` }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete the webhook" }).click();
    await page.getByText("No webhooks yet.").waitFor();
    expect((await stack.user.call("listWebhooks", {})).items).toEqual([]);
  });
});

describe("users", () => {
  it("lets an admin invite a user, change a role, disable and enable", async () => {
    await openFromNav(page, "Users", "Users");
    await page.getByLabel("E-mail").fill("new.hire@example.test");
    await page.getByRole("button", { name: "Invite" }).click();
    await page.getByText("Invited new.hire@example.test").waitFor();
    const row = page.locator("tr", { hasText: "new.hire@example.test" });
    await row.locator(".badge", { hasText: "invited" }).waitFor();
    expect(stack.system.gateways[0]!.outbox.get("new.hire@example.test")?.at(-1)).toMatch(/^\d{6}$/);
    const userId = (await row.getAttribute("data-user-id"))!;
    const find = async () => (await stack.user.call("listUsers", {})).items.find((user) => user.user_id === userId)!;

    await row.getByLabel("Role of new.hire@example.test").selectOption("admin");
    await expect.poll(async () => (await find()).role).toBe("admin");
    await row.getByRole("button", { name: "Disable new.hire@example.test" }).click();
    await row.locator(".badge", { hasText: "disabled" }).waitFor();
    expect((await find()).status).toBe("disabled");
    await row.getByRole("button", { name: "Enable new.hire@example.test" }).click();
    await row.getByRole("button", { name: "Disable new.hire@example.test" }).waitFor();
    expect((await find()).status).not.toBe("disabled");
  });

  it("shows a member neither the users page nor the exports", async () => {
    const { tenant } = stack;
    const password = `pw-member-${Date.now()}`;
    const member = await requestRpc(stack.system.gateways[0]!.nc, "adminUserCreate", {
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      email: "member@example.test",
      password,
      role: "member",
    });
    const own = await stack.newPage(SIZES[0]);
    await signIn(own, { ...tenant, user: member, password });
    await own.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Usage" }).waitFor();
    expect(await own.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Users" }).count()).toBe(0);
    expect(await own.getByRole("button", { name: "Export CSV" }).count()).toBe(0);
    await own.goto("/users");
    await own.getByText("Only the business's admins manage its users.").waitFor();
    await own.context().close();
  });
});

describe("usage", () => {
  it("shows the credit, each key's spend against its budget, and the ledger, exported as CSV", async () => {
    await stack.user.call("createApiKey", { name: "ci budget", budget_credits_per_month: 5 });
    await openFromNav(page, "Usage", "Usage");
    const { balance, items } = await stack.user.call("listLedger", {});
    await page
      .getByTestId("credit-balance")
      .filter({ hasText: `${balance} credits` })
      .waitFor();
    const key = page.locator("tr", { hasText: "ci budget" });
    await key.waitFor();
    expect(await key.locator('td[data-label="Budget"]').textContent()).toContain("5");
    const ledger = page.locator("table", { has: page.getByText("Balance after") }).locator("tbody tr");
    await expect.poll(() => ledger.count()).toBe(items.length);
    expect(items.length).toBeGreaterThan(0);

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export CSV" }).click(),
    ]);
    const lines = (await readFile(await download.path(), "utf8")).trim().split(/\r?\n/);
    expect(lines[0]).toContain("entry_id");
    expect(lines).toHaveLength(items.length + 1);
  });
});

describe("deletes", () => {
  it("deletes an artifact and an offline node, each only once confirmed", async () => {
    const node = await FakeNode.register(stack.user, stack.baseUrl, stack.tenant.app.app_id, {
      name: "old-box",
      pool_id: "deletes",
    });
    const { job_id } = await stack.user.call("submitJob", { type: "shell", command: ["true"], pool_id: "deletes" });
    await uploadArtifact(stack.user, job_id, "report.csv", "a,b\n");
    await page.goto(`/jobs/${job_id}`);
    await page.getByRole("button", { name: "Delete report.csv" }).click();
    await page.getByRole("dialog", { name: "Delete report.csv?" }).getByRole("button", { name: "Delete it" }).click();
    await page.getByRole("region", { name: "Artifacts" }).getByText("None yet.").waitFor();
    expect((await stack.user.call("listArtifacts", { job_id })).artifacts).toEqual([]);
    await stack.user.call("cancelJob", { job_id });

    await openFromNav(page, "Nodes", "Nodes");
    const row = page.locator(`tr[data-node-id="${node.nodeId}"]`);
    await row.locator(".badge", { hasText: "offline" }).waitFor();
    await row.getByRole("button", { name: "Delete old-box" }).click();
    await page
      .getByRole("dialog", { name: "Delete the node old-box?" })
      .getByRole("button", { name: "Delete the node" })
      .click();
    await row.waitFor({ state: "detached" });
    const { items } = await stack.user.call("listNodes", { include_offline: true });
    expect(items.map((listed) => listed.node_id)).not.toContain(node.nodeId);
  });
});

describe.each(SIZES)("every page at a $name's width", (size) => {
  it("shows its heading and fits the width, tables scrolling inside their own box", async () => {
    const { schedule } = await stack.user.call("createSchedule", {
      name: `paused ${size.name}`,
      cron: "0 3 * * *",
      paused: true,
      job: { type: "shell", command: ["true"], pool_id: "sched-idle" },
    });
    const own = await stack.newPage(size);
    await signIn(own, stack.tenant);
    const pages: [path: string, heading: string][] = [
      ["/jobs", "Jobs"],
      ["/submit", "Submit a job"],
      ["/schedules", "Schedules"],
      [`/schedules/${schedule.schedule_id}`, `paused ${size.name}`],
      ["/webhooks", "Webhooks"],
      ["/nodes", "Nodes"],
      ["/usage", "Usage"],
      ["/billing", "Billing"],
      ["/keys", "API keys"],
      ["/users", "Users"],
    ];
    for (const [path, heading] of pages) {
      await own.goto(path);
      await own.getByRole("heading", { name: heading, level: 1 }).waitFor();
      expect(await fitsWidth(own), path).toBe(true);
    }
    await own.goto(`/schedules/${schedule.schedule_id}`);
    await own.getByRole("button", { name: `Resume paused ${size.name}` }).click();
    await own.locator(".title-row .badge", { hasText: "active" }).waitFor();
    await own.context().close();
  });
});

describe("the pages", () => {
  it("threw no error and broke no rule of the portal's Content-Security-Policy", () => {
    expect(stack.problems).toEqual([]);
  });
});
