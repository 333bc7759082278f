import { mkdir } from "node:fs/promises";
import type { Clock, Logger } from "../../shared/runtime/index.js";
import { nodeKeyRefused, refusesCredential } from "./agent-error.js";
import { AttemptRun } from "./attempt-run.js";
import { AttemptTable } from "./attempt-table.js";
import { describeError } from "./backoff.js";
import type { AgentConfig } from "./config.js";
import { Heartbeats } from "./heartbeat-loop.js";
import { markDraining, setNodeDrain, type StartedNode } from "./node-drain.js";
import { openNode } from "./node-registration.js";
import type { AgentAssignment, NodePlane } from "./node-plane.js";
import { pollLoop } from "./poll-loop.js";
import { RecoveredAttempt } from "./recovered-attempt.js";
import { attemptKey, stateFilePath } from "./state-file.js";
import type { AttemptContext } from "./tracked-attempt.js";
import { openTransport, type Transport } from "./transport.js";
import { lockWorkDir } from "./work-dir-lock.js";

export { AGENT_VERSION } from "./node-registration.js";

/** The SIGTERM → SIGKILL grace when the agent is stopped hard (second signal, `make dev` exit). */
const STOP_GRACE_MS = 2_000;
/** Until the first heartbeat answers, assume the service's default. */
const DEFAULT_HEARTBEAT_INTERVAL_MS = 30_000;

export interface AgentDeps {
  config: Readonly<AgentConfig>;
  logger: Logger;
  clock: Clock;
  /** The agent's environment: PATH and HOME pass to jobs. */
  env: Record<string, string | undefined>;
  /** For every HTTP call in HTTP mode (a test can wrap it); by default the agent's own connection pool, closed when it stops. */
  fetch?: typeof fetch;
  /** Another transport than HTTP; it is given the node key with `withNodeKey`. */
  plane?: NodePlane;
}

export interface AgentIdentity {
  nodeId: string;
  poolId: string;
  slots: number;
  /** True when this start registered the node; false when it resumed from the state file. */
  registered: boolean;
}

export interface Agent {
  /** Registers (or resumes the node in the state file), finishes what a previous run left, and starts heartbeating and polling. */
  start(): Promise<AgentIdentity>;
  /** Takes no new jobs, lets running ones finish and report, then stops. */
  drain(): Promise<void>;
  /** Stops now: kills running jobs; what they had not reported stays on disk for the next start. */
  stop(): Promise<void>;
  /** Last resort when the process exits: SIGKILL every job's process group, synchronously. */
  killNow(): void;
  /** Resolves once the agent has stopped (drained or stopped); rejects when it had to stop on a fatal error. */
  readonly done: Promise<void>;
}

/**
 * What the attempts the agent runs (and those it takes back) need of it. `nextJob`: a
 * finished attempt's slot takes the next job with its result's answer while the agent takes new work.
 */
function attemptContext(
  deps: AgentDeps,
  { plane, state }: StartedNode,
  halt: AbortSignal,
  nextJob?: AttemptContext["nextJob"],
): AttemptContext {
  const { config } = deps;
  return {
    ...(nextJob ? { nextJob } : {}),
    plane,
    state,
    logger: deps.logger,
    halt,
    keepWorkspaces: config.CJS_KEEP_WORKSPACES,
    clock: deps.clock,
    workDir: config.CJS_WORK_DIR,
    killGraceMs: config.CJS_KILL_GRACE_MS,
    env: deps.env,
  };
}

/**
 * Opens the node (registering it when there is no state file), checks its key with a first
 * heartbeat, lifts a drain this agent set at its last stop and takes back the attempts a
 * previous run left. `opened` hears the node as soon as it is open, so a stop meanwhile
 * flushes its state file.
 */
async function resumeNode(
  deps: AgentDeps,
  run: {
    statePath: string;
    planeOf: (appId: string) => NodePlane;
    attempts: AttemptTable;
    halt: AbortSignal;
    fail: (error: unknown) => void;
    opened: (node: StartedNode) => void;
  },
): Promise<{ registered: boolean; resumed: number }> {
  const { config, logger } = deps;
  const { statePath, attempts, halt, fail } = run;
  const opened = await openNode({ config, logger, statePath, planeOf: run.planeOf, halt });
  const { plane, file: state } = opened;
  const intervalMs = opened.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
  const node: StartedNode = { state, plane, heartbeats: new Heartbeats({ plane, attempts, logger, intervalMs, fail }) };
  run.opened(node);
  const current = state.current;
  const resumed = current.attempts.length;
  await node.heartbeats.first(halt, statePath);
  if (current.drained_by_agent) {
    await setNodeDrain(node, false, { logger, halt }).catch((error: unknown) =>
      logger.warn({ error: describeError(error) }, "could not lift the drain set at the last stop"),
    );
  }
  for (const entry of current.attempts) attempts.track(new RecoveredAttempt(attemptContext(deps, node, halt), entry));
  return { registered: opened.registered, resumed };
}

type Phase = "new" | "starting" | "running" | "draining" | "stopping" | "stopped";

/**
 * The agent's lifecycle: start (lock the work dir, register or resume the node, check its
 * key with a first heartbeat, take back what a previous run left), then its heartbeat
 * (`Heartbeats`) and poll (`pollLoop`) loops over the attempts it holds (`AttemptTable`),
 * until a drain (no new work; running attempts finish and report) or a stop (kill them now).
 */
class NodeAgent implements Agent {
  readonly done: Promise<void>;
  readonly #deps: AgentDeps;
  readonly #statePath: string;
  readonly #transport: Transport;
  /** Aborted by `stop` (or a fatal error): every retry and wait ends, nothing more is sent. */
  readonly #halt = new AbortController();
  /** Aborted when no new work is wanted (drain or stop). */
  readonly #pollStop = new AbortController();
  /** Aborted when the loops should end (drained, stopped). */
  readonly #loopsStop = new AbortController();
  readonly #attempts = new AttemptTable();
  #phase: Phase = "new";
  #node: StartedNode | undefined;
  #loops: Promise<void>[] = [];
  /** The poll loop: a drain waits for its poll in flight, whose attempts were started by it. */
  #polling: Promise<void> = Promise.resolve();
  #drained: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;
  #fatal: unknown;
  #unlock: (() => Promise<void>) | undefined;
  #settle!: { resolve: () => void; reject: (error: unknown) => void };

  constructor(deps: AgentDeps) {
    this.#deps = deps;
    this.#statePath = stateFilePath(deps.config.CJS_WORK_DIR);
    this.#transport = openTransport(deps.config, deps.fetch);
    this.done = new Promise<void>((resolve, reject) => (this.#settle = { resolve, reject }));
    // Whoever holds the agent may not await `done`; a fatal error is logged either way.
    this.done.catch(() => undefined);
  }

  async start(): Promise<AgentIdentity> {
    if (this.#phase !== "new") throw new Error("the agent was already started");
    this.#phase = "starting";
    const workDir = this.#deps.config.CJS_WORK_DIR;
    await mkdir(workDir, { recursive: true, mode: 0o700 });
    const unlock = await lockWorkDir(workDir);
    this.#unlock = unlock;
    try {
      return await this.#begin();
    } catch (error) {
      await unlock();
      await this.#transport.close();
      throw error;
    }
  }

  drain(): Promise<void> {
    if (this.#phase !== "running" && this.#phase !== "draining") return this.stop();
    const running = this.#node!;
    this.#drained ??= (async () => {
      this.#phase = "draining";
      const { logger } = this.#deps;
      logger.info({ running: this.#attempts.size }, "draining: no new jobs; waiting for the running ones to finish");
      // The poll in flight is not cut: an attempt it delivers was started by that very poll and would be left running
      // nowhere. The gateway ends a draining node's poll once the drain is recorded (after which nothing is assigned
      // here); without a recorded drain it is cut at once.
      if (!(await markDraining(running, { logger, halt: this.#halt.signal }))) this.#pollStop.abort();
      await this.#polling;
      await this.#attempts.settled();
      if (this.#phase !== "draining") return;
      this.#loopsStop.abort();
      await this.#release();
      logger.info("drained; stopping");
      this.#settle.resolve();
    })();
    return this.#drained;
  }

  stop(): Promise<void> {
    this.#stopped ??= (async () => {
      const running = this.#attempts.size;
      this.#phase = "stopping";
      this.#halt.abort();
      this.#pollStop.abort();
      this.#loopsStop.abort();
      if (running > 0)
        this.#deps.logger.warn({ running }, "stopping now: killing running jobs; the next start reports them");
      const graceMs = Math.min(this.#deps.config.CJS_KILL_GRACE_MS, STOP_GRACE_MS);
      await Promise.all([...this.#attempts.values()].map((attempt) => attempt.halt(graceMs)));
      await this.#release();
      if (this.#fatal === undefined) this.#settle.resolve();
      else this.#settle.reject(this.#fatal);
    })();
    return this.#stopped;
  }

  killNow(): void {
    for (const attempt of this.#attempts.values()) attempt.killNow();
  }

  /** The rest of the start, once the work dir is this agent's. */
  async #begin(): Promise<AgentIdentity> {
    const deps = this.#deps;
    const halt = this.#halt.signal;
    const fail = (error: unknown) => this.#fail(error);
    const { registered, resumed } = await resumeNode(deps, {
      statePath: this.#statePath,
      planeOf: (appId) => deps.plane ?? this.#transport.plane(appId),
      attempts: this.#attempts,
      halt,
      fail,
      opened: (started) => (this.#node = started),
    });
    const node = this.#node!;
    if (halt.aborted) throw new Error("the agent was stopped while starting");
    this.#phase = "running";
    this.#polling = pollLoop(
      {
        plane: node.plane,
        attempts: this.#attempts,
        logger: deps.logger,
        slots: () => node.state.current.slots,
        taking: () => this.#phase === "running",
        start: (job) => this.#startAttempt(job),
        heartbeatNow: () => node.heartbeats.now(),
        fail,
      },
      this.#pollStop.signal,
    );
    this.#loops = [node.heartbeats.run(this.#loopsStop.signal), this.#polling];
    const current = node.state.current;
    deps.logger.info(
      {
        node_id: current.node_id,
        pool: current.pool_id,
        slots: current.slots,
        resumed_attempts: resumed,
        work_dir: deps.config.CJS_WORK_DIR,
        transport: this.#transport.kind,
      },
      "agent running",
    );
    return { nodeId: current.node_id, poolId: current.pool_id, slots: current.slots, registered };
  }

  /**
   * Runs an attempt the service gave this node (by a poll, or with a result's answer), once.
   * The service started it by handing it over, so it runs even while the agent drains.
   */
  #startAttempt(job: AgentAssignment): void {
    if (this.#attempts.seen(attemptKey(job))) return;
    const deps = this.#deps;
    deps.logger.info({ job_id: job.job_id, attempt: job.attempt, command: job.command[0] }, "job received");
    const nextJob = {
      wanted: () => this.#phase === "running" && !this.#pollStop.signal.aborted,
      take: (next: AgentAssignment) => this.#startAttempt(next),
    };
    this.#attempts.track(new AttemptRun(attemptContext(deps, this.#node!, this.#halt.signal, nextJob), job));
  }

  /** A failure no retry mends: the agent stops, and `done` rejects with it. */
  #fail(error: unknown): void {
    const reason = refusesCredential(error) ? nodeKeyRefused(error, this.#statePath) : error;
    this.#deps.logger.error({ error: describeError(reason) }, "the agent cannot go on");
    this.#fatal ??= reason;
    void this.stop();
  }

  /** Lets go of the work dir and the transport once the loops are over. */
  async #release(): Promise<void> {
    await Promise.all(this.#loops);
    await this.#node?.state.flush();
    await this.#unlock?.();
    await this.#transport.close();
    this.#phase = "stopped";
  }
}

export function buildAgent(deps: AgentDeps): Agent {
  return new NodeAgent(deps);
}
