import { ComputeClient } from "./client.js";
import type { Assignment, RpcRequest } from "../../shared/contract/index.js";

/**
 * A node driven by a test over the real HTTP node plane: registers, polls, heartbeats and
 * reports results when told to. It runs nothing; the test decides each outcome.
 */
export class FakeNode {
  private constructor(
    readonly nodeId: string,
    readonly client: ComputeClient,
    /** Its node key (a test may act as the node over another transport). */
    readonly apiKey: string,
    /** Attempts delivered to this node and not yet reported, by job id. */
    readonly running = new Map<string, Assignment>(),
  ) {}

  /** Registers with `user` (a signed-in client) and talks through `baseUrl` (any gateway replica). */
  static async register(
    user: Pick<ComputeClient, "call">,
    baseUrl: string,
    appId: string,
    overrides: Partial<RpcRequest<"registerNode">> = {},
  ): Promise<FakeNode> {
    const body: RpcRequest<"registerNode"> = {
      name: "fake",
      hostname: "fake.local",
      capacity: { cpu: 8, memory_mb: 16_384, gpu: 0, slots: 4 },
      agent_version: "fake-1",
      ...overrides,
    };
    const registered = await user.call("registerNode", body);
    return new FakeNode(
      registered.node_id,
      new ComputeClient({ baseUrl, appId, apiKey: registered.api_key }),
      registered.api_key,
    );
  }

  /** Polls once (optionally long) and remembers what it was given. */
  async poll(waitSeconds = 0): Promise<Assignment[]> {
    const { jobs } = await this.client.call("poll", { wait_seconds: waitSeconds });
    for (const job of jobs) this.running.set(job.job_id, job);
    return jobs;
  }

  /** Polls (heartbeating first, so the node stays live) until it holds the job's attempt; answers the attempt. */
  async take(jobId: string): Promise<Assignment> {
    await this.heartbeat();
    for (let polls = 0; !this.running.has(jobId); polls += 1) {
      if (polls >= 20) throw new Error(`job ${jobId} was not placed on its pool's node ${this.nodeId}`);
      await this.poll(1);
    }
    return this.running.get(jobId)!;
  }

  async heartbeat() {
    return this.client.call("heartbeat", {
      running: [...this.running.values()].map(({ job_id, attempt }) => ({ job_id, attempt })),
    });
  }

  /** Reports the outcome of a delivered attempt (or of any attempt, to test fencing). */
  async finish(
    jobId: string,
    outcome: "succeeded" | "failed" = "succeeded",
    attempt = this.running.get(jobId)?.attempt ?? 1,
  ) {
    const result = await this.client.call("result", {
      job_id: jobId,
      attempt,
      outcome,
      exit_code: outcome === "succeeded" ? 0 : 1,
    });
    this.running.delete(jobId);
    return result;
  }
}

/** Submits a shell job to `pool` (a pool of the test's own), runs it on a fresh fake node there, and reports `outcome`; answers the job id. */
export async function runJobToEnd(
  client: ComputeClient,
  baseUrl: string,
  appId: string,
  pool: string,
  outcome: "succeeded" | "failed" = "succeeded",
): Promise<string> {
  const node = await FakeNode.register(client, baseUrl, appId, { pool_id: pool });
  const { job_id } = await client.call("submitJob", { type: "shell", command: ["true"], pool_id: pool });
  await node.take(job_id);
  await node.finish(job_id, outcome);
  return job_id;
}
