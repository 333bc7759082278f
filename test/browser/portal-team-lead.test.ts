import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Page } from "playwright-core";
import { FakeNode } from "../harness/fake-node.js";
import { ManualClock } from "../harness/manual-clock.js";
import { fitsWidth, signIn, SIZES, startPortalStack, type PortalStack } from "./portal-stack.js";
import { cronOf, DAY_MS, type PastRun, playPastRuns } from "./schedule-history.js";

/**
 * The "done when", walked in the portal alone at a laptop's and a phone's width:
 * a team lead finds last week's failed runs of one schedule, sees why each failed and how
 * long it ran, and runs one again.
 *
 * The history is made beforehand through the API with the scheduler's clock moved by
 * hand: the schedule "nightly etl" ticks 8, 5, 3 and 2 days ago; the runs 8 (too old to
 * count), 5 and 2 days ago fail, the one 3 days ago succeeds; a job that is not the
 * schedule's fails in the same week. Then the clock comes back to now.
 */
const POOL = "etl";
const clock = new ManualClock(Date.now() - 9 * DAY_MS);
let stack: PortalStack;
let node: FakeNode;

const RUNS: PastRun[] = [
  { daysAgo: 8, ranMs: 60_000, outcome: "failed", exitCode: 1, lines: [["stderr", "disk full"]] },
  {
    daysAgo: 5,
    ranMs: 250_000,
    outcome: "failed",
    exitCode: 3,
    lines: [
      ["stdout", "loading orders"],
      ["stdout", "loaded 120000 rows"],
      ["stderr", "warehouse: connection refused (10.0.4.2:5432)"],
    ],
  },
  { daysAgo: 3, ranMs: 300_000, outcome: "succeeded", exitCode: 0, lines: [["stdout", "done"]] },
  {
    daysAgo: 2,
    ranMs: 720_000,
    outcome: "failed",
    exitCode: 137,
    error: { code: "etl.out_of_memory", message: "Killed: the loader used more than 2048 MB." },
    lines: [
      ["stdout", "loading orders"],
      ["stderr", "MemoryError while joining customers"],
    ],
  },
];
/** The runs of the last week that failed, newest first: what the walk must find. */
const FAILED_THIS_WEEK = [RUNS[3]!, RUNS[1]!];
let jobOf: Map<PastRun, string>;

beforeAll(async () => {
  stack = await startPortalStack({ env: { CJS_SCHEDULE_CHECK_INTERVAL_MS: "100" }, schedulerClock: clock });
  node = await FakeNode.register(stack.user, stack.baseUrl, stack.tenant.app.app_id, {
    name: "etl-worker",
    pool_id: POOL,
  });
  const { schedule } = await stack.user.call("createSchedule", {
    name: "nightly etl",
    cron: cronOf(RUNS),
    timezone: "UTC",
    job: { type: "shell", name: "nightly etl", command: ["./etl.sh", "--full"], pool_id: POOL },
  });
  jobOf = await playPastRuns(stack.user, clock, node, schedule.schedule_id, RUNS);

  // Another job failing the same week, not the schedule's: the walk must not find it.
  const { job_id: other } = await stack.user.call("submitJob", {
    type: "shell",
    name: "ad hoc backfill",
    command: ["./backfill.sh"],
    pool_id: POOL,
  });
  await node.take(other);
  await node.finish(other, "failed");
  clock.advance(Date.now() - clock.now());
}, 120_000);

afterAll(async () => {
  await stack?.stop();
});

/** The runs the list shows now, by job id. */
async function listed(page: Page): Promise<string[]> {
  return page.locator("table.runs tbody tr").evaluateAll((rows) => rows.map((row) => row.getAttribute("data-job-id")!));
}

describe.each(SIZES)("a team lead at a $name's width", (size) => {
  it("finds last week's failed runs of one schedule, sees why each failed and how long it ran, and runs one again", async () => {
    const page = await stack.newPage(size);
    await signIn(page, stack.tenant);

    // Find: the schedule, the failed state, the last 7 days, with the list's own filters.
    await page.getByText("More filters").click();
    await page.getByLabel("Schedule").selectOption({ label: "nightly etl" });
    await page.waitForURL(/schedule=sch_/);
    await page.getByRole("checkbox", { name: "failed", exact: true }).check();
    await page.waitForURL(/state=failed/);
    await page.getByRole("button", { name: "7 days" }).click();
    await page.waitForURL(/after=/);
    const expected = FAILED_THIS_WEEK.map((run) => jobOf.get(run)!);
    await expect.poll(() => listed(page), { timeout: 15_000 }).toEqual(expected);
    const query = new URL(page.url()).search;

    // How long each ran, in the list.
    for (const run of FAILED_THIS_WEEK) {
      const row = page.locator(`tr[data-job-id="${jobOf.get(run)}"]`);
      expect(await row.locator('td[data-col="ran"]').textContent()).toContain(
        run.ranMs === 250_000 ? "4 min 10 s" : "12 min",
      );
      expect(await row.locator('td[data-col="exit"]').textContent()).toContain(String(run.exitCode));
    }
    expect(await fitsWidth(page)).toBe(true);

    // Why each failed, on its page; back to the same filtered list in between.
    for (const run of FAILED_THIS_WEEK) {
      const jobId = jobOf.get(run)!;
      await page.locator(`tr[data-job-id="${jobId}"]`).getByRole("link").click();
      await page.waitForURL(`**/jobs/${jobId}`);
      const why = page.getByTestId("job-error");
      await why.waitFor();
      expect(await why.textContent()).toContain(run.error?.code ?? "job.exit_nonzero");
      if (run.error) expect(await why.textContent()).toContain(run.error.message);
      expect(await page.getByTestId("ran-for").textContent()).toBe(run.ranMs === 250_000 ? "4 min 10 s" : "12 min");
      const stderr = run.lines.find(([stream]) => stream === "stderr")![1];
      await page.getByRole("log", { name: "Log lines" }).locator(".log-text", { hasText: stderr }).waitFor();
      await page.goBack();
      await page.waitForURL((url) => url.pathname === "/jobs" && url.search === query);
      await expect.poll(() => listed(page)).toEqual(expected);
    }

    // Run one again: a new job with the same spec, linked to the failed one.
    const failed = jobOf.get(RUNS[3]!)!;
    await page.locator(`tr[data-job-id="${failed}"]`).getByRole("link").click();
    await page.getByRole("button", { name: "Run again" }).click();
    await page.waitForURL((url) => /\/jobs\/job_/.test(url.pathname) && !url.pathname.endsWith(failed));
    const again = new URL(page.url()).pathname.split("/").pop()!;
    await page.getByTestId("rerun-of").getByRole("link", { name: "nightly etl" }).waitFor();
    const { job } = await stack.user.call("retrieveJob", { job_id: again });
    expect(job).toMatchObject({
      name: "nightly etl",
      command: ["./etl.sh", "--full"],
      pool_id: POOL,
      metadata: { rerun_of: failed },
    });
    await page.getByTestId("rerun-of").getByRole("link").click();
    await page.waitForURL(`**/jobs/${failed}`);
    await page.getByTestId("reruns").getByRole("link", { name: "nightly etl" }).first().waitFor();
    await page.context().close();
  });
});

describe("the pages of the walk", () => {
  it("threw no error and broke no rule of the portal's Content-Security-Policy", () => {
    expect(stack.problems).toEqual([]);
  });
});
