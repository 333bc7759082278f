import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { OBJECT_STORES } from "../../shared/nats/index.js";
import { errorCodeOf } from "../harness/error-code.js";
import { storedJobData, uploadArtifact } from "../harness/job-data.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

/** `jobs/artifacts/list` and `jobs/artifacts/delete` against one replica of each service. */
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

/** A queued job (no node needed to hold artifacts) with the named artifacts. */
async function jobWithArtifacts(...artifactIds: string[]): Promise<string> {
  const { job_id: jobId } = await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "no-nodes" });
  for (const artifactId of artifactIds) await uploadArtifact(user, jobId, artifactId, `bytes of ${artifactId}`);
  return jobId;
}

/** Messages of the object store's stream: chunks and metadata of every object. */
async function objectStoreMessages(): Promise<number> {
  const jsm = await jetstreamManager(system.gateways[0]!.nc);
  return (await jsm.streams.info(`OBJ_${OBJECT_STORES.artifacts}`)).state.messages;
}

describe("jobs/artifacts/list", () => {
  it("lists the job's artifacts by name, as retrieve shows them", async () => {
    const jobId = await jobWithArtifacts("b.txt", "a.txt");
    const listed = await user.call("listArtifacts", { job_id: jobId });
    const retrieved = await user.call("retrieveJob", { job_id: jobId });
    expect(listed.job_id).toBe(jobId);
    expect(listed.artifacts.map((artifact) => artifact.artifact_id)).toEqual(["a.txt", "b.txt"]);
    expect(listed.artifacts).toEqual(retrieved.artifacts);
  });
});

describe("jobs/artifacts/delete", () => {
  it("removes the artifact's bytes and its entry, leaving nothing of it in the object store; again answers 404", async () => {
    const jobId = await jobWithArtifacts("keep.txt", "drop.txt");
    const before = await objectStoreMessages();

    expect(await user.call("deleteArtifact", { job_id: jobId, artifact_id: "drop.txt" })).toEqual({
      job_id: jobId,
      artifact_id: "drop.txt",
    });

    expect(
      (await user.call("listArtifacts", { job_id: jobId })).artifacts.map((artifact) => artifact.artifact_id),
    ).toEqual(["keep.txt"]);
    // One chunk and one metadata message per small object: both gone, no "deleted" marker left behind.
    expect(await objectStoreMessages()).toBe(before - 2);
    expect(await errorCodeOf(user.call("presignDownload", { job_id: jobId, artifact_id: "drop.txt" }))).toBe(
      "resource.not_found",
    );
    expect(await errorCodeOf(user.call("deleteArtifact", { job_id: jobId, artifact_id: "drop.txt" }))).toBe(
      "resource.not_found",
    );
    expect(await errorCodeOf(user.call("deleteArtifact", { job_id: jobId, artifact_id: "never.txt" }))).toBe(
      "resource.not_found",
    );
  });

  it("answers 404 to another business of the same app and to another app, for list and delete, and deletes nothing", async () => {
    const jobId = await jobWithArtifacts("mine.txt");
    const gateway = system.gateways[0]!;
    for (const other of [
      await createTenant(gateway.nc, { appId: tenant.app.app_id }),
      await createTenant(gateway.nc),
    ]) {
      const { client } = await signedInClient(gateway.baseUrl, other);
      expect(await errorCodeOf(client.call("listArtifacts", { job_id: jobId }))).toBe("resource.not_found");
      expect(await errorCodeOf(client.call("deleteArtifact", { job_id: jobId, artifact_id: "mine.txt" }))).toBe(
        "resource.not_found",
      );
    }
    const ref = { app_id: tenant.app.app_id, business_id: tenant.business.business_id, job_id: jobId };
    expect((await storedJobData(gateway.nc, ref)).artifacts).toBe(1);
    expect(
      (await user.call("listArtifacts", { job_id: jobId })).artifacts.map((artifact) => artifact.artifact_id),
    ).toEqual(["mine.txt"]);
  });
});
