import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { errorCodeOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { fitsWidth, signIn, SIZES, startPortalStack, type PortalStack } from "./portal-stack.js";

/**
 * The runs list in headless Chromium against the real stack: its filters and page in the
 * address, paging through the whole history, its columns (a running job's duration
 * growing), a refresh that keeps the scroll and the ticked rows, a delete behind a
 * confirmation, the CSV export, and two short lines per run on a phone.
 */
let stack: PortalStack;
let page: Page;
let node: FakeNode;
const POOL = "runs";
/** A pool with no node: its jobs wait, 55 of them, more than a page. */
const PAGING = "paging";
const PAGED = 55;
const jobs: Record<"etl" | "web" | "ok1" | "ok2" | "running", string> = {
  etl: "",
  web: "",
  ok1: "",
  ok2: "",
  running: "",
};

async function submit(name: string, pool: string, metadata: Record<string, string> = {}): Promise<string> {
  const { job_id } = await stack.user.call("submitJob", {
    type: "shell",
    name,
    command: ["true"],
    pool_id: pool,
    metadata,
  });
  return job_id;
}

/** Runs a job of POOL on the node to `outcome`. */
async function run(name: string, outcome: "succeeded" | "failed", metadata: Record<string, string> = {}) {
  const jobId = await submit(name, POOL, metadata);
  await node.take(jobId);
  await node.finish(jobId, outcome);
  return jobId;
}

beforeAll(async () => {
  stack = await startPortalStack();
  page = stack.page;
  node = await FakeNode.register(stack.user, stack.baseUrl, stack.tenant.app.app_id, {
    name: "runner-1",
    pool_id: POOL,
  });
  for (let index = 1; index <= PAGED; index += 1) await submit(`page job ${index}`, PAGING);
  jobs.etl = await run("etl nightly", "failed", { team: "data" });
  jobs.web = await run("web build", "failed", { team: "web" });
  jobs.ok1 = await run("report one", "succeeded");
  jobs.ok2 = await run("report two", "succeeded");
  jobs.running = await submit("long training", POOL);
  await node.poll(5);
  await signIn(page, stack.tenant);
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

const rows = (target: Page) => target.locator("table.runs tbody tr");
const listed = (target: Page) =>
  rows(target).evaluateAll((found) => found.map((row) => row.getAttribute("data-job-id")!));

describe("the runs list", () => {
  it("keeps its filters in the address: each change is a step back, and the link opened afresh shows the same view", async () => {
    await page.goto("/jobs");
    await page.getByRole("checkbox", { name: "failed", exact: true }).check();
    await page.waitForURL((url) => url.search === "?state=failed");
    await page.getByText("More filters").click();
    await page.getByLabel("Pool").fill(POOL);
    await page.getByLabel("Pool").press("Enter");
    await page.waitForURL((url) => url.search === `?state=failed&pool=${POOL}`);
    await expect.poll(() => listed(page)).toEqual([jobs.web, jobs.etl]);

    await page.getByLabel("Metadata key=value").fill("team=data");
    await page.getByLabel("Metadata key=value").press("Enter");
    await page.waitForURL(/metadata=team%3Ddata/);
    await expect.poll(() => listed(page)).toEqual([jobs.etl]);
    const shared = page.url();

    await page.goBack();
    await page.waitForURL((url) => url.search === `?state=failed&pool=${POOL}`);
    await expect.poll(() => listed(page)).toEqual([jobs.web, jobs.etl]);
    await page.goBack();
    await page.waitForURL((url) => url.search === "?state=failed");
    expect(await page.getByRole("checkbox", { name: "failed", exact: true }).isChecked()).toBe(true);

    // The link opened by someone else: after their sign-in, the same view with its controls set.
    const other = await stack.newPage(SIZES[0]);
    await other.goto(shared);
    await other.getByLabel("App ID").fill(stack.tenant.app.app_id);
    await other.getByLabel("E-mail").fill(stack.tenant.user.email);
    await other.getByLabel("Password").fill(stack.tenant.password);
    await other.getByRole("button", { name: "Sign in" }).click();
    expect(other.url()).toBe(shared);
    await expect.poll(() => listed(other)).toEqual([jobs.etl]);
    expect(await other.getByRole("checkbox", { name: "failed", exact: true }).isChecked()).toBe(true);
    expect(await other.getByLabel("Pool").inputValue()).toBe(POOL);
    await other.getByRole("list", { name: "Metadata filters" }).getByText("team=data").waitFor();
    await other.context().close();
  });

  it("filters by name prefix and by when a job was created", async () => {
    await page.goto(`/jobs?pool=${POOL}&name=report`);
    await expect.poll(() => listed(page)).toEqual([jobs.ok2, jobs.ok1]);
    const { job } = await stack.user.call("retrieveJob", { job_id: jobs.ok2 });
    await page.goto(`/jobs?pool=${POOL}&before=${encodeURIComponent(job.created_at)}`);
    await expect.poll(() => listed(page)).toEqual([jobs.ok1, jobs.web, jobs.etl]);
    await page.goto(`/jobs?pool=${POOL}&after=${encodeURIComponent(job.created_at)}`);
    await expect.poll(() => listed(page)).toEqual([jobs.running]);
  });

  it("pages through the whole history: Older, Newer, and the back button", async () => {
    await page.goto(`/jobs?pool=${PAGING}`);
    await expect.poll(() => rows(page).count()).toBe(50);
    const first = await listed(page);
    await page.getByRole("button", { name: "Older" }).click();
    await page.waitForURL(/cursor=/);
    await expect.poll(() => rows(page).count()).toBe(PAGED - 50);
    const second = await listed(page);
    expect(second.some((jobId) => first.includes(jobId))).toBe(false);
    expect(await page.getByRole("button", { name: "Older" }).count()).toBe(0);

    await page.getByRole("link", { name: "Newer" }).click();
    await page.waitForURL((url) => url.search === `?pool=${PAGING}`);
    await expect.poll(() => listed(page)).toEqual(first);
    await page.goBack();
    await expect.poll(() => listed(page)).toEqual(second);
  });

  it("shows how long each run ran (growing while it runs), waited, on which node, which attempt and its exit code", async () => {
    await page.goto(`/jobs?pool=${POOL}`);
    const running = page.locator(`tr[data-job-id="${jobs.running}"]`);
    const ran = running.locator('td[data-col="ran"]');
    await ran.filter({ hasText: / s$/ }).waitFor();
    const before = await ran.textContent();
    await expect.poll(() => ran.textContent(), { timeout: 10_000 }).not.toBe(before);
    expect(await running.locator('td[data-col="node"]').textContent()).toBe("runner-1");

    const failed = page.locator(`tr[data-job-id="${jobs.etl}"]`);
    expect(await failed.locator('td[data-col="exit"]').textContent()).toBe("1");
    expect(await failed.locator('td[data-col="attempt"]').textContent()).toBe("1");
    expect(await failed.locator('td[data-col="queued"]').textContent()).toMatch(/\d+ (ms|s)$/);
    expect(await failed.locator('td[data-col="ran"]').textContent()).toMatch(/\d+ (ms|s)$/);
  });

  it("reads the page again in place: the ticked rows stay ticked and the rows in view stay where they were", async () => {
    await page.setViewportSize({ width: 1280, height: 600 });
    await page.goto(`/jobs?pool=${PAGING}`);
    await expect.poll(() => rows(page).count()).toBe(50);
    await page.evaluate("window.sameDocument = true");
    const row = rows(page).nth(40);
    const ticked = await row.getAttribute("data-job-id");
    await row.scrollIntoViewIfNeeded();
    await row.getByRole("checkbox").check();
    await page.getByRole("region", { name: "Selected jobs" }).getByText("1 selected").waitFor();
    const top = (await row.boundingBox())!.y;

    const fresh = await submit("page job new", PAGING);
    await page.locator(`tr[data-job-id="${fresh}"]`).waitFor();
    const same = page.locator(`tr[data-job-id="${ticked}"]`);
    expect(await same.getByRole("checkbox").isChecked()).toBe(true);
    expect(Math.abs((await same.boundingBox())!.y - top)).toBeLessThanOrEqual(1);
    expect(await page.evaluate("window.sameDocument")).toBe(true);
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("deletes the ticked finished jobs only once the dialog is confirmed", async () => {
    await page.goto(`/jobs?pool=${POOL}&state=succeeded`);
    await expect.poll(() => listed(page)).toEqual([jobs.ok2, jobs.ok1]);
    await page.getByRole("checkbox", { name: "Select every job shown" }).check();
    await page.getByRole("button", { name: "Delete 2…" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete 2 finished jobs?" });
    await dialog.getByRole("button", { name: "Keep" }).click();
    await dialog.waitFor({ state: "hidden" });
    expect((await stack.user.call("retrieveJob", { job_id: jobs.ok1 })).job.state).toBe("succeeded");

    await page.getByRole("button", { name: "Delete 2…" }).click();
    await dialog.getByRole("button", { name: "Delete them" }).click();
    await expect.poll(() => listed(page)).toEqual([]);
    for (const jobId of [jobs.ok1, jobs.ok2])
      expect(await errorCodeOf(stack.user.call("retrieveJob", { job_id: jobId }))).toBe("resource.not_found");
  });

  it("exports the jobs its filter shows as CSV", async () => {
    await page.goto(`/jobs?pool=${POOL}&state=failed`);
    await expect.poll(() => listed(page)).toEqual([jobs.web, jobs.etl]);
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Export CSV" }).click(),
    ]);
    expect(download.suggestedFilename()).toMatch(/^jobs.*\.csv$/);
    const lines = (await readFile(await download.path(), "utf8")).trim().split(/\r?\n/);
    expect(lines[0]).toContain("job_id");
    expect(lines.slice(1).map((line) => line.split(",")[0])).toEqual([jobs.web, jobs.etl]);
  });

  it("on a phone shows each run in two short lines, fitting the width, with its filters working", async () => {
    const phone = await stack.newPage(SIZES[1]);
    await signIn(phone, stack.tenant);
    await phone.goto(`/jobs?pool=${PAGING}`);
    await expect.poll(() => rows(phone).count()).toBe(50);
    const heights = await rows(phone).evaluateAll((found) => found.map((row) => row.getBoundingClientRect().height));
    expect(Math.max(...heights)).toBeLessThan(64);
    expect(await fitsWidth(phone)).toBe(true);
    await phone.getByRole("checkbox", { name: "queued", exact: true }).check();
    await phone.waitForURL(/state=queued/);
    await expect.poll(() => rows(phone).count()).toBe(50);
    await phone.context().close();
  });

  it("threw no error and broke no rule of the portal's Content-Security-Policy", () => {
    expect(stack.problems).toEqual([]);
  });
});
