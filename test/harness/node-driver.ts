/**
 * Drives FakeNodes as a real agent would: each node loops long-poll → report a result for
 * every attempt it was given, and heartbeats on the side. A call that fails with an error
 * the contract calls retryable (503 `service.unavailable` while NATS is away, 500
 * `internal.error`) or with a connection error is tried again after a short, bounded
 * back-off; anything else is recorded as unexpected and the test decides.
 *
 * Every (job, attempt) delivered is recorded with the node it went to, so a test can
 * assert that no attempt ever reached two nodes.
 */
import { setMaxListeners } from "node:events";
import { setTimeout as delay } from "node:timers/promises";
import type { Assignment } from "../../shared/contract/index.js";
import { ApiError, NetworkError } from "../../clients/sdk/src/index.js";
import { errorSpec, isErrorCode } from "../../shared/errors/index.js";
import type { FakeNode } from "./fake-node.js";

export interface DriveStats {
  /** `job_id#attempt` → the node it was delivered to (the first one, if several). */
  readonly deliveries: Map<string, string>;
  /** An attempt delivered to a second node: the invariant "one node per attempt" broken. */
  readonly doubleDeliveries: Array<{ job_id: string; attempt: number; nodes: [string, string] }>;
  /** A poll that returned more attempts than the node has slots: capacity overbooked. */
  readonly overbooked: Array<{ node_id: string; delivered: number; slots: number }>;
  /** Jobs whose `succeeded` result the service recorded (or answered as a duplicate of a recorded one). */
  readonly finished: Set<string>;
  /** Calls tried again, by error code (`network` for a connection error). */
  readonly retried: Map<string, number>;
  /** Failures that are not retryable: each one a message for the test to show. */
  readonly unexpected: string[];
}

export interface DriveOptions {
  /** Checked after every poll and every result; driving ends once it holds. */
  until: (stats: DriveStats) => boolean;
  /** Gives up (rejecting `done`) after this long; a bound, not a timing assertion. */
  timeoutMs: number;
  /** Each node's capacity in slots, for the overbooking check. */
  slots: number;
  /** The long poll's wait. Short, so stopping never waits long for a poll in flight. */
  waitSeconds?: number;
  heartbeatEveryMs?: number;
}

export interface NodeDriver {
  readonly stats: DriveStats;
  /** Resolves once `until` held and every node loop has ended; rejects on timeout (loops ended too). */
  readonly done: Promise<void>;
  /** Ends the loops now (idempotent); for cleanup after a failure. */
  stop(): Promise<void>;
}

const BACKOFF_FIRST_MS = 50;
const BACKOFF_MAX_MS = 1_000;

/** What to do with a failed call: try it again later (the code it failed with, `network` for no answer), or report it (null). */
export function retryCode(error: unknown): string | null {
  // A connection refused or reset never got an answer.
  if (error instanceof NetworkError || error instanceof TypeError) return "network";
  if (error instanceof ApiError) return isErrorCode(error.code) && errorSpec(error.code).retryable ? error.code : null;
  return null;
}

function describe(error: unknown): string {
  if (error instanceof ApiError)
    return `${error.code}: ${error.message}${error.details ? ` ${JSON.stringify(error.details)}` : ""}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

export function driveNodes(nodes: readonly FakeNode[], options: DriveOptions): NodeDriver {
  const { until, timeoutMs, slots, waitSeconds = 1, heartbeatEveryMs = 5_000 } = options;
  const stats: DriveStats = {
    deliveries: new Map(),
    doubleDeliveries: [],
    overbooked: [],
    finished: new Set(),
    retried: new Map(),
    unexpected: [],
  };
  const stopping = new AbortController();
  // Every back-off of every node listens on it.
  setMaxListeners(0, stopping.signal);
  let settle: { resolve: () => void; reject: (error: Error) => void } | undefined;
  const condition = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));

  const check = (): void => {
    if (!stopping.signal.aborted && until(stats)) {
      stopping.abort();
      settle?.resolve();
    }
  };

  /** Runs `call` until it succeeds, a non-retryable error (returned), or the drive stops (undefined). */
  async function persist<T>(what: string, call: () => Promise<T>): Promise<{ ok: T } | { error: unknown } | undefined> {
    for (let backoff = BACKOFF_FIRST_MS; !stopping.signal.aborted; backoff = Math.min(backoff * 2, BACKOFF_MAX_MS)) {
      try {
        return { ok: await call() };
      } catch (error) {
        const code = retryCode(error);
        if (code === null) {
          stats.unexpected.push(`${what}: ${describe(error)}`);
          return { error };
        }
        stats.retried.set(code, (stats.retried.get(code) ?? 0) + 1);
        // Pacing of retries while a dependency is away, as an agent would back off; not synchronisation.
        await delay(backoff, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    }
    return undefined;
  }

  function record(node: FakeNode, jobs: readonly Assignment[]): void {
    if (jobs.length > slots) stats.overbooked.push({ node_id: node.nodeId, delivered: jobs.length, slots });
    for (const { job_id, attempt } of jobs) {
      const key = `${job_id}#${attempt}`;
      const first = stats.deliveries.get(key);
      if (first === undefined) stats.deliveries.set(key, node.nodeId);
      else if (first !== node.nodeId) stats.doubleDeliveries.push({ job_id, attempt, nodes: [first, node.nodeId] });
    }
  }

  /** Attempts whose result was sent (answered or not). */
  const reported = new Set<string>();

  async function finish(node: FakeNode, job: Assignment): Promise<void> {
    reported.add(`${job.job_id}#${job.attempt}`);
    const outcome = await persist(`result ${job.job_id}#${job.attempt} on ${node.nodeId}`, () =>
      node.finish(job.job_id, "succeeded", job.attempt),
    );
    if (outcome && "ok" in outcome) {
      if (outcome.ok.state === "succeeded") stats.finished.add(job.job_id);
      else stats.unexpected.push(`result ${job.job_id}#${job.attempt}: recorded as ${outcome.ok.state}`);
    } else if (outcome) {
      // Refused (e.g. a stale attempt): the node forgets it, as an agent would.
      node.running.delete(job.job_id);
    }
    check();
  }

  async function runNode(node: FakeNode): Promise<void> {
    while (!stopping.signal.aborted) {
      const polled = await persist(`poll on ${node.nodeId}`, () => node.poll(waitSeconds));
      if (polled && "ok" in polled) {
        record(node, polled.ok);
        await Promise.all(polled.ok.map((job) => finish(node, job)));
      } else if (polled) {
        await delay(BACKOFF_MAX_MS, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
      check();
    }
  }

  async function heartbeatNode(node: FakeNode): Promise<void> {
    while (!stopping.signal.aborted) {
      await delay(heartbeatEveryMs, undefined, { signal: stopping.signal }).catch(() => undefined);
      if (stopping.signal.aborted) return;
      try {
        const reply = await node.heartbeat();
        for (const order of reply.stop) {
          // The heartbeat listed an attempt whose result was being recorded meanwhile: nothing to stop. On an
          // operator pool the freed reservation no longer names the job's business, so the registry says "unknown".
          if (
            (order.reason === "succeeded" || order.reason === "unknown") &&
            reported.has(`${order.job_id}#${order.attempt}`)
          )
            continue;
          stats.unexpected.push(
            `heartbeat told ${node.nodeId} to stop ${order.job_id}#${order.attempt} (${order.reason})`,
          );
          if (node.running.get(order.job_id)?.attempt === order.attempt) node.running.delete(order.job_id);
        }
      } catch (error) {
        // A missed heartbeat is retried at the next tick; only a non-retryable one is news.
        if (retryCode(error) === null) stats.unexpected.push(`heartbeat on ${node.nodeId}: ${describe(error)}`);
      }
    }
  }

  const loops = nodes.flatMap((node) => [runNode(node), heartbeatNode(node)]);
  const timer = setTimeout(() => {
    if (stopping.signal.aborted) return;
    stopping.abort();
    settle?.reject(
      new Error(
        `the nodes did not reach the end condition within ${timeoutMs} ms: ${stats.finished.size} jobs finished, ` +
          `${stats.deliveries.size} attempts delivered, retries ${JSON.stringify(Object.fromEntries(stats.retried))}, ` +
          `unexpected: ${stats.unexpected.slice(0, 10).join("; ") || "none"}`,
      ),
    );
  }, timeoutMs);
  const ended = async (): Promise<void> => {
    clearTimeout(timer);
    await Promise.all(loops);
  };
  const done = condition.then(ended, async (error: unknown) => {
    await ended();
    throw error;
  });
  // A caller that stops early may never await `done`.
  done.catch(() => undefined);
  // `until` may already hold (nothing to do).
  check();

  return {
    stats,
    done,
    async stop() {
      if (!stopping.signal.aborted) {
        stopping.abort();
        settle?.resolve();
      }
      await ended();
    },
  };
}
