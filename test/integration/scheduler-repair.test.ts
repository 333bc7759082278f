/**
 * The repair sweep: the scheduler does not trust the broker blindly. Each test breaks one
 * promise by hand, as a lost or skipped write would (nats-server#4320 did exactly this on
 * a cluster before 2.9.21), and expects the sweep to find it and repair it by
 * compare-and-set, counted in `cjs_job_repairs_total`.
 */
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { BUCKETS, JsonBucket } from "../../shared/nats/index.js";
import { AllocationRecord } from "../../shared/records/index.js";
import { metricsRegistry } from "../../shared/runtime/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { NATS_TOPOLOGIES, type RunningNats } from "../harness/nats-topologies.js";
import {
  createTenant,
  signedInClient,
  startScheduler,
  startSystem,
  type RunningService,
  type RunningSystem,
  type Tenant,
} from "../harness/system.js";

describe.each(NATS_TOPOLOGIES)("the repair sweep on $name", (topology) => {
  /** Sweeps often, and trusts a change after half a second: the tests wait for conditions, not for the clock. */
  let repairSettings: Record<string, string>;
  let nats: RunningNats;
  let system: RunningSystem;
  let tenant: Tenant;
  let user: ComputeClient;
  let nc: NatsConnection;
  let allocations: JsonBucket<typeof AllocationRecord>;

  beforeAll(async () => {
    nats = await topology.start();
    repairSettings = {
      CJS_REPAIR_INTERVAL_MS: "100",
      CJS_REPAIR_GRACE_MS: "500",
      CJS_NATS_REPLICAS: String(nats.replicas),
    };
    system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 }, repairSettings);
    tenant = await createTenant(system.gateways[0]!.nc);
    ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
    nc = await connect({ servers: nats.url.split(",") });
    allocations = new JsonBucket(await new Kvm(nc).open(BUCKETS.allocations), AllocationRecord);
  }, 120_000);

  afterAll(async () => {
    await nc?.close();
    await system?.stop();
    await nats?.stop();
  });

  async function repairs(kind: string): Promise<number> {
    const metric = await metricsRegistry.getSingleMetric("cjs_job_repairs_total")?.get();
    return metric?.values.find((value) => value.labels.kind === kind)?.value ?? 0;
  }

  async function jobOf(jobId: string) {
    return (await user.call("retrieveJob", { job_id: jobId })).job;
  }

  /** Removes the job's reservation from its node's allocation record, as a lost write would. */
  async function loseReservation(nodeId: string, jobId: string): Promise<void> {
    const changed = await allocations.mutate(nodeId, (allocation) => {
      const { [jobId]: _lost, ...rest } = allocation.attempts;
      return { ...allocation, attempts: rest };
    });
    expect(changed?.value.attempts[jobId]).toBeUndefined();
  }

  async function submitTo(pool: string): Promise<string> {
    return (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool })).job_id;
  }

  it("requeues an assigned job whose reservation was lost, and the job then runs to the end", async () => {
    const node = await FakeNode.register(user, system.gateways[0]!.baseUrl, tenant.app.app_id, {
      name: "a",
      pool_id: "repair-assigned",
    });
    const jobId = await submitTo("repair-assigned");
    await expect.poll(async () => (await jobOf(jobId)).state, { timeout: 10_000, interval: 50 }).toBe("assigned");
    const before = await repairs("assigned_unreserved");

    await loseReservation(node.nodeId, jobId);

    // Requeued with a reason in the timeline, then placed again as attempt 2.
    await expect
      .poll(async () => (await jobOf(jobId)).timeline.map((event) => event.reason), { timeout: 15_000, interval: 100 })
      .toContain("reservation_missing");
    expect(await repairs("assigned_unreserved")).toBe(before + 1);
    await expect
      .poll(async () => (await node.poll()).map((job) => job.attempt), { timeout: 15_000, interval: 100 })
      .toEqual([2]);
    await node.finish(jobId);
    const finished = await jobOf(jobId);
    expect(finished).toMatchObject({ state: "succeeded", attempt: 2 });
    // The reservation of attempt 2 is released with its end, like any other (in the node's next write, or a moment later).
    await expect.poll(async () => (await allocations.get(node.nodeId))?.value.attempts[jobId]).toBeUndefined();
  });

  it("writes back the reservation of a running job, and the job keeps running", async () => {
    const node = await FakeNode.register(user, system.gateways[0]!.baseUrl, tenant.app.app_id, {
      name: "r",
      pool_id: "repair-running",
    });
    const jobId = await submitTo("repair-running");
    await expect.poll(async () => (await node.poll()).length, { timeout: 10_000, interval: 50 }).toBe(1);
    const before = await repairs("running_unreserved");

    await loseReservation(node.nodeId, jobId);

    await expect
      .poll(async () => (await allocations.get(node.nodeId))?.value.attempts[jobId]?.attempt, {
        timeout: 15_000,
        interval: 100,
      })
      .toBe(1);
    expect(await repairs("running_unreserved")).toBe(before + 1);
    expect(await jobOf(jobId)).toMatchObject({ state: "running", attempt: 1 });
    await node.finish(jobId);
    expect((await jobOf(jobId)).state).toBe("succeeded");
  });

  it("places a job that was queued before any running scheduler started, from the bucket alone", async () => {
    const pool = "repair-queued";
    const jobId = await submitTo(pool);
    await expect
      .poll(async () => (await jobOf(jobId)).pending_reason, { timeout: 10_000, interval: 50 })
      .toBe("no_nodes_in_pool");
    // No scheduler runs now: nothing holds the job but its record.
    await system.schedulers[0]!.stop();

    let scheduler: RunningService | undefined;
    try {
      scheduler = await startScheduler(nats.url, repairSettings);
      const node = await FakeNode.register(user, system.gateways[0]!.baseUrl, tenant.app.app_id, {
        name: "q",
        pool_id: pool,
      });
      await expect
        .poll(async () => (await node.poll()).map((job) => job.job_id), { timeout: 15_000, interval: 100 })
        .toEqual([jobId]);
      await node.finish(jobId);
      expect((await jobOf(jobId)).state).toBe("succeeded");
    } finally {
      await scheduler?.stop();
    }
  });
});
