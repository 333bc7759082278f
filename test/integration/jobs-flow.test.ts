import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { errorCodeOf } from "../harness/error-code.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";
import { runningJob } from "../harness/running-job.js";

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

async function registerNode(pool: string, overrides: Record<string, unknown> = {}) {
  const registered = await user.call("registerNode", {
    name: `node-${pool}`,
    hostname: "host.local",
    pool_id: pool,
    capacity: { cpu: 4, memory_mb: 4096, gpu: 0, slots: 2 },
    agent_version: "test",
    ...overrides,
  });
  const node = new ComputeClient({
    baseUrl: system.gateways[1]!.baseUrl,
    appId: tenant.app.app_id,
    apiKey: registered.api_key,
  });
  return { registered, node };
}

describe("a job's life over HTTP", () => {
  it("is queued, assigned to a node that polls, runs, and ends with its result", async () => {
    const { node } = await registerNode("flow");
    const submitted = await user.call("submitJob", { type: "shell", command: ["echo", "hi"], pool_id: "flow" });
    expect(submitted.state).toBe("queued");

    const polled = await node.call("poll", { wait_seconds: 10 });
    expect(polled.jobs).toHaveLength(1);
    expect(polled.jobs[0]).toMatchObject({ job_id: submitted.job_id, attempt: 1, command: ["echo", "hi"] });
    expect((await runningJob(user, submitted.job_id)).state).toBe("running");

    const result = await node.call("result", { job_id: submitted.job_id, attempt: 1, outcome: "failed", exit_code: 3 });
    expect(result).toEqual({ job_id: submitted.job_id, attempt: 1, state: "failed", duplicate: false });
    const again = await node.call("result", { job_id: submitted.job_id, attempt: 1, outcome: "failed", exit_code: 3 });
    expect(again.duplicate).toBe(true);

    const { job } = await user.call("retrieveJob", { job_id: submitted.job_id });
    expect(job).toMatchObject({ state: "failed", exit_code: 3, attempt: 1, error: { code: "job.exit_nonzero" } });
    expect(job.timeline.map((event) => event.state)).toEqual(["queued", "assigned", "running", "failed"]);
  });

  it("says why a job waits when no node of its pool exists", async () => {
    const submitted = await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "empty-pool" });
    await expect
      .poll(async () => (await user.call("retrieveJob", { job_id: submitted.job_id })).job.pending_reason, {
        timeout: 10_000,
      })
      .toBe("no_nodes_in_pool");
  });

  it("refuses to cancel a finished job with 409 and its state, and retries it as the next attempt", async () => {
    const { node } = await registerNode("retry");
    const submitted = await user.call("submitJob", { type: "shell", command: ["false"], pool_id: "retry" });
    const [assignment] = (await node.call("poll", { wait_seconds: 10 })).jobs;
    await node.call("result", {
      job_id: submitted.job_id,
      attempt: assignment!.attempt,
      outcome: "failed",
      exit_code: 1,
    });
    const refused = await user.raw("POST", "/api/compute/jobs/cancel", { job_id: submitted.job_id });
    expect(refused.status).toBe(409);
    expect(refused.body).toMatchObject({ code: "state.conflict", details: { state: "failed" } });

    const retried = await user.call("retryJob", { job_id: submitted.job_id });
    expect(retried.job.state).toBe("queued");
    const [second] = (await node.call("poll", { wait_seconds: 10 })).jobs;
    expect(second).toMatchObject({ job_id: submitted.job_id, attempt: 2 });
    expect(
      await errorCodeOf(
        node.call("result", { job_id: submitted.job_id, attempt: 1, outcome: "succeeded", exit_code: 0 }),
      ),
    ).toBe("job.stale_attempt");
    await node.call("result", { job_id: submitted.job_id, attempt: 2, outcome: "succeeded", exit_code: 0 });
    expect((await user.call("retrieveJob", { job_id: submitted.job_id })).job.state).toBe("succeeded");
  });

  it("lists jobs newest first with a stable cursor", async () => {
    const ids = [];
    for (let index = 0; index < 5; index += 1)
      ids.push((await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "listing" })).job_id);
    const first = await user.call("listJobs", { pool_id: "listing", limit: 2 });
    expect(first.items.map((item) => item.job_id)).toEqual([ids[4], ids[3]]);
    await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "listing" });
    const second = await user.call("listJobs", { pool_id: "listing", limit: 2, cursor: first.next_cursor! });
    expect(second.items.map((item) => item.job_id)).toEqual([ids[2], ids[1]]);
  });
});
