/**
 * `jobs/submit` with `dry_run: true` against a real nats-server and the real services: it
 * answers what a submit would do (the nodes that fit, or why the job would wait; the cost
 * at the plan's rates; the credit, key-quota and rate-limit room; a refusal) through the
 * same checks, and creates, admits and counts nothing.
 */
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ComputeClient } from "../harness/client.js";
import { DryRunResponse, type RpcRequest } from "../../shared/contract/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { startNats, type NatsHarness } from "../harness/nats-server.js";
import { createTenant, signedInClient, startSystem, type RunningSystem, type Tenant } from "../harness/system.js";

const OPERATOR_POOL = "op-dry";
/** The plans file's default plan ("free"). */
const FREE_RATES = { cpu_core_hour: 1, memory_gb_hour: 0.1, gpu_hour: 20 };
const ENV = { CJS_OPERATOR_POOLS: `default,${OPERATOR_POOL}` };

let nats: NatsHarness;
let nc: NatsConnection;
let system: RunningSystem;
let operator: ComputeClient;
let operatorAppId: string;
let customer: Tenant;
let user: ComputeClient;

beforeAll(async () => {
  nats = await startNats();
  system = await startSystem(nats.url, { gateways: 1, schedulers: 1, registries: 1 }, ENV);
  nc = await connect({ servers: nats.url, name: "test-dry-run" });
  const operatorTenant = await createTenant(nc, { operator: true });
  ({ client: operator } = await signedInClient(system.gateways[0]!.baseUrl, operatorTenant));
  operatorAppId = operatorTenant.app.app_id;
  customer = await createTenant(nc, { appId: operatorAppId });
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, customer));
}, 60_000);

afterAll(async () => {
  await nc?.close();
  await system?.stop();
  await nats?.stop();
});

function job(pool: string, overrides: Partial<RpcRequest<"submitJob">> = {}): RpcRequest<"submitJob"> {
  return {
    type: "shell",
    command: ["true"],
    pool_id: pool,
    resources: { cpu: 1, memory_mb: 1024, gpu: 0 },
    ...overrides,
  };
}

/** A dry run of `body` by `client`, its answer checked against the dry run's schema. */
async function dryRun(client: ComputeClient, body: RpcRequest<"submitJob">): Promise<DryRunResponse> {
  return DryRunResponse.parse(await client.call("submitJob", { ...body, dry_run: true }));
}

async function jobsIn(client: ComputeClient, pool: string): Promise<string[]> {
  return (await client.call("listJobs", { pool_id: pool })).items.map((item) => item.job_id);
}

describe("a dry run of a submit", () => {
  it("lists the nodes of the pool that would take the job now, and creates nothing", async () => {
    const node = await FakeNode.register(user, system.gateways[0]!.baseUrl, customer.app.app_id, {
      pool_id: "own-fit",
    });
    await expect
      .poll(async () => (await dryRun(user, job("own-fit"))).placement.nodes.map((listed) => listed.node_id), {
        timeout: 10_000,
      })
      .toEqual([node.nodeId]);

    const answer = await dryRun(user, job("own-fit"));
    expect(answer).toMatchObject({
      dry_run: true,
      would_queue: true,
      refusal: null,
      placement: {
        pending_reason: null,
        nodes: [{ node_id: node.nodeId, pool_id: "own-fit", free: { slots: 4, cpu: 8, memory_mb: 16_384, gpu: 0 } }],
      },
      // The business's own pool is never charged; a signed-in user has no key quotas.
      cost: null,
      credit: null,
      key_quota: null,
    });
    expect(await jobsIn(user, "own-fit")).toEqual([]);
    expect(await node.poll()).toEqual([]);
  });

  it("answers why the job would wait when no node would take it, or when its run_at is ahead", async () => {
    expect((await dryRun(user, job("own-nowhere"))).placement).toEqual({
      nodes: [],
      pending_reason: "no_nodes_in_pool",
    });

    const node = await FakeNode.register(user, system.gateways[0]!.baseUrl, customer.app.app_id, {
      pool_id: "own-labels",
    });
    await expect
      .poll(async () => (await dryRun(user, job("own-labels"))).placement.nodes.length, { timeout: 10_000 })
      .toBe(1);
    expect((await dryRun(user, job("own-labels", { labels: { gpu: "a100" } }))).placement).toEqual({
      nodes: [],
      pending_reason: "no_node_with_labels",
    });

    const later = new Date(Date.now() + 3_600_000).toISOString();
    const scheduled = await dryRun(user, job("own-labels", { run_at: later }));
    expect(scheduled.placement.pending_reason).toBe("scheduled");
    expect(scheduled.placement.nodes.map((listed) => listed.node_id)).toEqual([node.nodeId]);
    expect(await jobsIn(user, "own-labels")).toEqual([]);
  });

  it("reads depends_on and a concurrency key as a submit would: a missing job, parents done or not, a parent that failed, a full key", async () => {
    const node = await FakeNode.register(user, system.gateways[0]!.baseUrl, customer.app.app_id, {
      pool_id: "own-deps",
    });
    await expect
      .poll(async () => (await dryRun(user, job("own-deps"))).placement.nodes.length, { timeout: 10_000 })
      .toBe(1);
    const started = async (overrides: Partial<RpcRequest<"submitJob">> = {}) => {
      const { job_id } = await user.call("submitJob", job("own-deps", overrides));
      await expect
        .poll(async () => (await node.poll(1)).some((assigned) => assigned.job_id === job_id), {
          timeout: 10_000,
          interval: 1,
        })
        .toBe(true);
      return job_id;
    };
    const succeeded = await started();
    await node.finish(succeeded, "succeeded");
    const running = await started({ concurrency: { key: "deploy", max_running: 1 } });

    const missing = await user.raw("POST", "/api/compute/jobs/submit", {
      ...job("own-deps", { depends_on: ["job_00000000000000000000"] }),
      dry_run: true,
    });
    expect({ status: missing.status, code: (missing.body as { code: string }).code }).toEqual({
      status: 404,
      code: "resource.not_found",
    });
    expect((await dryRun(user, job("own-deps", { depends_on: [succeeded] }))).placement.pending_reason).toBeNull();
    expect((await dryRun(user, job("own-deps", { depends_on: [succeeded, running] }))).placement.pending_reason).toBe(
      "waiting_for_dependencies",
    );
    // The key "deploy" has its one place taken: a second job of it would wait; one of another key would not.
    expect(await dryRun(user, job("own-deps", { concurrency: { key: "deploy", max_running: 1 } }))).toMatchObject({
      would_queue: true,
      placement: { pending_reason: "concurrency_limit" },
    });
    expect(
      (await dryRun(user, job("own-deps", { concurrency: { key: "other", max_running: 1 } }))).placement.pending_reason,
    ).toBeNull();

    await node.finish(running, "failed");
    const afterFailure = await dryRun(user, job("own-deps", { depends_on: [succeeded, running] }));
    expect(afterFailure).toMatchObject({ would_queue: false, refusal: { code: "job.dependency_failed" } });
    expect(afterFailure.refusal!.message).toContain(running);
    expect(await jobsIn(user, "own-deps")).toHaveLength(2);
  });

  it("answers with its own message, not a submit's", async () => {
    const answer = await user.raw("POST", "/api/compute/jobs/submit", { ...job("own-message"), dry_run: true });
    expect(answer.body).toMatchObject({ status: "SUCCESS", message: "Dry run: nothing was created" });
  });

  it("shows the key's quota room without taking any, and the refusal a submit at the limit would get", async () => {
    const created = await user.call("createApiKey", { name: "dry quota", maxJobsPerHour: 3, maxConcurrentJobs: 1 });
    const keyClient = new ComputeClient({
      baseUrl: system.gateways[0]!.baseUrl,
      appId: customer.app.app_id,
      apiKey: created.key,
    });

    const first = await dryRun(keyClient, job("own-quota"));
    expect(first.key_quota).toEqual({ jobs_per_hour_left: 3, concurrent_jobs_left: 1, job_type_allowed: true });
    expect((await dryRun(keyClient, job("own-quota"))).key_quota).toEqual(first.key_quota);

    await keyClient.call("submitJob", job("own-quota"));
    const atLimit = await dryRun(keyClient, job("own-quota"));
    expect(atLimit).toMatchObject({
      would_queue: false,
      refusal: { code: "quota.concurrent_jobs_exceeded" },
      key_quota: { jobs_per_hour_left: 2, concurrent_jobs_left: 0, job_type_allowed: true },
    });
    expect(await jobsIn(user, "own-quota")).toHaveLength(1);
  });

  it("on an operator pool shows the cost per hour at the plan's rates and the credit left, and leaves the credit as it was", async () => {
    const node = await FakeNode.register(operator, system.gateways[0]!.baseUrl, operatorAppId, {
      pool_id: OPERATOR_POOL,
    });
    const before = (await user.call("listLedger", {})).balance;

    await expect
      .poll(async () => (await dryRun(user, job(OPERATOR_POOL))).placement.nodes.map((listed) => listed.node_id), {
        timeout: 10_000,
      })
      .toEqual([node.nodeId]);
    const answer = await dryRun(user, job(OPERATOR_POOL));
    expect(answer).toMatchObject({
      would_queue: true,
      refusal: null,
      // 1 core × 1 + 1 GB × 0.1 credits an hour.
      cost: { estimated_per_hour: 1.1, unit: "credits", plan_id: "free", rates: FREE_RATES },
      credit: { remaining: before, billed: true },
    });
    expect((await user.call("listLedger", {})).balance).toBe(before);
    expect(await jobsIn(user, OPERATOR_POOL)).toEqual([]);
  });

  it("answers a job billing would refuse with the refusal, not an error", async () => {
    const answer = await dryRun(user, job(OPERATOR_POOL, { resources: { cpu: 4, memory_mb: 1024, gpu: 0 } }));
    expect(answer).toMatchObject({
      would_queue: false,
      refusal: { code: "plan.limit_exceeded" },
      cost: null,
      credit: null,
    });
    const submitted = await user.raw(
      "POST",
      "/api/compute/jobs/submit",
      job(OPERATOR_POOL, { resources: { cpu: 4, memory_mb: 1024, gpu: 0 } }),
    );
    expect(submitted.body).toMatchObject({ code: "plan.limit_exceeded" });
  });

  it("counts as one call against the rate limit, and shows the room left after it", async () => {
    const first = await user.raw("POST", "/api/compute/jobs/submit", { ...job("own-rate"), dry_run: true });
    const second = await user.raw("POST", "/api/compute/jobs/submit", { ...job("own-rate"), dry_run: true });
    const roomOf = (response: typeof first) =>
      DryRunResponse.parse((response.body as { payload: unknown }).payload).rate_limit!;
    const [before, after] = [roomOf(first), roomOf(second)];
    expect(before).toMatchObject({ window: "minute", limit: 1000 });
    expect(after.remaining).toBe(before.remaining - 1);
    expect(second.headers.get("ratelimit-remaining")).toBe(String(after.remaining));
  });

  it("refuses a body or credential exactly as a submit does", async () => {
    const typed = await user.call("createApiKey", { name: "dry types", allowedJobTypes: ["python"] });
    const typedClient = new ComputeClient({
      baseUrl: system.gateways[0]!.baseUrl,
      appId: customer.app.app_id,
      apiKey: typed.key,
    });
    const cases: Array<{ client: ComputeClient; body: Record<string, unknown> }> = [
      { client: user, body: { type: "shell", pool_id: "own-invalid" } },
      { client: user, body: job("own-invalid", { timeout_seconds: 8 * 86_400 }) },
      { client: typedClient, body: job("own-invalid") },
    ];
    for (const { client, body } of cases) {
      const submitted = await client.raw("POST", "/api/compute/jobs/submit", body);
      const dry = await client.raw("POST", "/api/compute/jobs/submit", { ...body, dry_run: true });
      expect(submitted.status).toBeGreaterThanOrEqual(400);
      expect({ status: dry.status, code: (dry.body as { code: string }).code }).toEqual({
        status: submitted.status,
        code: (submitted.body as { code: string }).code,
      });
    }
    expect(await jobsIn(user, "own-invalid")).toEqual([]);
  });

  it("is one of the submit's two answers in /openapi.json", async () => {
    const document = (await (await fetch(`${system.gateways[0]!.baseUrl}/openapi.json`)).json()) as {
      paths: Record<
        string,
        {
          post: {
            responses: Record<
              string,
              { content: Record<string, { schema: { properties: { payload: { oneOf?: unknown[] } } } }> }
            >;
          };
        }
      >;
    };
    const payload =
      document.paths["/api/compute/jobs/submit"]!.post.responses["200"]!.content["application/json"]!.schema.properties
        .payload;
    expect(payload.oneOf).toHaveLength(2);
  });
});
