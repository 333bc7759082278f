/**
 * The retry path on a 3-node NATS cluster with R3 buckets and two schedulers: a job in its
 * retry backoff survives the loss of a NATS node and of a scheduler replica, and its next
 * attempt runs once the backoff is over, exactly once.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ComputeClient } from "../harness/client.js";
import { FakeNode } from "../harness/fake-node.js";
import { retryCode } from "../harness/node-driver.js";
import { startNatsCluster, type NatsClusterHarness } from "../harness/nats-cluster.js";
import { createTenant, signedInClient, startSystem, type RunningSystem } from "../harness/system.js";

const POOL = "cluster-retry";

let cluster: NatsClusterHarness;
let system: RunningSystem;
let user: ComputeClient;
let node: FakeNode;

beforeAll(async () => {
  cluster = await startNatsCluster();
  system = await startSystem(
    cluster.url,
    { gateways: 2, schedulers: 2, registries: 1 },
    { CJS_NATS_REPLICAS: String(cluster.replicas) },
  );
  const tenant = await createTenant(system.gateways[0]!.nc);
  ({ client: user } = await signedInClient(system.gateways[0]!.baseUrl, tenant));
  node = await FakeNode.register(user, system.gateways[1]!.baseUrl, tenant.app.app_id, { pool_id: POOL });
}, 120_000);

afterAll(async () => {
  await system?.stop();
  await cluster?.stop();
});

/** Long-polls (through refusals while the cluster heals) until the node is given `attempt` of `jobId`. */
async function pollFor(jobId: string, attempt: number) {
  await expect
    .poll(
      async () => {
        await node.poll(2).catch(() => undefined);
        return node.running.get(jobId)?.attempt;
      },
      { timeout: 60_000, interval: 1 },
    )
    .toBe(attempt);
}

/** `call`'s answer, asked again while the healing cluster refuses with a retryable error, as an agent or an SDK user would (a repeated result is answered as the recorded one). */
async function throughRefusals<T>(call: () => Promise<T>): Promise<T> {
  let answer: { value: T } | undefined;
  const answered = () =>
    call().then(
      (value) => {
        answer = { value };
        return true;
      },
      (error: unknown) => (retryCode(error) === null ? Promise.reject(error as Error) : false),
    );
  await expect.poll(answered, { timeout: 60_000, interval: 100 }).toBe(true);
  return answer!.value;
}

describe("retry backoff on a cluster", () => {
  it("a job waiting out its backoff runs its next attempt after a NATS node and a scheduler replica are lost", async () => {
    const { job_id: jobId } = await user.call("submitJob", {
      type: "shell",
      command: ["flaky"],
      pool_id: POOL,
      retry: { max_retries: 1, backoff: { initial_seconds: 3, factor: 1, max_seconds: 3, jitter: 0 } },
    });
    await pollFor(jobId, 1);
    await throughRefusals(() => node.finish(jobId, "failed", 1));
    expect((await user.call("retrieveJob", { job_id: jobId })).job).toMatchObject({
      state: "queued",
      pending_reason: "retry_backoff",
    });

    await cluster.kill(1);
    await system.schedulers[0]!.crash();
    await cluster.restart(1);

    await pollFor(jobId, 2);
    await throughRefusals(() => node.finish(jobId, "succeeded", 2));
    const { job } = await throughRefusals(() => user.call("retrieveJob", { job_id: jobId }));
    expect(job).toMatchObject({ state: "succeeded", attempt: 2, retry_count: 1 });
    expect(job.timeline.filter((event) => event.state === "assigned").map((event) => event.attempt)).toEqual([1, 2]);
    const retry = job.timeline.find((event) => event.reason === "retry_scheduled")!;
    const assigned = job.timeline.find((event) => event.state === "assigned" && event.attempt === 2)!;
    expect(Date.parse(assigned.at)).toBeGreaterThanOrEqual(Date.parse(retry.next_attempt_at!));
    // Polls and results of up to a minute each while the cluster heals and the lease moves: bounded by those, not by the default.
  }, 240_000);
});
