/**
 * A placement round that fails because the broker is gone (here: nats-server SIGKILLed
 * just as a held job falls due) is planned again once the broker is back. Nothing else
 * announces that moment, so a round lost to the broker must not leave the job queued
 * for ever: the lease holder tries again after a short backoff (10 ms doubling to 1 s).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { FakeNode } from "../harness/fake-node.js";
import { LogCapture } from "../harness/log-capture.js";
import { ManualClock } from "../harness/manual-clock.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";
import { runningJob } from "../harness/running-job.js";

const POOL = "round-failure";

let nats: NatsHarness;
let system: RunningSystem;
let user: ComputeClient;
let node: FakeNode;
const logs = new LogCapture();
const clock = new ManualClock();
// Long enough that the lease holder keeps its lease through the outage: regaining it would plan a round by itself.
const LEASE_MS = "600000";

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(
    nats.url,
    { gateways: 1, schedulers: 1, registries: 1 },
    { CJS_PARTITION_LEASE_MS: LEASE_MS },
    { schedulerClock: clock, loggerFor: (service) => logs.logger(service) },
  );
  const tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
  node = await FakeNode.register(user, system.gateways[0]!.baseUrl, tenant.app.app_id, { pool_id: POOL });
}, 60_000);

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

describe("a placement round lost to the broker", () => {
  it("is planned again once the broker is back: the job that fell due meanwhile is placed", async () => {
    const runAt = clock.now() + 60_000;
    const { job_id: jobId } = await user.call("submitJob", {
      type: "shell",
      command: ["true"],
      pool_id: POOL,
      run_at: new Date(runAt).toISOString(),
    });
    expect((await user.call("retrieveJob", { job_id: jobId })).job).toMatchObject({
      state: "queued",
      pending_reason: "scheduled",
    });

    // The broker dies; the job falls due; the next tick's round cannot read or write and fails (after the client's request timeout).
    const mark = logs.mark();
    await nats.kill();
    clock.advance(61_000);
    await logs.waitFor(
      (line) => line.service === "scheduler" && line.msg?.startsWith("placement round failed") === true,
      mark,
    );
    await nats.restart();

    await expect
      .poll(async () => (await node.poll(2).catch(() => [])).some((job) => job.job_id === jobId), {
        timeout: 30_000,
        interval: 1,
      })
      .toBe(true);
    expect(await runningJob(user, jobId)).toMatchObject({ state: "running", attempt: 1 });
  }, 120_000);
});
