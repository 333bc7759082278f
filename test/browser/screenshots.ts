/**
 * Screenshots of the portal's main pages for docs/ and the README (`npm run screenshots`;
 * not part of the test run). Starts the real stack, fills it with a few jobs, keys and
 * nodes, and saves each page at a laptop's and a phone's size under docs/screenshots/.
 */
import { mkdir } from "node:fs/promises";
import type { Page } from "playwright-core";
import { FakeNode } from "../harness/fake-node.js";
import { logLines } from "../harness/log-jobs.js";
import { signIn, startPortalStack } from "./portal-stack.js";

const OUT = "docs/screenshots";
const SIZES = [
  { name: "laptop", width: 1280, height: 800 },
  { name: "phone", width: 390, height: 844 },
] as const;

const stack = await startPortalStack();
try {
  await mkdir(OUT, { recursive: true });
  const { user, baseUrl, tenant } = stack;
  const appId = tenant.app.app_id;

  // A node that runs one job to its end and keeps one running, and a second node, draining.
  const worker = await FakeNode.register(user, baseUrl, appId, {
    name: "worker-1",
    hostname: "worker-1.lan",
    pool_id: "gpu-lab",
  });
  const spare = await FakeNode.register(user, baseUrl, appId, {
    name: "worker-2",
    hostname: "worker-2.lan",
    pool_id: "gpu-lab",
  });
  await user.call("drainNode", { node_id: spare.nodeId, draining: true });
  const done = await user.call("submitJob", {
    type: "shell",
    name: "nightly report",
    command: ["sh", "-c", "make report"],
    pool_id: "gpu-lab",
  });
  await worker.poll(10);
  await worker.client.call("pushLogs", {
    job_id: done.job_id,
    attempt: 1,
    lines: logLines(1, 6, (seq) => `report step ${seq} done`),
  });
  await worker.finish(done.job_id);
  const running = await user.call("submitJob", {
    type: "shell",
    name: "train model",
    command: ["python", "train.py", "--epochs", "20"],
    pool_id: "gpu-lab",
  });
  await worker.poll(10);
  await worker.client.call("pushLogs", {
    job_id: running.job_id,
    attempt: 1,
    lines: logLines(1, 24, (seq) => `epoch ${Math.ceil(seq / 2)}/20 batch ${seq}: loss ${(2 / seq).toFixed(4)}`),
  });
  await user.call("submitJob", {
    type: "shell",
    name: "waits for a node",
    command: ["echo", "hi"],
    pool_id: "empty-pool",
  });
  await user.call("createApiKey", {
    name: "ci pipeline",
    maxJobsPerHour: 200,
    scopes: ["jobs:read", "jobs:write"],
    budget_credits_per_month: 50,
  });
  await user.call("createApiKey", {
    name: "dashboard (read only)",
    scopes: ["jobs:read", "nodes:read", "billing:read"],
  });

  const shoot = async (page: Page, name: string, size: string) =>
    page.screenshot({ path: `${OUT}/${name}-${size}.png` });
  for (const size of SIZES) {
    const signedOut = await stack.browser.newPage({ viewport: size, baseURL: baseUrl });
    await signedOut.goto("/");
    await signedOut.getByRole("heading", { name: "Sign in" }).waitFor();
    await shoot(signedOut, "sign-in", size.name);
    await signedOut.close();

    const page = stack.page;
    await page.setViewportSize(size);
    if (size === SIZES[0]) await signIn(page, tenant);
    await page.goto("/jobs");
    await page.locator("tr", { hasText: "train model" }).waitFor();
    await shoot(page, "jobs", size.name);
    await page.goto(`/jobs/${running.job_id}`);
    await page.locator(".log-line", { hasText: "batch 24" }).waitFor();
    await shoot(page, "job", size.name);
    await page.goto("/keys");
    await page.locator("tr", { hasText: "ci pipeline" }).waitFor();
    await shoot(page, "keys", size.name);
    await page.goto("/nodes");
    await page.locator("tr", { hasText: "worker-2" }).waitFor();
    await shoot(page, "nodes", size.name);
    await page.goto("/billing");
    await page.getByTestId("current-plan").waitFor();
    await shoot(page, "billing", size.name);
  }
  process.stdout.write(`screenshots written to ${OUT}/\n`);
} finally {
  await stack.stop();
}
