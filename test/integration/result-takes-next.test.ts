import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";
import { runningJob } from "../harness/running-job.js";

/**
 * A node's result may take the next job for the slot it frees (`take_next`), as BullMQ's
 * worker completes a job and fetches the next in one call: the answer carries the next
 * attempt, already started, with its upload URL, and nothing else has to happen for the
 * node to run it. One scheduler replica, so the result meets the queue that holds the job.
 */
let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
});

afterAll(async () => {
  await system?.stop();
  await nats?.stop();
});

async function oneSlotNodeRunning(pool: string) {
  const node = await FakeNode.register(user, system.gateways[0]!.baseUrl, tenant.app.app_id, {
    pool_id: pool,
    capacity: { cpu: 4, memory_mb: 4096, gpu: 0, slots: 1 },
  });
  const first = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool })).job_id;
  await node.take(first);
  const second = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool })).job_id;
  // The node's one slot is taken: the second job waits for it.
  await expect
    .poll(async () => (await user.call("retrieveJob", { job_id: second })).job.pending_reason)
    .toBe("all_nodes_busy");
  return { node, first, second };
}

describe("a result that takes the next job", () => {
  it("is answered with the waiting job, started on the node, its upload URL signed", async () => {
    const { node, first, second } = await oneSlotNodeRunning("take-next");
    const answer = await node.client.call("result", {
      job_id: first,
      attempt: 1,
      outcome: "succeeded",
      exit_code: 0,
      take_next: true,
    });
    expect(answer).toMatchObject({ job_id: first, state: "succeeded", duplicate: false });
    expect(answer.next).toMatchObject({ job_id: second, attempt: 1, command: ["true"] });
    expect(answer.next?.artifact_upload_url).toContain(`/${second}/`);
    const { job } = await user.call("retrieveJob", { job_id: second });
    expect(job).toMatchObject({ state: "running", attempt: 1, node_id: node.nodeId });
    // Its timeline says what happened, in one write: assigned, then started.
    expect(job.timeline.slice(-2).map((event) => event.state)).toEqual(["assigned", "running"]);
    // The node holds it: a poll that names what it runs has nothing new, and lists it as held.
    const polled = await node.client.call("poll", { wait_seconds: 0, known: [{ job_id: second, attempt: 1 }] });
    expect(polled).toMatchObject({ jobs: [], held: [{ job_id: second, attempt: 1 }] });
  });

  it("without take_next frees the slot only: the next job reaches the node by its poll", async () => {
    const { node, first, second } = await oneSlotNodeRunning("no-take-next");
    const answer = await node.client.call("result", { job_id: first, attempt: 1, outcome: "succeeded", exit_code: 0 });
    expect(answer.next).toBeUndefined();
    await node.take(second);
    expect(await runningJob(user, second)).toMatchObject({ state: "running", attempt: 1 });
  });

  it("is answered without a next job when none waits, and the slot is free for the next one queued", async () => {
    const pool = "take-next-idle";
    const node = await FakeNode.register(user, system.gateways[0]!.baseUrl, tenant.app.app_id, {
      pool_id: pool,
      capacity: { cpu: 4, memory_mb: 4096, gpu: 0, slots: 1 },
    });
    const only = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool })).job_id;
    await node.take(only);
    const answer = await node.client.call("result", {
      job_id: only,
      attempt: 1,
      outcome: "succeeded",
      exit_code: 0,
      take_next: true,
    });
    expect(answer.next).toBeUndefined();
    const later = (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool })).job_id;
    await node.take(later);
    expect(await runningJob(user, later)).toMatchObject({ state: "running" });
  });
});
