import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { requestRpc } from "../../shared/nats/index.js";
import { errorCodeOf, failureOf } from "../harness/error-code.js";
import { FakeNode } from "../harness/fake-node.js";
import { finishJobsWithData, storedJobData, uploadArtifact } from "../harness/job-data.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import {
  createTenant,
  signedInClient,
  startLogRelay,
  startSystem,
  type RunningService,
  type RunningSystem,
  type Tenant,
} from "../harness/system.js";

/** `jobs/delete` against one replica of each service: what goes, what is refused, and tenancy. */
let nats: NatsHarness;
let system: RunningSystem;
let tenant: Tenant;
let user: ComputeClient;
let node: FakeNode;
let restartedLogRelay: RunningService | undefined;
const POOL = "delete-pool";

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 });
  tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
  node = await FakeNode.register(user, system.gateways[0]!.baseUrl, tenant.app.app_id, {
    pool_id: POOL,
    capacity: { cpu: 32, memory_mb: 65_536, gpu: 0, slots: 16 },
  });
});

afterAll(async () => {
  await restartedLogRelay?.stop();
  await system?.stop();
  await nats?.stop();
});

const refOf = (jobId: string) => ({
  app_id: tenant.app.app_id,
  business_id: tenant.business.business_id,
  job_id: jobId,
});

describe("jobs/delete", () => {
  it("deletes a finished job with its log lines and artifacts; retrieve and a second delete then answer 404", async () => {
    const [jobId] = await finishJobsWithData(user, node, POOL, 1);
    // One log batch is stored as one message.
    expect(await storedJobData(system.gateways[0]!.nc, refOf(jobId!))).toEqual({ logMessages: 1, artifacts: 1 });

    expect(await user.call("deleteJob", { job_id: jobId! })).toEqual({ job_id: jobId });

    expect(await storedJobData(system.gateways[0]!.nc, refOf(jobId!))).toEqual({ logMessages: 0, artifacts: 0 });
    expect(await errorCodeOf(user.call("retrieveJob", { job_id: jobId! }))).toBe("resource.not_found");
    expect(await errorCodeOf(user.call("listArtifacts", { job_id: jobId! }))).toBe("resource.not_found");
    expect(await errorCodeOf(user.call("deleteJob", { job_id: jobId! }))).toBe("resource.not_found");
    const listed = await user.call("listJobs", {});
    expect(listed.items.map((job) => job.job_id)).not.toContain(jobId);
  });

  it("refuses a job that has not finished with 409 state.conflict naming its state, and keeps everything", async () => {
    const { job_id: jobId } = await user.call("submitJob", { type: "shell", command: ["echo"], pool_id: "no-nodes" });
    await uploadArtifact(user, jobId);

    const failure = await failureOf(user.call("deleteJob", { job_id: jobId }));
    expect(failure.code).toBe("state.conflict");
    expect(failure.details).toMatchObject({ state: "queued" });

    expect(
      (await user.call("retrieveJob", { job_id: jobId })).artifacts.map((artifact) => artifact.artifact_id),
    ).toEqual(["result.txt"]);
    await user.call("cancelJob", { job_id: jobId });
    await user.call("deleteJob", { job_id: jobId });
    expect(await storedJobData(system.gateways[0]!.nc, refOf(jobId))).toEqual({ logMessages: 0, artifacts: 0 });
  });

  it("lets a member of the business delete its jobs", async () => {
    const member = await requestRpc(system.gateways[0]!.nc, "adminUserCreate", {
      app_id: tenant.app.app_id,
      business_id: tenant.business.business_id,
      email: `member-${Date.now()}@example.test`,
      password: "member-password-1",
      role: "member",
    });
    const { client: memberClient } = await signedInClient(system.gateways[0]!.baseUrl, {
      ...tenant,
      user: member,
      password: "member-password-1",
    });
    const [jobId] = await finishJobsWithData(user, node, POOL, 1);
    expect(await memberClient.call("deleteJob", { job_id: jobId! })).toEqual({ job_id: jobId });
  });

  it("answers 404 to another business of the same app and to another app, and deletes nothing", async () => {
    const [jobId] = await finishJobsWithData(user, node, POOL, 1);
    const gateway = system.gateways[0]!;
    const sameApp = await createTenant(gateway.nc, { appId: tenant.app.app_id });
    const otherApp = await createTenant(gateway.nc);
    for (const other of [sameApp, otherApp]) {
      const { client } = await signedInClient(gateway.baseUrl, other);
      expect(await errorCodeOf(client.call("deleteJob", { job_id: jobId! }))).toBe("resource.not_found");
    }
    expect(await storedJobData(gateway.nc, refOf(jobId!))).toEqual({ logMessages: 1, artifacts: 1 });
    expect((await user.call("retrieveJob", { job_id: jobId! })).job.state).toBe("succeeded");
  });

  it("a delete cut off midway leaves the job retrievable without what went, and deleting again finishes it", async () => {
    const [jobId] = await finishJobsWithData(user, node, POOL, 1);
    // No log relay: the artifacts go, the lines cannot, so the record must stay.
    await system.logRelay.stop();
    expect(await errorCodeOf(user.call("deleteJob", { job_id: jobId! }))).toBe("service.unavailable");
    const retrieved = await user.call("retrieveJob", { job_id: jobId! });
    expect(retrieved.job.state).toBe("succeeded");
    expect(retrieved.artifacts).toEqual([]);
    expect(await storedJobData(system.gateways[0]!.nc, refOf(jobId!))).toEqual({ logMessages: 1, artifacts: 0 });

    restartedLogRelay = await startLogRelay(nats.url);
    expect(await user.call("deleteJob", { job_id: jobId! })).toEqual({ job_id: jobId });
    expect(await storedJobData(system.gateways[0]!.nc, refOf(jobId!))).toEqual({ logMessages: 0, artifacts: 0 });
    expect(await errorCodeOf(user.call("retrieveJob", { job_id: jobId! }))).toBe("resource.not_found");
  });
});
