/**
 * `run_at` over HTTP on the whole system: a time in the past or more than a year ahead is
 * refused on the field; a future one holds the job (`scheduled`) until then, and a node
 * polling all along is given it only once the time has come.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { failureOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";
import { runningJob } from "../harness/running-job.js";

const DAY_MS = 86_400_000;

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url);
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

function submitAt(pool: string, runAt: number) {
  return user.call("submitJob", {
    type: "shell",
    command: ["true"],
    pool_id: pool,
    run_at: new Date(runAt).toISOString(),
  });
}

describe("run_at", () => {
  it.each([
    ["in the past", -60_000],
    ["more than a year ahead", 366 * DAY_MS],
  ])("%s is 400 request.invalid on run_at", async (_, offsetMs) => {
    const refused = await failureOf(submitAt("run-at-refused", Date.now() + offsetMs));
    expect(refused).toMatchObject({
      status: 400,
      code: "request.invalid",
      details: { issues: [expect.objectContaining({ path: "run_at" })] },
    });
    expect((await user.call("listJobs", { pool_id: "run-at-refused" })).items).toEqual([]);
  });

  it("in the future: the job waits as scheduled, and runs once its time has come", async () => {
    const node = await FakeNode.register(user, system.gateways[1]!.baseUrl, tenant.app.app_id, { pool_id: "run-at" });
    const runAt = Date.now() + 2000;
    const submitted = await submitAt("run-at", runAt);
    expect(submitted.state).toBe("queued");
    const waiting = (await user.call("retrieveJob", { job_id: submitted.job_id })).job;
    expect(waiting).toMatchObject({
      state: "queued",
      pending_reason: "scheduled",
      run_at: new Date(runAt).toISOString(),
      next_attempt_at: new Date(runAt).toISOString(),
    });

    await expect
      .poll(async () => (await node.poll(2)).some((job) => job.job_id === submitted.job_id), {
        timeout: 20_000,
        interval: 1,
      })
      .toBe(true);
    const job = await runningJob(user, submitted.job_id);
    expect(job).toMatchObject({ state: "running", next_attempt_at: null });
    const assigned = job.timeline.find((event) => event.state === "assigned")!;
    expect(Date.parse(assigned.at)).toBeGreaterThanOrEqual(runAt);
  });

  it("a scheduled job can be cancelled before its time", async () => {
    const submitted = await submitAt("run-at-cancel", Date.now() + DAY_MS);
    expect((await user.call("cancelJob", { job_id: submitted.job_id })).job).toMatchObject({
      state: "cancelled",
      next_attempt_at: null,
      error: { code: "job.cancelled" },
    });
  });
});
