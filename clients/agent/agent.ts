import { mkdir } from "node:fs/promises";
import type { Clock, Logger } from "../../shared/runtime/index.js";
import { nodeKeyRefused, refusesCredential } from "./agent-error.js";
import { AttemptRun } from "./attempt-run.js";
import { AttemptTable } from "./attempt-table.js";
import { describeError, retrying } from "./backoff.js";
import type { AgentConfig } from "./config.js";
import { Heartbeats } from "./heartbeat-loop.js";
import { openNode } from "./node-registration.js";
import type { NodePlane } from "./node-plane.js";
import { pollLoop } from "./poll-loop.js";
import { RecoveredAttempt } from "./recovered-attempt.js";
import { type StateFile, stateFilePath } from "./state-file.js";
import type { AttemptContext } from "./tracked-attempt.js";
import { openTransport } from "./transport.js";
import { lockWorkDir } from "./work-dir-lock.js";

export { AGENT_VERSION } from "./node-registration.js";

/** The SIGTERM → SIGKILL grace when the agent is stopped hard (second signal, `make dev` exit). */
const STOP_GRACE_MS = 2_000;
/** Until the first heartbeat answers, assume the service's default. */
const DEFAULT_HEARTBEAT_INTERVAL_MS = 30_000;
/** How long a drain (or its lifting) is asked for before the agent gives up on it. */
const DRAIN_GIVE_UP_MS = 30_000;

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

/** The node the agent acts as, once started: its state file, its plane and its heartbeats. */
interface Node {
  state: StateFile;
  plane: NodePlane;
  heartbeats: Heartbeats;
}

/**
 * The agent's lifecycle: start (lock the work dir, register or resume the node, check its
 * key with a first heartbeat, take back what a previous run left), then its heartbeat
 * (`Heartbeats`) and poll (`pollLoop`) loops over the attempts it holds (`AttemptTable`),
 * until a drain (no new work; running attempts finish and report) or a stop (kill them now).
 */
export function buildAgent(deps: AgentDeps): Agent {
  const { config, logger, clock } = deps;
  const statePath = stateFilePath(config.CJS_WORK_DIR);
  const transport = openTransport(config, deps.fetch);

  /** Aborted by `stop` (or a fatal error): every retry and wait ends, nothing more is sent. */
  const halt = new AbortController();
  /** Aborted when no new work is wanted (drain or stop). */
  const pollStop = new AbortController();
  /** Aborted when the loops should end (drained, stopped). */
  const loopsStop = new AbortController();
  const attempts = new AttemptTable();
  let phase: "new" | "starting" | "running" | "draining" | "stopping" | "stopped" = "new";
  let node: Node | undefined;
  let loops: Promise<void>[] = [];
  /** The poll loop: a drain waits for its poll in flight, whose attempts were started by it. */
  let polling: Promise<void> = Promise.resolve();
  let drained: Promise<void> | undefined;
  let stopped: Promise<void> | undefined;
  let fatal: unknown;
  let unlock: (() => Promise<void>) | undefined;

  let settle!: { resolve: () => void; reject: (error: unknown) => void };
  const done = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
  // Whoever holds the agent may not await `done`; a fatal error is logged either way.
  done.catch(() => undefined);

  function context({ plane, state }: Node): AttemptContext {
    return {
      plane,
      state,
      logger,
      halt: halt.signal,
      keepWorkspaces: config.CJS_KEEP_WORKSPACES,
      clock,
      workDir: config.CJS_WORK_DIR,
      killGraceMs: config.CJS_KILL_GRACE_MS,
      env: deps.env,
    };
  }

  /** A failure no retry mends: the agent stops, and `done` rejects with it. */
  function fail(error: unknown): void {
    const reason = refusesCredential(error) ? nodeKeyRefused(error, statePath) : error;
    logger.error({ error: describeError(reason) }, "the agent cannot go on");
    fatal ??= reason;
    void stop();
  }

  async function start(): Promise<AgentIdentity> {
    if (phase !== "new") throw new Error("the agent was already started");
    phase = "starting";
    await mkdir(config.CJS_WORK_DIR, { recursive: true, mode: 0o700 });
    unlock = await lockWorkDir(config.CJS_WORK_DIR);
    try {
      return await begin();
    } catch (error) {
      await unlock();
      await transport.close();
      throw error;
    }
  }

  /** The rest of the start, once the work dir is this agent's. */
  async function begin(): Promise<AgentIdentity> {
    const opened = await openNode({
      config,
      logger,
      statePath,
      planeOf: (appId) => deps.plane ?? transport.plane(appId),
      halt: halt.signal,
    });
    const { plane, file: state } = opened;
    const intervalMs = opened.heartbeatIntervalMs ?? DEFAULT_HEARTBEAT_INTERVAL_MS;
    const heartbeats = new Heartbeats({ plane, attempts, logger, intervalMs, fail });
    const started: Node = { state, plane, heartbeats };
    node = started;
    const current = state.current;
    const resumed = current.attempts.length;
    await firstHeartbeat(started);
    if (current.drained_by_agent) {
      await setDrain(started, false).catch((error: unknown) =>
        logger.warn({ error: describeError(error) }, "could not lift the drain set at the last stop"),
      );
    }
    for (const entry of current.attempts) attempts.track(new RecoveredAttempt(context(started), entry));
    if (halt.signal.aborted) throw new Error("the agent was stopped while starting");
    phase = "running";
    polling = pollLoop(
      {
        plane,
        attempts,
        logger,
        slots: () => state.current.slots,
        taking: () => phase === "running",
        run: (job) => new AttemptRun(context(started), job),
        heartbeatNow: () => heartbeats.now(),
        fail,
      },
      pollStop.signal,
    );
    loops = [heartbeats.run(loopsStop.signal), polling];
    logger.info(
      {
        node_id: current.node_id,
        pool: current.pool_id,
        slots: current.slots,
        resumed_attempts: resumed,
        work_dir: config.CJS_WORK_DIR,
        transport: transport.kind,
      },
      "agent running",
    );
    return { nodeId: current.node_id, poolId: current.pool_id, slots: current.slots, registered: opened.registered };
  }

  /** The first heartbeat checks the node key before any work is taken. */
  async function firstHeartbeat({ plane, heartbeats }: Node): Promise<void> {
    try {
      heartbeats.apply(
        await retrying(() => plane.heartbeat({ running: [] }, halt.signal), {
          what: "heartbeat",
          logger,
          signal: halt.signal,
        }),
      );
    } catch (error) {
      if (!halt.signal.aborted && refusesCredential(error)) throw nodeKeyRefused(error, statePath);
      throw error;
    }
  }

  /**
   * Sets (or lifts) this node's drain, as its own request; gives up when the service stays
   * away. The state file says "drained by the agent" from before the request until the
   * drain is lifted, so a drain this agent may have set is always lifted at its next start.
   */
  async function setDrain({ state, plane }: Node, draining: boolean): Promise<void> {
    if (draining) await state.update((saved) => void (saved.drained_by_agent = true));
    await retrying(() => plane.drain({ draining }, halt.signal), {
      what: draining ? "drain" : "lifting the drain",
      logger,
      signal: halt.signal,
      giveUpAfterMs: DRAIN_GIVE_UP_MS,
    });
    if (!draining) await state.update((saved) => void (saved.drained_by_agent = false));
  }

  /** Whether the service holds the node draining now, set by this agent's own request if need be. */
  async function markDraining(running: Node): Promise<boolean> {
    if (running.heartbeats.draining) return false;
    return setDrain(running, true).then(
      () => true,
      (error: unknown) => {
        logger.warn({ error: describeError(error) }, "could not mark the node draining");
        return false;
      },
    );
  }

  /** Lets go of the work dir and the transport once the loops are over. */
  async function release(): Promise<void> {
    await Promise.all(loops);
    await node?.state.flush();
    await unlock?.();
    await transport.close();
    phase = "stopped";
  }

  function drain(): Promise<void> {
    if (phase !== "running" && phase !== "draining") return stop();
    const running = node!;
    drained ??= (async () => {
      phase = "draining";
      logger.info({ running: attempts.size }, "draining: no new jobs; waiting for the running ones to finish");
      // The poll in flight is not cut: an attempt it delivers was started by that very poll and would be left running
      // nowhere. The gateway ends a draining node's poll once the drain is recorded (after which nothing is assigned
      // here); without a recorded drain it is cut at once.
      if (!(await markDraining(running))) pollStop.abort();
      await polling;
      await attempts.settled();
      if (phase !== "draining") return;
      loopsStop.abort();
      await release();
      logger.info("drained; stopping");
      settle.resolve();
    })();
    return drained;
  }

  function stop(): Promise<void> {
    stopped ??= (async () => {
      const running = attempts.size;
      phase = "stopping";
      halt.abort();
      pollStop.abort();
      loopsStop.abort();
      if (running > 0) logger.warn({ running }, "stopping now: killing running jobs; the next start reports them");
      await Promise.all(
        [...attempts.values()].map((attempt) => attempt.halt(Math.min(config.CJS_KILL_GRACE_MS, STOP_GRACE_MS))),
      );
      await release();
      if (fatal === undefined) settle.resolve();
      else settle.reject(fatal);
    })();
    return stopped;
  }

  function killNow(): void {
    for (const attempt of attempts.values()) attempt.killNow();
  }

  return { start, drain, stop, killNow, done };
}
