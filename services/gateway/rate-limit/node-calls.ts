import { RPC_ROUTES, type RpcRoute } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import { nodeCallsRefused } from "./rate-limit-metrics.js";
import { type PacePolicy, type TokenBucket, takeTokens } from "./pacer.js";

/** A node's calls by what their need follows: its jobs (polls, results, log pushes), or nothing that grows (the rest). */
export type NodeCallClass = "jobs" | "control";

const FOLLOW_JOBS: ReadonlySet<string> = new Set([
  RPC_ROUTES.poll.path,
  RPC_ROUTES.result.path,
  RPC_ROUTES.pushLogs.path,
]);

export function nodeCallClass(route: Pick<RpcRoute, "path">): NodeCallClass {
  return FOLLOW_JOBS.has(route.path) ? "jobs" : "control";
}

export interface NodeCallPolicy {
  /** Every call of one node with its key, a second (`CJS_NODE_RATE_LIMIT_PER_SECOND`). */
  perSecond: number;
  /** Of them, its control calls (`CJS_NODE_CONTROL_RATE_LIMIT_PER_SECOND`). */
  controlPerSecond: number;
}

/** Nodes whose buckets are kept before the full ones are dropped (a full bucket is the same as none). */
const PRUNE_ABOVE = 10_000;

/**
 * Each node's calls with its key on this gateway replica, refused past the node's budget
 * (429 `rate.limited`, `Retry-After`), so a node in a loop (a custom agent's bug, a stolen
 * key) costs the gateway a refusal instead of other services' work: a heartbeat is a
 * durable write in the node registry, a poll a request to the scheduler. Two buckets of a
 * second's worth each: all its calls, generous because they grow with the jobs a node runs,
 * and its control calls (heartbeats, drains, key rotations), which an agent makes every
 * few seconds whatever it runs. In memory, per replica, like the log-stream budgets: a
 * node's calls mostly reach one replica (its HTTP connection, NATS spreading a queue
 * group), and behind R replicas it may make up to R times the budget.
 */
export class NodeCallBudget {
  readonly #all = new Map<string, TokenBucket>();
  readonly #control = new Map<string, TokenBucket>();
  readonly #policies: { all: PacePolicy; control: PacePolicy };

  constructor(
    policy: NodeCallPolicy,
    private readonly now: () => number = Date.now,
  ) {
    this.#policies = {
      all: { perSecond: policy.perSecond, burst: policy.perSecond },
      control: { perSecond: policy.controlPerSecond, burst: policy.controlPerSecond },
    };
  }

  /** Takes one call of `nodeId` on `route` from its budget, or throws the refusal; a refused call takes nothing. */
  admit(nodeId: string, route: Pick<RpcRoute, "path">): void {
    const nowMs = this.now();
    const kind = nodeCallClass(route);
    const all = this.#take(this.#all, this.#policies.all, nodeId, nowMs);
    const control = kind === "control" ? this.#take(this.#control, this.#policies.control, nodeId, nowMs) : undefined;
    const refusedBy = all.waitMs > 0 ? "all" : control && control.waitMs > 0 ? "control" : undefined;
    if (refusedBy !== undefined) {
      const waitMs = Math.max(all.waitMs, control?.waitMs ?? 0);
      nodeCallsRefused.inc({ class: refusedBy });
      const limit = this.#policies[refusedBy].perSecond;
      const what = refusedBy === "all" ? "calls" : "heartbeats, drains and key rotations";
      throw new AppError(
        "rate.limited",
        `Rate limit reached: ${limit} ${what} a second for this node; retry in ${Math.ceil(waitMs / 1000)} s.`,
        {
          retryAfterSeconds: Math.ceil(waitMs / 1000),
          details: { window: "second", limit, budget: refusedBy === "all" ? "node" : "node_control" },
        },
      );
    }
    this.#keep(this.#all, this.#policies.all, nodeId, all.bucket, nowMs);
    if (control) this.#keep(this.#control, this.#policies.control, nodeId, control.bucket, nowMs);
  }

  /** Nodes with a bucket held (tests, and a bound on memory). */
  get size(): number {
    return this.#all.size;
  }

  #take(buckets: Map<string, TokenBucket>, policy: PacePolicy, nodeId: string, nowMs: number) {
    return takeTokens(buckets.get(nodeId), nowMs, 1, policy);
  }

  #keep(buckets: Map<string, TokenBucket>, policy: PacePolicy, nodeId: string, bucket: TokenBucket, nowMs: number) {
    if (!buckets.has(nodeId) && buckets.size >= PRUNE_ABOVE)
      for (const [id, held] of buckets)
        if (takeTokens(held, nowMs, 0, policy).bucket.tokens >= policy.burst) buckets.delete(id);
    buckets.set(nodeId, bucket);
  }
}
