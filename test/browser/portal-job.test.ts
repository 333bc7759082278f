import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import type { LogLine } from "../../shared/contract/index.js";
import { errorCodeOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { fitsWidth, openFromNav, signIn, SIZES, startPortalStack, type PortalStack } from "./portal-stack.js";

/**
 * A job's page and the submit form in headless Chromium against the real stack: the dry
 * run before a submit, the pending reason in words, the timeline bar, each attempt's
 * result and log, the log's numbers, times, search and download, retry, run again,
 * cancel, delete behind a confirmation, and dependencies as links; at a phone's width too.
 */
let stack: PortalStack;
let page: Page;
let node: FakeNode;
const POOL = "jobs";

async function submit(body: { name: string } & Record<string, unknown>): Promise<string> {
  const { job_id } = await stack.user.call("submitJob", { type: "shell", command: ["true"], pool_id: POOL, ...body });
  return job_id;
}

function lines(texts: [LogLine["stream"], string][]): LogLine[] {
  return texts.map(([stream, line], index) => ({ seq: index + 1, stream, line, ts: new Date().toISOString() }));
}

beforeAll(async () => {
  stack = await startPortalStack();
  page = stack.page;
  node = await FakeNode.register(stack.user, stack.baseUrl, stack.tenant.app.app_id, {
    name: "gpu-1",
    pool_id: POOL,
    labels: { zone: "eu-1" },
  });
  await signIn(page, stack.tenant);
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

describe("the submit form", () => {
  it("says what labels and metadata are, and its dry run shows where the job would run, what it costs and why it would wait", async () => {
    await openFromNav(page, "Submit", "Submit a job");
    await page.getByLabel("Command, one argument per line").fill("sh\n-c\necho hi");
    await page.getByLabel("Pool").fill(POOL);
    const labelsHelp = page.locator("#labels-help");
    expect(await labelsHelp.textContent()).toContain("Labels choose the node");
    await labelsHelp.filter({ hasText: "Nodes of jobs carry: zone=eu-1 (1 node)" }).waitFor();
    expect(await page.locator("#metadata-help").textContent()).toContain("They choose no node");

    const placement = page.getByTestId("dry-run-placement");
    await placement.filter({ hasText: `It would start at once on ${node.nodeId}` }).waitFor();
    expect(await page.getByTestId("dry-run-cost").textContent()).toContain("never charged");

    await page.getByLabel("Labels (node selectors), key=value per line").fill("team=data");
    await placement.filter({ hasText: "It would wait" }).waitFor();
    expect(await placement.textContent()).toContain("carries the labels team=data");

    // The operator's pool costs credit: the dry run says how much an hour.
    await page.getByLabel("Pool").fill("default");
    await page.getByTestId("dry-run-cost").filter({ hasText: "credits an hour" }).waitFor();
    await page.getByLabel("Pool").fill(POOL);
    await placement.filter({ hasText: "carries the labels team=data" }).waitFor();

    await page.getByLabel("Name (optional)").fill("needs team data");
    await page.getByLabel("Metadata, key=value per line").fill("ticket=OPS-12");
    const before = (await stack.user.call("listJobs", { pool_id: POOL })).items.length;
    await page.getByRole("button", { name: "Submit", exact: true }).click();
    await page.getByText("No node would take this job now").waitFor();
    expect((await stack.user.call("listJobs", { pool_id: POOL })).items).toHaveLength(before);

    await page.getByRole("button", { name: "Submit anyway" }).click();
    await page.waitForURL(/\/jobs\/job_/);
    const reason = page.getByTestId("pending-reason");
    await reason.filter({ hasText: "carries the labels team=data" }).waitFor();
    const jobId = new URL(page.url()).pathname.split("/").pop()!;
    const { job } = await stack.user.call("retrieveJob", { job_id: jobId });
    expect(job).toMatchObject({ labels: { team: "data" }, metadata: { ticket: "OPS-12" }, name: "needs team data" });
    await stack.user.call("cancelJob", { job_id: jobId });
  });
});

describe("a job's page", () => {
  let twice: string;

  it("shows the timeline bar, each attempt's result, and its log with line numbers, times, search, one attempt alone and download", async () => {
    twice = await submit({ name: "flaky import" });
    await node.take(twice);
    await node.client.call("pushLogs", {
      job_id: twice,
      attempt: 1,
      lines: lines([
        ["stdout", "importing batch 1"],
        ["stderr", "error: upstream timed out"],
      ]),
    });
    await node.finish(twice, "failed");
    await stack.user.call("retryJob", { job_id: twice });
    await node.take(twice);
    await node.client.call("pushLogs", {
      job_id: twice,
      attempt: 2,
      lines: lines([
        ["stdout", "importing batch 1"],
        ["stdout", "importing batch 2"],
        ["stdout", "done"],
      ]),
    });
    await node.finish(twice, "succeeded");

    await page.goto(`/jobs/${twice}`);
    await page.getByTestId("log-end").filter({ hasText: "Ended: succeeded" }).waitFor();
    const { job } = await stack.user.call("retrieveJob", { job_id: twice });
    expect(await page.locator("ol.timeline > li").count()).toBe(job.timeline.length);
    expect(await page.locator(".timeline-bar .segment").count()).toBeGreaterThan(0);
    expect(await page.locator("ol.timeline > li").first().textContent()).toContain("submitted");

    const attempts = page.getByRole("region", { name: "Attempts" }).locator("tbody tr");
    expect(await attempts.count()).toBe(2);
    expect(await attempts.nth(0).locator(".attempt-result").textContent()).toContain("failed exit code 1");
    expect(await attempts.nth(1).locator(".attempt-result").textContent()).toContain("succeeded exit code 0");

    const log = page.getByRole("log", { name: "Log lines" });
    expect(await log.locator(".log-text").allTextContents()).toEqual([
      "importing batch 1",
      "error: upstream timed out",
      "importing batch 1",
      "importing batch 2",
      "done",
    ]);
    expect(await log.locator(".log-number").allTextContents()).toEqual(["1", "2", "1", "2", "3"]);
    expect(await log.locator(".log-attempt").allTextContents()).toEqual(["attempt 1", "attempt 2"]);
    for (const time of await log.locator(".log-time").allTextContents())
      expect(time).toMatch(/^\d\d:\d\d:\d\d\.\d{3}$/);

    await page.getByLabel("Search the log").fill("BATCH");
    await page.getByTestId("log-count").filter({ hasText: "3 of 5 lines" }).waitFor();
    expect(await log.locator("mark").allTextContents()).toEqual(["batch", "batch", "batch"]);
    await page.getByLabel("Search the log").fill("");

    await page.getByRole("button", { name: "Show the log of attempt 1" }).click();
    await page.getByTestId("log-count").filter({ hasText: "2 of 5 lines" }).waitFor();
    expect(await log.locator(".log-text").allTextContents()).toEqual([
      "importing batch 1",
      "error: upstream timed out",
    ]);
    await page.getByRole("combobox", { name: "Attempt to show" }).selectOption({ label: "all" });
    await page
      .getByTestId("log-count")
      .filter({ hasText: /^5 lines$/ })
      .waitFor();

    const [download] = await Promise.all([
      page.waitForEvent("download"),
      page.getByRole("button", { name: "Download log" }).click(),
    ]);
    expect(download.suggestedFilename()).toBe(`${twice}.log`);
    const saved = (await readFile(await download.path(), "utf8")).trimEnd().split("\n");
    expect(saved.map((line) => line.replace(/^\S+ /, ""))).toEqual([
      "stdout importing batch 1",
      "stderr error: upstream timed out",
      "stdout importing batch 1",
      "stdout importing batch 2",
      "stdout done",
    ]);
    for (const line of saved) expect(Date.parse(line.split(" ")[0]!)).not.toBeNaN();
  });

  it("retries a failed job, runs a succeeded one again as a linked new job, cancels a running one while its time grows", async () => {
    const failing = await submit({ name: "will fail" });
    await node.take(failing);
    await node.finish(failing, "failed");
    await page.goto(`/jobs/${failing}`);
    await page.locator(".title-row .badge", { hasText: "failed" }).waitFor();
    await page.getByRole("button", { name: "Retry job" }).click();
    await page.locator(".title-row .badge", { hasText: /queued|assigned/ }).waitFor();
    expect(await page.getByRole("button", { name: "Run again" }).count()).toBe(0);
    await node.take(failing);
    await node.finish(failing, "succeeded");

    await page.goto(`/jobs/${twice}`);
    await page.locator(".title-row .badge", { hasText: "succeeded" }).waitFor();
    expect(await page.getByRole("button", { name: "Retry job" }).count()).toBe(0);
    await page.getByRole("button", { name: "Run again" }).click();
    await page.waitForURL((url) => url.pathname.startsWith("/jobs/job_") && !url.pathname.endsWith(twice));
    const again = new URL(page.url()).pathname.split("/").pop()!;
    await page.getByTestId("rerun-of").getByRole("link", { name: "flaky import" }).waitFor();
    expect((await stack.user.call("retrieveJob", { job_id: again })).job.metadata).toEqual({ rerun_of: twice });

    await node.take(again);
    await page.locator(".title-row .badge", { hasText: "running" }).waitFor();
    const ran = page.getByTestId("ran-for");
    await ran.filter({ hasText: / s$/ }).waitFor();
    const before = await ran.textContent();
    await expect.poll(() => ran.textContent(), { timeout: 10_000 }).not.toBe(before);
    await page.getByRole("button", { name: "Cancel job" }).click();
    await page.locator(".title-row .badge", { hasText: "cancelled" }).waitFor();
    await page.getByTestId("job-error").filter({ hasText: "job.cancelled" }).waitFor();
  });

  it("deletes a finished job only once the dialog is confirmed", async () => {
    const done = await submit({ name: "to delete" });
    await node.take(done);
    await node.finish(done, "succeeded");
    await page.goto(`/jobs/${done}`);
    await page.getByRole("button", { name: "Delete…" }).click();
    const dialog = page.getByRole("dialog", { name: "Delete to delete?" });
    await dialog.getByRole("button", { name: "Keep" }).click();
    expect((await stack.user.call("retrieveJob", { job_id: done })).job.state).toBe("succeeded");
    await page.getByRole("button", { name: "Delete…" }).click();
    await dialog.getByRole("button", { name: "Delete the job" }).click();
    await page.waitForURL((url) => url.pathname === "/jobs");
    expect(await errorCodeOf(stack.user.call("retrieveJob", { job_id: done }))).toBe("resource.not_found");
  });

  it("links a job's dependencies and its dependents, each with its state, and says why it waits", async () => {
    const parent = await submit({ name: "extract", pool_id: "no-nodes-here" });
    const child = await submit({ name: "load", depends_on: [parent] });
    await page.goto(`/jobs/${child}`);
    await page.getByTestId("pending-reason").filter({ hasText: "waits for the jobs it depends on" }).waitFor();
    const waitsFor = page.getByRole("region", { name: "Dependencies" });
    await waitsFor.getByRole("link", { name: "extract" }).click();
    await page.waitForURL(`**/jobs/${parent}`);
    await page.getByTestId("pending-reason").filter({ hasText: "No node of pool “no-nodes-here” is online" }).waitFor();
    const dependents = page.getByRole("region", { name: "Dependencies" });
    await dependents.locator(".job-link", { hasText: "load" }).locator(".badge", { hasText: "queued" }).waitFor();
    await dependents.getByRole("link", { name: "load" }).click();
    await page.waitForURL(`**/jobs/${child}`);
    await stack.user.call("cancelJob", { job_id: parent });
  });

  it("at a phone's width fits the screen, with its log, attempts and actions", async () => {
    const phone = await stack.newPage(SIZES[1]);
    await signIn(phone, stack.tenant);
    await phone.goto(`/jobs/${twice}`);
    await phone.getByTestId("log-end").waitFor();
    await phone.getByRole("button", { name: "Show the log of attempt 2" }).click();
    await phone.getByTestId("log-count").filter({ hasText: "3 of 5 lines" }).waitFor();
    expect(await fitsWidth(phone)).toBe(true);
    await phone.getByRole("button", { name: "Run again" }).waitFor();
    await phone.context().close();
  });

  it("threw no error and broke no rule of the portal's Content-Security-Policy", () => {
    expect(stack.problems).toEqual([]);
  });
});
