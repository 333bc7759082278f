import { setMaxListeners } from "node:events";
import { setTimeout as sleep } from "node:timers/promises";
import type { AgentAssignment, NodePlane } from "../../../clients/agent/index.js";
import type { RpcRequest } from "../../../shared/contract/index.js";
import { ApiError, mayRetryCode } from "../../../shared/client/index.js";
import { monotonicMs } from "../clock.js";

/** The agent's long poll while a slot is free (clients/agent/agent.ts). */
const POLL_WAIT_SECONDS = 25;
const BACKOFF_FIRST_MS = 50;
const BACKOFF_MAX_MS = 1_000;
/** Finished attempts remembered, so a poll answered before a result landed does not start one again (as the agent does). */
const FINISHED_KEPT = 4_096;

export interface FakeAgentOptions {
  /** The node plane acting as this node (`withNodeKey` done). */
  plane: NodePlane;
  nodeId: string;
  slots: number;
  heartbeatIntervalSeconds: number;
  /** A poll delivered the attempt: the node "starts" it now (monotonic ms). */
  onStarted: (jobId: string, atMs: number) => void;
  /** The service answered the attempt's result. */
  onFinished: (jobId: string, atMs: number) => void;
}

export interface FakeAgent {
  readonly nodeId: string;
  /** Calls that failed and were tried again, by code (`transport` for a timeout or a lost connection). */
  readonly retried: Map<string, number>;
  /** Failures that are not retryable: the scenario did not run as designed. */
  readonly unexpected: string[];
  stop(): Promise<void>;
}

function retryCode(error: unknown): string | null {
  if (error instanceof ApiError) return mayRetryCode(error.code) ? error.code : null;
  return "transport";
}

function describe(error: unknown): string {
  if (error instanceof ApiError) return `${error.code}: ${error.message}`;
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}

/**
 * A node that runs nothing, polling the way the agent does (clients/agent/agent.ts):
 * while a slot is free, a 25 s long poll that names the attempts it holds, so the gateway
 * answers when another is assigned; with every slot busy, none; each result offers its
 * slot for the next job, which may come with the answer. Each delivered attempt
 * "starts" when its poll returns and succeeds at once: its result is sent right away,
 * while the next poll goes out. Heartbeats at the interval the service asks for.
 */
export function startFakeAgent(options: FakeAgentOptions): FakeAgent {
  const { plane, slots, onStarted, onFinished } = options;
  const stopping = new AbortController();
  // Every call in flight (a result per held attempt) and every back-off listens on it.
  setMaxListeners(0, stopping.signal);
  const retried = new Map<string, number>();
  const unexpected: string[] = [];
  const running = new Map<string, AgentAssignment>();
  const finished = new Set<string>();
  const keyOf = (job: { job_id: string; attempt: number }) => `${job.job_id}#${job.attempt}`;
  const attemptOf = (key: string) => ({
    job_id: key.slice(0, key.indexOf("#")),
    attempt: Number(key.slice(key.indexOf("#") + 1)),
  });
  /** What the last answer listed: a finished attempt the service still holds stays known (as the agent does). */
  let listed = new Set<string>();
  let slotFreed: (() => void) | undefined;

  const waitForSlot = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        stopping.signal.removeEventListener("abort", done);
        slotFreed = undefined;
        resolve();
      }
      slotFreed = done;
      stopping.signal.addEventListener("abort", done, { once: true });
    });

  /** Runs `call` until it succeeds (the answer), fails for good (undefined, recorded) or the agent stops. */
  async function persist<T>(what: string, call: () => Promise<T>): Promise<T | undefined> {
    for (let backoff = BACKOFF_FIRST_MS; !stopping.signal.aborted; backoff = Math.min(backoff * 2, BACKOFF_MAX_MS)) {
      try {
        return await call();
      } catch (error) {
        if (stopping.signal.aborted) return undefined;
        const code = retryCode(error);
        if (code === null) {
          unexpected.push(`${what} on ${options.nodeId}: ${describe(error)}`);
          return undefined;
        }
        retried.set(code, (retried.get(code) ?? 0) + 1);
        await sleep(backoff, undefined, { signal: stopping.signal }).catch(() => undefined);
      }
    }
    return undefined;
  }

  /** Takes an attempt the service gave the node (by a poll, or with the answer to a result), once. */
  function take(job: AgentAssignment, atMs: number): void {
    const key = keyOf(job);
    if (running.has(key) || finished.has(key)) return;
    running.set(key, job);
    onStarted(job.job_id, atMs);
    void run(job);
  }

  async function run(job: AgentAssignment): Promise<void> {
    // As the agent does: the slot this result frees is offered for the next job, which may come with the answer.
    const body: RpcRequest<"result"> = {
      job_id: job.job_id,
      attempt: job.attempt,
      outcome: "succeeded",
      exit_code: 0,
      take_next: !stopping.signal.aborted,
    };
    const answer = await persist(`result of ${job.job_id}#${job.attempt}`, () => plane.result(body, stopping.signal));
    if (answer) {
      if (answer.state === "succeeded") onFinished(job.job_id, monotonicMs());
      else unexpected.push(`result of ${job.job_id}#${job.attempt}: recorded as ${answer.state}`);
    }
    running.delete(keyOf(job));
    finished.add(keyOf(job));
    if (finished.size > FINISHED_KEPT) finished.delete(finished.values().next().value!);
    if (answer?.next) take(answer.next, monotonicMs());
    slotFreed?.();
  }

  async function pollLoop(): Promise<void> {
    while (!stopping.signal.aborted) {
      if (running.size >= slots) {
        await waitForSlot(60_000);
        continue;
      }
      const known = [...running.values(), ...[...finished].filter((key) => listed.has(key)).map(attemptOf)].map(
        ({ job_id, attempt }) => ({ job_id, attempt }),
      );
      const polled = await persist("poll", () =>
        plane.poll({ wait_seconds: POLL_WAIT_SECONDS, known }, stopping.signal),
      );
      if (polled === undefined) {
        if (!stopping.signal.aborted)
          await sleep(BACKOFF_MAX_MS, undefined, { signal: stopping.signal }).catch(() => undefined);
        continue;
      }
      const at = monotonicMs();
      for (const job of polled.jobs) take(job, at);
      listed = new Set([...polled.jobs, ...(polled.held ?? [])].map(keyOf));
    }
  }

  async function heartbeatLoop(): Promise<void> {
    while (!stopping.signal.aborted) {
      await sleep(options.heartbeatIntervalSeconds * 1000, undefined, { signal: stopping.signal }).catch(
        () => undefined,
      );
      if (stopping.signal.aborted) return;
      const attempts = [...running.values()].map(({ job_id, attempt }) => ({ job_id, attempt }));
      await persist("heartbeat", () => plane.heartbeat({ running: attempts }, stopping.signal));
    }
  }

  const loops = Promise.all([pollLoop(), heartbeatLoop()]);
  return {
    nodeId: options.nodeId,
    retried,
    unexpected,
    async stop() {
      stopping.abort();
      await loops;
      // Results in flight end with the abort; nothing else is waited for.
    },
  };
}
