/**
 * Screenshots of the portal's pages for docs/ and the README (`npm run screenshots`; not
 * part of the test run). Starts the real stack, fills it with a schedule's week of runs,
 * running, waiting and retried jobs, a webhook, keys, nodes and a second user, and saves
 * each page at a laptop's and a phone's size under docs/screenshots/.
 */
import { mkdir } from "node:fs/promises";
import type { Page } from "playwright-core";
import { FakeNode } from "../harness/fake-node.js";
import { logLines } from "../harness/log-jobs.js";
import { ManualClock } from "../harness/manual-clock.js";
import { startWebhookReceiver } from "../harness/webhook-receiver.js";
import { signIn, SIZES, startPortalStack } from "./portal-stack.js";
import { cronOf, DAY_MS, type PastRun, playPastRuns } from "./schedule-history.js";

const OUT = "docs/screenshots";
const WEEK: PastRun[] = [
  { daysAgo: 6, ranMs: 312_000, outcome: "succeeded", exitCode: 0, lines: [["stdout", "report sent"]] },
  {
    daysAgo: 5,
    ranMs: 95_000,
    outcome: "failed",
    exitCode: 2,
    lines: [
      ["stdout", "fetching sales for 2026-11-21"],
      ["stderr", "warehouse: connection refused (10.0.4.2:5432)"],
    ],
  },
  { daysAgo: 4, ranMs: 298_000, outcome: "succeeded", exitCode: 0, lines: [["stdout", "report sent"]] },
  { daysAgo: 3, ranMs: 305_000, outcome: "succeeded", exitCode: 0, lines: [["stdout", "report sent"]] },
  {
    daysAgo: 2,
    ranMs: 1_260_000,
    outcome: "failed",
    exitCode: 137,
    error: { code: "report.out_of_memory", message: "Killed: the renderer used more than 4096 MB." },
    lines: [
      ["stdout", "fetching sales for 2026-11-24"],
      ["stdout", "rendering 48 charts"],
      ["stderr", "MemoryError while rendering chart 31"],
    ],
  },
  { daysAgo: 1, ranMs: 301_000, outcome: "succeeded", exitCode: 0, lines: [["stdout", "report sent"]] },
];

const clock = new ManualClock(Date.now() - 7 * DAY_MS);
const stack = await startPortalStack({ env: { CJS_SCHEDULE_CHECK_INTERVAL_MS: "100" }, schedulerClock: clock });
// A receiver that is down: its log shows tries answered 500 and the next one due.
const receiver = await startWebhookReceiver(() => 500);
try {
  await mkdir(OUT, { recursive: true });
  const { user, baseUrl, tenant } = stack;
  const appId = tenant.app.app_id;

  // Two nodes of the pool gpu-lab, the second draining.
  const worker = await FakeNode.register(user, baseUrl, appId, {
    name: "worker-1",
    hostname: "worker-1.lan",
    pool_id: "gpu-lab",
    labels: { gpu: "a100" },
  });
  const spare = await FakeNode.register(user, baseUrl, appId, {
    name: "worker-2",
    hostname: "worker-2.lan",
    pool_id: "gpu-lab",
  });
  await user.call("drainNode", { node_id: spare.nodeId, draining: true });

  // A schedule's week: ticks at 02:00, two of them failing.
  const { schedule } = await user.call("createSchedule", {
    name: "nightly report",
    cron: cronOf(WEEK),
    timezone: "UTC",
    job: { type: "shell", name: "nightly report", command: ["sh", "-c", "make report"], pool_id: "gpu-lab" },
  });
  const week = await playPastRuns(user, clock, worker, schedule.schedule_id, WEEK);
  const failedRun = week.get(WEEK[4]!)!;
  clock.advance(Date.now() - clock.now());

  // A job that failed once and succeeded when retried.
  const { job_id: flaky } = await user.call("submitJob", {
    type: "shell",
    name: "import orders",
    command: ["./import.sh"],
    pool_id: "gpu-lab",
  });
  await worker.take(flaky);
  await worker.client.call("pushLogs", {
    job_id: flaky,
    attempt: 1,
    lines: logLines(1, 3, (seq) => (seq === 3 ? "error: upstream timed out" : `importing batch ${seq}`)),
  });
  await worker.finish(flaky, "failed");
  await user.call("retryJob", { job_id: flaky });
  await worker.take(flaky);
  await worker.client.call("pushLogs", {
    job_id: flaky,
    attempt: 2,
    lines: logLines(1, 4, (seq) => `importing batch ${seq}`),
  });
  await worker.finish(flaky, "succeeded");

  // One running with its log, one waiting for labels no node carries.
  const running = await user.call("submitJob", {
    type: "shell",
    name: "train model",
    command: ["python", "train.py", "--epochs", "20"],
    pool_id: "gpu-lab",
    labels: { gpu: "a100" },
    metadata: { team: "research", commit: "4f2a9c1" },
  });
  await worker.take(running.job_id);
  await worker.client.call("pushLogs", {
    job_id: running.job_id,
    attempt: 1,
    lines: logLines(1, 24, (seq) => `epoch ${Math.ceil(seq / 2)}/20 batch ${seq}: loss ${(2 / seq).toFixed(4)}`),
  });
  await user.call("submitJob", {
    type: "shell",
    name: "waits for a node",
    command: ["echo", "hi"],
    pool_id: "gpu-lab",
    labels: { team: "data" },
  });

  const { webhook } = await user.call("createWebhook", {
    url: receiver.url,
    events: ["job.failed", "job.timed_out"],
    description: "alerts",
  });
  await user.call("testWebhook", { webhook_id: webhook.webhook_id });
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
  await user.call("inviteUser", { email: "ada@example.test", role: "member" });

  const shoot = async (page: Page, name: string, size: string) =>
    page.screenshot({ path: `${OUT}/${name}-${size}.png` });
  for (const size of SIZES) {
    const page = await stack.newPage(size);
    await page.goto("/");
    await page.getByRole("heading", { name: "Sign in" }).waitFor();
    await shoot(page, "sign-in", size.name);
    await signIn(page, tenant);

    await page.locator("tr", { hasText: "train model" }).locator('td[data-col="ran"]', { hasText: /s$/ }).waitFor();
    await shoot(page, "jobs", size.name);
    await page.goto(`/jobs/${running.job_id}`);
    await page.locator(".log-text", { hasText: "batch 24" }).waitFor();
    await shoot(page, "job", size.name);
    await page.goto(`/jobs/${failedRun}`);
    await page.getByTestId("log-end").waitFor();
    await shoot(page, "job-failed", size.name);
    await page.goto("/submit");
    await page.getByLabel("Command, one argument per line").fill("python\ntrain.py");
    await page.getByLabel("Pool").fill("gpu-lab");
    await page.getByLabel("Labels (node selectors), key=value per line").fill("team=data");
    await page.getByTestId("dry-run-placement").filter({ hasText: "It would wait" }).waitFor();
    await page.getByTestId("dry-run").scrollIntoViewIfNeeded();
    await shoot(page, "submit", size.name);
    await page.goto("/schedules");
    await page.getByTestId("cron-preview").locator("time").first().waitFor();
    await shoot(page, "schedules", size.name);
    await page.goto(`/schedules/${schedule.schedule_id}`);
    await page
      .getByRole("table", { name: "Runs of the schedule" })
      .locator("tbody tr")
      .nth(WEEK.length - 1)
      .waitFor();
    await shoot(page, "schedule", size.name);
    await page.goto(`/webhooks/${webhook.webhook_id}`);
    await page.getByTestId("last-answer").filter({ hasText: "HTTP 500" }).waitFor();
    await shoot(page, "webhook", size.name);
    await page.goto("/users");
    await page.locator("tr", { hasText: "ada@example.test" }).waitFor();
    await shoot(page, "users", size.name);
    await page.goto("/usage");
    await page.locator("tr", { hasText: "ci pipeline" }).waitFor();
    await shoot(page, "usage", size.name);
    await page.goto("/keys");
    await page.locator("tr", { hasText: "ci pipeline" }).waitFor();
    await shoot(page, "keys", size.name);
    await page.goto("/nodes");
    await page.locator("tr", { hasText: "worker-2" }).waitFor();
    await shoot(page, "nodes", size.name);
    await page.goto("/billing");
    await page.getByTestId("current-plan").waitFor();
    await shoot(page, "billing", size.name);
    await page.context().close();
  }
  if (stack.problems.length > 0) throw new Error(`the pages had problems:\n${stack.problems.join("\n")}`);
  process.stdout.write(`screenshots written to ${OUT}/\n`);
} finally {
  await receiver.close();
  await stack.stop();
}
