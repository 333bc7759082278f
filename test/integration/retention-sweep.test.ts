import { Kvm } from "@nats-io/kv";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { subscriptionKey, SubscriptionRecord } from "../../services/billing/subscriptions/subscription-record.js";
import type { Scheduler } from "../../services/scheduler/scheduler.js";
import type { ComputeClient } from "../harness/client.js";
import { BUCKETS, JsonBucket } from "../../shared/nats/index.js";
import { errorCodeOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { finishJobsWithData, storedJobData } from "../harness/job-data.js";
import { ManualClock } from "../harness/manual-clock.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

/**
 * Retention by plan: the schedulers' clock is moved by hand and each sweep is run by the
 * test (the timer's interval is an hour), against billing's plans as shipped (free keeps
 * finished jobs 30 days, team 90). Two replicas each sweep the job partitions they own; a
 * long partition lease keeps the split steady throughout on a busy machine.
 */
const DAY_MS = 86_400_000;
let nats: NatsHarness;
let system: RunningSystem;
const clock = new ManualClock();

interface Business {
  tenant: Tenant;
  user: ComputeClient;
  node: FakeNode;
  pool: string;
}

async function business(plan: "free" | "team"): Promise<Business> {
  const gateway = system.gateways[0]!;
  const tenant = await createTenant(gateway.nc);
  const { client: user } = await signedInClient(gateway.baseUrl, tenant);
  const pool = `retention-${plan}`;
  const node = await FakeNode.register(user, gateway.baseUrl, tenant.app.app_id, { pool_id: pool });
  if (plan !== "free") {
    const subscriptions = new JsonBucket(await new Kvm(gateway.nc).open(BUCKETS.subscriptions), SubscriptionRecord);
    const now = new Date().toISOString();
    await subscriptions.put(subscriptionKey(tenant.app.app_id, tenant.business.business_id), {
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      plan_id: plan,
      status: "active",
      cancel_at_period_end: false,
      cancel_requested_at: null,
      current_period_start: now,
      current_period_end: new Date(Date.now() + 365 * DAY_MS).toISOString(),
      provider: "sandbox",
      provider_customer_id: null,
      provider_subscription_id: null,
      last_event_id: null,
      last_event_at: null,
      created_at: now,
      updated_at: now,
    });
  }
  return { tenant, user, node, pool };
}

async function finishedJob(owner: Business): Promise<string> {
  const [jobId] = await finishJobsWithData(owner.user, owner.node, owner.pool, 1);
  return jobId!;
}

/** Runs one sweep on every scheduler replica: each sweeps the job partitions it owns, and between them every one. */
async function sweep(): Promise<void> {
  const swept = await Promise.all(
    system.schedulers.map((running) => (running.service as Scheduler).sweepRetentionNow()),
  );
  expect(swept.some(Boolean)).toBe(true);
}

async function kept(owner: Business, jobId: string): Promise<boolean> {
  const ref = { app_id: owner.tenant.app.app_id, business_id: owner.tenant.business.business_id, job_id: jobId };
  const data = await storedJobData(system.gateways[0]!.nc, ref);
  try {
    await owner.user.call("retrieveJob", { job_id: jobId });
  } catch {
    expect(await errorCodeOf(owner.user.call("retrieveJob", { job_id: jobId }))).toBe("resource.not_found");
    expect(data).toEqual({ logMessages: 0, artifacts: 0 });
    return false;
  }
  expect(data).toEqual({ logMessages: 1, artifacts: 1 });
  return true;
}

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(
    nats.url,
    { gateways: 1, schedulers: 2, registries: 1 },
    { CJS_RETENTION_SWEEP_INTERVAL_MS: "3600000", CJS_PARTITION_LEASE_MS: "10000" },
    { schedulerClock: clock },
  );
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

describe("retention sweep", () => {
  it("deletes a finished job with its logs and artifacts once its plan's retention has passed since it finished, and keeps the rest", async () => {
    const [free, team] = await Promise.all([business("free"), business("team")]);
    const freeOld = await finishedJob(free);
    const teamOld = await finishedJob(team);
    const { job_id: unfinished } = await free.user.call("submitJob", {
      type: "shell",
      command: ["echo"],
      pool_id: "no-nodes",
    });

    clock.advance(29 * DAY_MS);
    const freeRecent = await finishedJob(free);
    await sweep();
    expect(await kept(free, freeOld)).toBe(true);

    clock.advance(2 * DAY_MS);
    await sweep();
    expect(await kept(free, freeOld)).toBe(false);
    expect(await kept(free, freeRecent)).toBe(true);
    expect(await kept(team, teamOld)).toBe(true);
    expect((await free.user.call("retrieveJob", { job_id: unfinished })).job.state).toBe("queued");

    clock.advance(60 * DAY_MS);
    await sweep();
    expect(await kept(team, teamOld)).toBe(false);
    expect(await kept(free, freeRecent)).toBe(false);
    expect((await free.user.call("retrieveJob", { job_id: unfinished })).job.state).toBe("queued");
  });
});
