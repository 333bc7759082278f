/**
 * Dependencies over HTTP on the real stack: a job with `depends_on` waits until its
 * parents succeed, ends `cancelled` with `job.dependency_failed` when one does not (and
 * its own dependents after it), and a job left waiting for a parent that already ended (a
 * submit or resolver that stopped midway, written here by hand) is settled by the repair
 * pass.
 */
import { Kvm } from "@nats-io/kv";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Scheduler } from "../../services/scheduler/scheduler.js";
import { newJobId } from "../../services/scheduler/jobs/submit-job.js";
import { BUCKETS, JsonBucket } from "../../shared/nats/index.js";
import { JobRecord, jobKey, selfHostedPoolKey } from "../../shared/records/index.js";
import { metricsRegistry } from "../../shared/runtime/index.js";
import type { ComputeClient } from "../harness/client.js";
import { failureOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { queuedJobRecord } from "../harness/job-records.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;
let nc: NatsConnection;
let jobs: JsonBucket<typeof JobRecord>;

beforeAll(async () => {
  nats = await startNats();
  // The repair pass runs only when a test asks for it: the crash test shows that it, not the watch, settles the job.
  system = await startSystem(nats.url, undefined, { CJS_REPAIR_INTERVAL_MS: "3600000" });
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
  nc = await connect({ servers: nats.url });
  jobs = new JsonBucket(await new Kvm(nc).open(BUCKETS.jobs), JobRecord);
}, 120_000);

afterAll(async () => {
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

async function jobOf(jobId: string) {
  return (await user.call("retrieveJob", { job_id: jobId })).job;
}

async function submit(pool: string, dependsOn?: string[]): Promise<string> {
  return (
    await user.call("submitJob", {
      type: "shell",
      command: ["true"],
      pool_id: pool,
      ...(dependsOn ? { depends_on: dependsOn } : {}),
    })
  ).job_id;
}

function nodeIn(pool: string): Promise<FakeNode> {
  return FakeNode.register(user, system.gateways[1]!.baseUrl, tenant.app.app_id, { name: pool, pool_id: pool });
}

async function repairs(kind: string): Promise<number> {
  const metric = await metricsRegistry.getSingleMetric("cjs_job_repairs_total")?.get();
  return metric?.values.find((value) => value.labels.kind === kind)?.value ?? 0;
}

describe("a job with depends_on", () => {
  it("waits with waiting_for_dependencies while a parent has not succeeded, then runs; each parent lists it as a dependent", async () => {
    const node = await nodeIn("deps-wait");
    const [first, second] = [await submit("deps-wait"), await submit("deps-wait")];
    const child = await submit("deps-wait", [first, second]);
    expect((await jobOf(child)).pending_reason).toBe("waiting_for_dependencies");
    expect((await jobOf(first)).dependents).toEqual([child]);
    expect((await jobOf(second)).dependents).toEqual([child]);

    // The node has room for four: it is given the parents and not the child.
    await expect
      .poll(
        async () => {
          await node.poll();
          return node.running.size;
        },
        { timeout: 10_000, interval: 50 },
      )
      .toBe(2);
    expect([...node.running.keys()].sort()).toEqual([first, second].sort());
    await node.finish(first);
    expect(await jobOf(child)).toMatchObject({
      state: "queued",
      pending_reason: "waiting_for_dependencies",
      depends_on: [first, second],
    });

    await node.finish(second);
    await expect
      .poll(async () => (await node.poll()).map((job) => job.job_id), { timeout: 10_000, interval: 50 })
      .toEqual([child]);
    await node.finish(child);
    const done = await jobOf(child);
    expect(done.state).toBe("succeeded");
    expect(done.timeline.map((event) => event.reason)).toEqual([
      "submitted",
      "released",
      "assigned",
      "started",
      "exited",
    ]);
  });

  it("ends cancelled with job.dependency_failed when a parent fails, and its own dependents after it", async () => {
    const node = await nodeIn("deps-fail");
    const parent = await submit("deps-fail");
    const child = await submit("deps-fail", [parent]);
    const grandchild = await submit("deps-fail", [child]);
    await expect
      .poll(async () => (await node.poll()).map((job) => job.job_id), { timeout: 10_000, interval: 50 })
      .toEqual([parent]);
    await node.finish(parent, "failed");

    await expect.poll(async () => (await jobOf(grandchild)).state, { timeout: 10_000, interval: 50 }).toBe("cancelled");
    const [cancelledChild, cancelledGrandchild] = [await jobOf(child), await jobOf(grandchild)];
    expect(cancelledChild).toMatchObject({
      state: "cancelled",
      pending_reason: null,
      attempt: 0,
      error: { code: "job.dependency_failed" },
    });
    expect(cancelledChild.error?.message).toContain(parent);
    expect(cancelledChild.timeline.at(-1)).toMatchObject({ state: "cancelled", reason: "dependency_failed" });
    expect(cancelledGrandchild.error?.code).toBe("job.dependency_failed");
    expect(cancelledGrandchild.error?.message).toContain(child);
    expect(await node.poll()).toEqual([]);
  });

  it("ends cancelled when a parent is cancelled", async () => {
    const parent = await submit("deps-no-nodes");
    const child = await submit("deps-no-nodes", [parent]);
    await user.call("cancelJob", { job_id: parent });
    await expect
      .poll(async () => (await jobOf(child)).error?.code, { timeout: 10_000, interval: 50 })
      .toBe("job.dependency_failed");
  });

  it("on a parent that already failed is created cancelled; on one that already succeeded it does not wait", async () => {
    const cancelled = await submit("deps-no-nodes");
    await user.call("cancelJob", { job_id: cancelled });
    const late = await user.call("submitJob", {
      type: "shell",
      command: ["true"],
      pool_id: "deps-no-nodes",
      depends_on: [cancelled],
    });
    expect(late.state).toBe("cancelled");
    expect((await jobOf(late.job_id)).error?.code).toBe("job.dependency_failed");

    const node = await nodeIn("deps-done");
    const parent = await submit("deps-done");
    await expect
      .poll(async () => (await node.poll()).map((job) => job.job_id), { timeout: 10_000, interval: 50 })
      .toEqual([parent]);
    await node.finish(parent);
    const child = await submit("deps-done", [parent]);
    await expect
      .poll(async () => (await node.poll()).map((job) => job.job_id), { timeout: 10_000, interval: 50 })
      .toEqual([child]);
    expect((await jobOf(child)).timeline.map((event) => event.reason)).not.toContain("released");
  });

  it("refuses a job of another business like a missing one (404 naming it) and leaves that job unchanged; an id given twice is 400", async () => {
    const neighbour = await createTenant(system.gateways[0]!.nc, { appId: tenant.app.app_id });
    const { client: other } = await signedInClient(system.gateways[0]!.baseUrl, neighbour);
    const theirs = (await other.call("submitJob", { type: "shell", command: ["true"], pool_id: "deps-no-nodes" }))
      .job_id;
    const missing = newJobId(Date.now());

    for (const id of [theirs, missing]) {
      const refused = await failureOf(
        user.call("submitJob", { type: "shell", command: ["true"], pool_id: "deps-no-nodes", depends_on: [id] }),
      );
      expect(refused).toMatchObject({ status: 404, code: "resource.not_found", details: { job_id: id } });
    }
    expect((await other.call("retrieveJob", { job_id: theirs })).job.dependents).toEqual([]);

    const mine = await submit("deps-no-nodes");
    const twice = await failureOf(
      user.call("submitJob", { type: "shell", command: ["true"], pool_id: "deps-no-nodes", depends_on: [mine, mine] }),
    );
    expect(twice).toMatchObject({ status: 400, code: "request.invalid" });
  });
});

describe("the repair pass", () => {
  /** A waiting job written as a submit that stopped after its record would leave it: its parent not told. */
  async function strandedChild(parentId: string): Promise<string> {
    const jobId = newJobId(Date.now());
    const record = queuedJobRecord({
      job_id: jobId,
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      user_id: tenant.user.user_id,
      pool_id: "deps-repair",
      pool_key: selfHostedPoolKey(tenant.business.business_id, "deps-repair"),
      depends_on: [parentId],
      waiting_on: [parentId],
      created_at: new Date().toISOString(),
    });
    await jobs.create(jobKey(tenant.app.app_id, tenant.business.business_id, jobId), record);
    return jobId;
  }

  async function repairNow(): Promise<void> {
    for (const scheduler of system.schedulers) await (scheduler.service as Scheduler).repairNow();
  }

  it("settles jobs still waiting for parents that already ended: released after a success, cancelled after a failure", async () => {
    const node = await nodeIn("deps-repair");
    const succeeded = await submit("deps-repair");
    await expect
      .poll(async () => (await node.poll()).map((job) => job.job_id), { timeout: 10_000, interval: 50 })
      .toEqual([succeeded]);
    await node.finish(succeeded);
    const failed = await submit("deps-repair");
    await expect
      .poll(async () => (await node.poll()).map((job) => job.job_id), { timeout: 10_000, interval: 50 })
      .toEqual([failed]);
    await node.finish(failed, "failed");

    const released = await strandedChild(succeeded);
    const doomed = await strandedChild(failed);
    // The parents' ends came before these records: no watch event will settle them.
    expect((await jobOf(released)).pending_reason).toBe("waiting_for_dependencies");
    const before = await repairs("dependency_unsettled");

    // Asked again until the placing replica's watch has brought the hand-written records.
    await expect
      .poll(
        async () => {
          await repairNow();
          return [
            (await jobOf(doomed)).state,
            (await jobOf(released)).timeline.some((event) => event.reason === "released"),
          ];
        },
        { timeout: 10_000, interval: 100 },
      )
      .toEqual(["cancelled", true]);

    expect(await repairs("dependency_unsettled")).toBe(before + 2);
    expect((await jobOf(doomed)).error?.code).toBe("job.dependency_failed");
    await expect
      .poll(async () => (await node.poll()).map((job) => job.job_id), { timeout: 10_000, interval: 50 })
      .toEqual([released]);
    expect((await jobOf(released)).timeline.map((event) => event.reason)).toContain("released");
  });

  it("adds a waiting job missing from its parent's dependents", async () => {
    const parent = await submit("deps-no-nodes");
    const child = await strandedChild(parent);
    expect((await jobOf(parent)).dependents).toEqual([]);
    await expect
      .poll(
        async () => {
          await repairNow();
          return (await jobOf(parent)).dependents;
        },
        { timeout: 10_000, interval: 100 },
      )
      .toEqual([child]);
    expect((await jobOf(child)).state).toBe("queued");
  });
});
