import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import { jetstreamManager } from "@nats-io/jetstream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OBJECT_STORES } from "../../shared/nats/index.js";
import type { ComputeClient } from "../harness/client.js";
import { NATS_TOPOLOGIES, type RunningNats } from "../harness/nats-topologies.js";
import { createTenant, signedInClient, startSystemOn, type RunningSystem, type Tenant } from "../harness/system.js";

/**
 * Each business's artifact storage budget (its plan's `max_artifact_bytes`): a business at
 * its budget is refused with 413 `artifacts.quota_exceeded`, and stores nothing, while
 * another business uploads as usual; deleting an artifact, or the job that holds it (the
 * purge retention runs), gives its bytes back. Counted over both gateway replicas: bytes
 * uploaded through one are refused through the other. On one server and on the 3-node cluster.
 */
const BUDGET_BYTES = 64 * 1024;
const KIB = 1024;

describe.each(NATS_TOPOLOGIES)("artifact storage budgets, on $name", (topology) => {
  let nats: RunningNats;
  let system: RunningSystem;
  let plansDir: string;

  beforeAll(async () => {
    plansDir = await mkdtemp(join(tmpdir(), "cjs-artifact-budget-"));
    const plans = JSON.parse(await readFile("services/billing/plans.json", "utf8")) as {
      plans: Array<{ limits: Record<string, number> }>;
    };
    for (const plan of plans.plans) plan.limits.max_artifact_bytes = BUDGET_BYTES;
    const plansFile = join(plansDir, "plans.json");
    await writeFile(plansFile, JSON.stringify(plans));
    ({ nats, system } = await startSystemOn(
      topology,
      { gateways: 2, schedulers: 1, registries: 1 },
      { CJS_BILLING_PLANS_FILE: plansFile },
    ));
  }, 120_000);

  afterAll(async () => {
    await system?.stop();
    await nats?.stop();
    await rm(plansDir, { recursive: true, force: true });
  });

  async function signedIn(): Promise<{ tenant: Tenant; user: ComputeClient }> {
    const tenant = await createTenant(system.gateways[0]!.nc);
    const { client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant);
    return { tenant, user };
  }

  /** A queued job (no node needed to hold artifacts). */
  async function queuedJob(user: ComputeClient): Promise<string> {
    return (await user.call("submitJob", { type: "shell", command: ["true"], pool_id: "no-nodes" })).job_id;
  }

  /**
   * PUTs `body` to a presigned upload URL through gateway `through` (the signature covers
   * the path and query, not the host); the status and envelope code.
   */
  async function upload(
    user: ComputeClient,
    jobId: string,
    artifactId: string,
    body: Uint8Array | Readable,
    through = 0,
  ): Promise<{ status: number; code: string | undefined; details: unknown }> {
    const { url } = await user.call("presignUpload", { job_id: jobId, artifact_id: artifactId });
    const signed = new URL(url);
    const target = `${system.gateways[through]!.baseUrl}${signed.pathname}${signed.search}`;
    const response = await fetch(target, {
      method: "PUT",
      body: body instanceof Readable ? (Readable.toWeb(body) as ReadableStream) : body,
      duplex: "half",
      redirect: "error",
    } as RequestInit);
    const envelope = (await response.json()) as { code?: string; details?: unknown };
    return { status: response.status, code: envelope.code, details: envelope.details };
  }

  const bytes = (count: number) => new Uint8Array(count).fill(7);
  const listed = async (user: ComputeClient, jobId: string) =>
    (await user.call("listArtifacts", { job_id: jobId })).artifacts.map((artifact) => artifact.artifact_id);

  it("refuses a business at its budget with artifacts.quota_exceeded while another business uploads", async () => {
    const full = await signedIn();
    const other = await signedIn();
    const jobId = await queuedJob(full.user);

    expect((await upload(full.user, jobId, "first.bin", bytes(40 * KIB))).status).toBe(200);
    // Counted over the replicas: the second gateway knows the first one's upload.
    expect(await upload(full.user, jobId, "second.bin", bytes(30 * KIB), 1)).toEqual({
      status: 413,
      code: "artifacts.quota_exceeded",
      details: { max_bytes: BUDGET_BYTES, used_bytes: 40 * KIB },
    });
    // Streamed without a Content-Length: refused once past the room left, mid-body.
    const streamed = await upload(full.user, jobId, "streamed.bin", Readable.from([bytes(16 * KIB), bytes(16 * KIB)]));
    expect([streamed.status, streamed.code]).toEqual([413, "artifacts.quota_exceeded"]);
    expect(await listed(full.user, jobId)).toEqual(["first.bin"]);

    // The other business has a budget of its own, through either gateway.
    const otherJob = await queuedJob(other.user);
    expect((await upload(other.user, otherJob, "big.bin", bytes(60 * KIB), 0)).status).toBe(200);
    expect((await upload(other.user, otherJob, "small.bin", bytes(4 * KIB), 1)).status).toBe(200);
    expect(await listed(other.user, otherJob)).toEqual(["big.bin", "small.bin"]);
  });

  it("counts a new version of a name less the one it replaces, and gives back what is deleted", async () => {
    const { user } = await signedIn();
    const jobId = await queuedJob(user);
    expect((await upload(user, jobId, "report.bin", bytes(40 * KIB))).status).toBe(200);
    // 40 KiB kept; a 60 KiB version of the same name replaces them: 60 KiB in all.
    expect((await upload(user, jobId, "report.bin", bytes(60 * KIB), 1)).status).toBe(200);
    expect((await upload(user, jobId, "extra.bin", bytes(8 * KIB))).code).toBe("artifacts.quota_exceeded");

    await user.call("deleteArtifact", { job_id: jobId, artifact_id: "report.bin" });
    expect((await upload(user, jobId, "extra.bin", bytes(60 * KIB), 1)).status).toBe(200);
  });

  it("gives back a job's artifacts when the job is deleted (the purge retention runs)", async () => {
    const { user } = await signedIn();
    const held = await queuedJob(user);
    expect((await upload(user, held, "a.bin", bytes(32 * KIB))).status).toBe(200);
    expect((await upload(user, held, "b.bin", bytes(32 * KIB), 1)).status).toBe(200);
    const next = await queuedJob(user);
    expect((await upload(user, next, "c.bin", bytes(1 * KIB))).code).toBe("artifacts.quota_exceeded");

    await user.call("cancelJob", { job_id: held });
    await user.call("deleteJob", { job_id: held });
    expect((await upload(user, next, "c.bin", bytes(64 * KIB), 1)).status).toBe(200);
  });

  it("a full artifact store refuses uploads with a retryable 503, while submits go on", async () => {
    const { user } = await signedIn();
    const jobId = await queuedJob(user);
    const jsm = await jetstreamManager(system.gateways[0]!.nc);
    const stream = `OBJ_${OBJECT_STORES.artifacts}`;
    const { config, state } = await jsm.streams.info(stream);
    // The store made full as if every tenant together had filled it.
    await jsm.streams.update(stream, { ...config, max_bytes: state.bytes + 1024 });
    try {
      expect(await upload(user, jobId, "late.bin", bytes(8 * KIB))).toEqual({
        status: 503,
        code: "service.unavailable",
        details: { reason: "artifact_store_full" },
      });
      expect(await listed(user, jobId)).toEqual([]);
      expect((await queuedJob(user)).length).toBeGreaterThan(0);
    } finally {
      await jsm.streams.update(stream, config);
    }
  });
});
