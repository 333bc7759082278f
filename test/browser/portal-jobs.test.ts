import { readFile } from "node:fs/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { FakeNode } from "../harness/fake-node.js";
import { logLines } from "../harness/log-jobs.js";
import { openFromNav, signIn, startPortalStack, type PortalStack } from "./portal-stack.js";

/**
 * A user's way through the portal in headless Chromium against the real stack: sign in,
 * submit a job from the form, watch its log lines arrive live while a node runs it,
 * upload an artifact and download the same bytes. The tests run in order on one page.
 */
let stack: PortalStack;
let node: FakeNode;
let jobId: string;
const POOL = "browser-jobs";

beforeAll(async () => {
  stack = await startPortalStack();
  node = await FakeNode.register(stack.user, stack.baseUrl, stack.tenant.app.app_id, { pool_id: POOL });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
});

describe("the portal's jobs pages", () => {
  it("signs in with e-mail and password and shows the jobs list", async () => {
    await signIn(stack.page, stack.tenant);
    expect(new URL(stack.page.url()).pathname).toBe("/");
  });

  it("submits a job from the form and opens the job's page", async () => {
    const { page } = stack;
    await openFromNav(page, "Submit", "Submit a job");
    await page.getByLabel("Name (optional)").fill("portal job");
    await page.getByLabel("Command, one argument per line").fill("sh\n-c\necho hello");
    await page.getByLabel("Pool").fill(POOL);
    await page.getByRole("button", { name: "Submit" }).click();
    await page.waitForURL(/\/jobs\/job_/);
    jobId = new URL(page.url()).pathname.split("/").pop()!;
    await page.getByRole("heading", { name: "portal job" }).waitFor();
    const stored = await stack.user.call("retrieveJob", { job_id: jobId });
    expect(stored.job).toMatchObject({ name: "portal job", pool_id: POOL, command: ["sh", "-c", "echo hello"] });
  });

  it("shows log lines the node pushes after the page opened the stream, then the job's end", async () => {
    const { page } = stack;
    await page.getByTestId("log-status").filter({ hasText: "live" }).waitFor();
    const [assignment] = await node.poll(10);
    expect(assignment?.job_id).toBe(jobId);
    await node.client.call("pushLogs", {
      job_id: jobId,
      attempt: 1,
      lines: logLines(1, 3, (seq) => `hello from the node ${seq}`),
    });
    const lines = page.getByRole("log", { name: "Log lines" }).locator(".log-text");
    await lines.filter({ hasText: "hello from the node 3" }).waitFor();
    expect(await lines.allTextContents()).toEqual([
      "hello from the node 1",
      "hello from the node 2",
      "hello from the node 3",
    ]);
    await node.finish(jobId);
    await page.getByTestId("log-end").filter({ hasText: "Ended: succeeded, exit code 0" }).waitFor();
    await page.locator(".title-row .badge").filter({ hasText: "succeeded" }).waitFor();
  });

  it("shows a job's state change in the jobs list as it happens, without a reload", async () => {
    const { page } = stack;
    await openFromNav(page, "Jobs", "Jobs");
    await page.evaluate("window.sameDocument = true");
    const { job_id } = await stack.user.call("submitJob", {
      type: "shell",
      name: "listed job",
      command: ["true"],
      pool_id: POOL,
    });
    const row = page.locator(`tr[data-job-id="${job_id}"]`);
    await row.waitFor();
    expect(["queued", "assigned"]).toContain(await row.locator(".badge").textContent());
    await node.poll(10);
    await node.finish(job_id);
    await row.locator(".badge", { hasText: "succeeded" }).waitFor();
    expect(await page.evaluate("window.sameDocument")).toBe(true);
  });

  it("uploads an artifact from a file and downloads the same bytes", async () => {
    const { page } = stack;
    await page.getByRole("link", { name: "portal job", exact: true }).click();
    const bytes = Buffer.from(`result of ${jobId}\n${"x".repeat(3000)}\n`);
    await page.getByLabel("File").setInputFiles({ name: "result.txt", mimeType: "text/plain", buffer: bytes });
    await page.getByRole("button", { name: "Upload" }).click();
    const downloadButton = page.getByRole("button", { name: "Download result.txt" });
    await downloadButton.waitFor();
    const [download] = await Promise.all([page.waitForEvent("download"), downloadButton.click()]);
    expect(download.suggestedFilename()).toBe("result.txt");
    expect(await readFile(await download.path())).toEqual(bytes);
  });
});
