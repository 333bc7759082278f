import { mkdir } from "node:fs/promises";
import { hostname } from "node:os";
import { setTimeout as sleep } from "node:timers/promises";
import type { HeartbeatResponse } from "../../shared/contract/index.js";
import type { Clock, Logger } from "../../shared/runtime/index.js";
import { AgentError } from "./agent-error.js";
import { Alarm } from "./alarm.js";
import { AttemptRun } from "./attempt-run.js";
import { Backoff, describeError, errorCode, isRetryable, retrying } from "./backoff.js";
import type { AgentConfig } from "./config.js";
import type { AgentAssignment, NodePlane } from "./node-plane.js";
import { RecoveredAttempt } from "./recovered-attempt.js";
import { attemptKey, parseAttemptKey, StateFile, stateFilePath } from "./state-file.js";
import type { AttemptContext, TrackedAttempt } from "./tracked-attempt.js";
import { openTransport } from "./transport.js";
import { lockWorkDir } from "./work-dir-lock.js";

export const AGENT_VERSION = "0.1.0";

/**
 * A long poll's wait while a slot is free: the poll names the attempts the node runs, and
 * the gateway answers as soon as another is assigned (or one of them is ended there).
 */
const POLL_WAIT_SECONDS = 25;
/** The SIGTERM → SIGKILL grace when the agent is stopped hard (second signal, `make dev` exit). */
const STOP_GRACE_MS = 2_000;
/** How many finished attempts are remembered, so a poll answered before a result landed does not start one again. */
const FINISHED_KEPT = 1_024;
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

/** The refusals that no retry can fix: the credential or the app is not (or no longer) accepted. */
const REFUSED_CREDENTIAL = new Set([
  "auth.invalid_credentials",
  "auth.missing_credentials",
  "permission.denied",
  "app.unknown",
]);

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
  const heartbeatAlarm = new Alarm();
  const slotAlarm = new Alarm();

  const attempts = new Map<string, TrackedAttempt>();
  const finished = new Set<string>();
  let phase: "new" | "starting" | "running" | "draining" | "stopping" | "stopped" = "new";
  let state: StateFile | undefined;
  let plane: NodePlane | undefined;
  let heartbeatIntervalMs = DEFAULT_HEARTBEAT_INTERVAL_MS;
  let serverDraining = false;
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

  function context(): AttemptContext {
    return {
      plane: plane!,
      state: state!,
      logger,
      halt: halt.signal,
      keepWorkspaces: config.CJS_KEEP_WORKSPACES,
      clock,
      workDir: config.CJS_WORK_DIR,
      killGraceMs: config.CJS_KILL_GRACE_MS,
      env: deps.env,
      // A finished attempt's slot takes the next job with the result's answer while the agent takes new work.
      nextJob: { wanted: () => phase === "running" && !pollStop.signal.aborted, take: startAttempt },
    };
  }

  /**
   * Runs an attempt the service gave this node (by a poll, or with a result's answer), once.
   * The service started it by handing it over, so it runs even while the agent drains.
   */
  function startAttempt(job: AgentAssignment): void {
    const key = attemptKey(job);
    if (attempts.has(key) || finished.has(key)) return;
    logger.info({ job_id: job.job_id, attempt: job.attempt, command: job.command[0] }, "job received");
    track(new AttemptRun(context(), job));
  }

  function track(attempt: TrackedAttempt): void {
    attempts.set(attempt.key, attempt);
    void attempt.done.finally(() => {
      attempts.delete(attempt.key);
      finished.add(attempt.key);
      if (finished.size > FINISHED_KEPT) finished.delete(finished.values().next().value as string);
      slotAlarm.ring();
    });
  }

  /** Reads the state file, or registers the node and writes it. */
  async function openState(): Promise<{ file: StateFile; registered: boolean }> {
    const saved = await StateFile.read(statePath);
    if (saved) {
      if (config.CJS_APP_ID !== undefined && config.CJS_APP_ID !== saved.app_id) {
        throw new AgentError(
          "agent.app_mismatch",
          `the state file ${statePath} is for app "${saved.app_id}", not "${config.CJS_APP_ID}": use another work dir for another app`,
        );
      }
      if (saved.gateway_url !== config.CJS_GATEWAY_URL) {
        logger.info(
          { was: saved.gateway_url, now: config.CJS_GATEWAY_URL },
          "the gateway URL changed since the last run; using the new one",
        );
        saved.gateway_url = config.CJS_GATEWAY_URL;
      }
      if (saved.pool_id !== config.CJS_POOL || saved.slots !== config.CJS_SLOTS) {
        logger.warn(
          {
            registered: { pool: saved.pool_id, slots: saved.slots },
            configured: { pool: config.CJS_POOL, slots: config.CJS_SLOTS },
          },
          "the node was registered with other settings, which still apply; move the state file away to register a new node",
        );
      }
      plane = (deps.plane ?? transport.plane(saved.app_id)).withNodeKey(saved.node_key);
      return { file: await StateFile.create(statePath, saved, logger), registered: false };
    }

    const apiKey = config.CJS_API_KEY;
    const appId = config.CJS_APP_ID;
    if (apiKey === undefined || appId === undefined) {
      throw new AgentError(
        "agent.no_credentials",
        `no state file at ${statePath}, so this node must register first: set CJS_API_KEY (a user API key) and CJS_APP_ID`,
      );
    }
    const userPlane = deps.plane ?? transport.plane(appId);
    const request = {
      name: config.CJS_NODE_NAME,
      hostname: hostname(),
      pool_id: config.CJS_POOL,
      labels: config.CJS_LABELS,
      capacity: { cpu: config.CJS_CPU, memory_mb: config.CJS_MEMORY_MB, gpu: 0, slots: config.CJS_SLOTS },
      job_types: config.CJS_JOB_TYPES,
      agent_version: AGENT_VERSION,
    };
    let registered;
    try {
      registered = await retrying(() => userPlane.register(request, apiKey, halt.signal), {
        what: "registration",
        logger,
        signal: halt.signal,
      });
    } catch (error) {
      if (halt.signal.aborted) throw error;
      throw new AgentError("agent.registration_refused", `registration refused: ${describeError(error)}`, {
        cause: error,
      });
    }
    plane = userPlane.withNodeKey(registered.api_key);
    heartbeatIntervalMs = registered.heartbeat_interval_seconds * 1000;
    const file = await StateFile.create(
      statePath,
      {
        node_id: registered.node_id,
        node_key: registered.api_key,
        gateway_url: config.CJS_GATEWAY_URL,
        app_id: appId,
        pool_id: config.CJS_POOL,
        slots: config.CJS_SLOTS,
        drained_by_agent: false,
        attempts: [],
      },
      logger,
    );
    logger.info({ node_id: registered.node_id, pool: config.CJS_POOL, state_file: statePath }, "node registered");
    return { file, registered: true };
  }

  function runningAttempts() {
    return [...attempts.values()]
      .filter((attempt) => attempt.listed)
      .map(({ job_id, attempt }) => ({ job_id, attempt }));
  }

  function applyHeartbeat(reply: HeartbeatResponse): void {
    heartbeatIntervalMs = reply.heartbeat_interval_seconds * 1000;
    if (reply.draining !== serverDraining)
      logger.info(
        { draining: reply.draining },
        reply.draining ? "the node is draining" : "the node is no longer draining",
      );
    serverDraining = reply.draining;
    for (const order of reply.stop) attempts.get(attemptKey(order))?.stop(order.reason);
  }

  function refused(error: unknown): AgentError {
    return new AgentError(
      "agent.node_key_refused",
      `the service refuses this node's key (${describeError(error)}): the node was removed or its key rotated. ` +
        `Move ${statePath} away and set CJS_API_KEY to register a new node.`,
      { cause: error },
    );
  }

  async function heartbeatLoop(): Promise<void> {
    const backoff = new Backoff();
    let failures = 0;
    let delayMs = heartbeatIntervalMs;
    while (!loopsStop.signal.aborted) {
      await heartbeatAlarm.wait(delayMs, loopsStop.signal);
      if (loopsStop.signal.aborted) return;
      try {
        applyHeartbeat(await plane!.heartbeat({ running: runningAttempts() }, loopsStop.signal));
        if (failures > 0) logger.info({ failures }, "heartbeats answered again");
        failures = 0;
        backoff.reset();
        delayMs = heartbeatIntervalMs;
      } catch (error) {
        if (loopsStop.signal.aborted) return;
        if (!isRetryable(error)) return fail(REFUSED_CREDENTIAL.has(errorCode(error) ?? "") ? refused(error) : error);
        failures += 1;
        delayMs = backoff.next(error);
        if (failures === 1 || failures % 10 === 0)
          logger.warn({ error: describeError(error), failures }, "heartbeat failed; trying again");
      }
    }
  }

  async function pollLoop(): Promise<void> {
    const backoff = new Backoff();
    const signal = pollStop.signal;
    let failures = 0;
    /** What the last answer listed: a finished attempt the service still holds stays known, or it would be news each time. */
    let listed = new Set<string>();
    while (!signal.aborted && phase === "running") {
      if (attempts.size >= state!.current.slots) {
        await slotAlarm.wait(60_000, signal);
        continue;
      }
      try {
        const known = [...attempts.values(), ...[...finished].filter((key) => listed.has(key)).map(parseAttemptKey)];
        const { jobs, held } = await plane!.poll(
          { wait_seconds: POLL_WAIT_SECONDS, known: known.map(({ job_id, attempt }) => ({ job_id, attempt })) },
          signal,
        );
        if (failures > 0) logger.info({ failures }, "polls answered again");
        failures = 0;
        backoff.reset();
        for (const job of jobs) if (!signal.aborted) startAttempt(job);
        listed = new Set([...jobs, ...(held ?? [])].map(attemptKey));
        // An attempt it runs that the service no longer holds has ended there (cancelled, timed out, reassigned): hear why now.
        if (held && [...attempts.values()].some((attempt) => attempt.commandRunning && !listed.has(attempt.key)))
          heartbeatAlarm.ring();
      } catch (error) {
        if (signal.aborted) return;
        if (!isRetryable(error)) return fail(REFUSED_CREDENTIAL.has(errorCode(error) ?? "") ? refused(error) : error);
        failures += 1;
        const delayMs = backoff.next(error);
        if (failures === 1 || failures % 10 === 0)
          logger.warn({ error: describeError(error), failures }, "poll failed; trying again");
        await sleep(delayMs, undefined, { signal }).catch(() => undefined);
      }
    }
  }

  /**
   * Sets (or lifts) this node's drain, as its own request; gives up when the service stays
   * away. The state file says "drained by the agent" from before the request until the
   * drain is lifted, so a drain this agent may have set is always lifted at its next start.
   */
  async function setDrain(draining: boolean): Promise<void> {
    if (draining) await state!.update((saved) => void (saved.drained_by_agent = true));
    await retrying(() => plane!.drain({ draining }, halt.signal), {
      what: draining ? "drain" : "lifting the drain",
      logger,
      signal: halt.signal,
      giveUpAfterMs: 30_000,
    });
    if (!draining) await state!.update((saved) => void (saved.drained_by_agent = false));
  }

  async function waitForAttempts(): Promise<void> {
    while (attempts.size > 0) await Promise.all([...attempts.values()].map((attempt) => attempt.done));
  }

  function fail(error: unknown): void {
    logger.error({ error: describeError(error) }, "the agent cannot go on");
    fatal ??= error;
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
    const opened = await openState();
    state = opened.file;
    const current = state.current;
    const resumed = current.attempts.length;

    // The first heartbeat checks the node key before any work is taken.
    try {
      applyHeartbeat(
        await retrying(() => plane!.heartbeat({ running: [] }, halt.signal), {
          what: "heartbeat",
          logger,
          signal: halt.signal,
        }),
      );
    } catch (error) {
      if (!halt.signal.aborted && REFUSED_CREDENTIAL.has(errorCode(error) ?? "")) throw refused(error);
      throw error;
    }
    if (current.drained_by_agent) {
      await setDrain(false).catch((error: unknown) =>
        logger.warn({ error: describeError(error) }, "could not lift the drain set at the last stop"),
      );
    }
    for (const entry of current.attempts) track(new RecoveredAttempt(context(), entry));
    if (halt.signal.aborted) throw new Error("the agent was stopped while starting");
    phase = "running";
    polling = pollLoop();
    loops = [heartbeatLoop(), polling];
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

  function drain(): Promise<void> {
    if (phase === "new" || phase === "starting" || phase === "stopping" || phase === "stopped") return stop();
    drained ??= (async () => {
      phase = "draining";
      logger.info({ running: attempts.size }, "draining: no new jobs; waiting for the running ones to finish");
      // The poll in flight is not cut: an attempt it delivers was started by that very poll and would be left running
      // nowhere. The gateway ends a draining node's poll once the drain is recorded (after which nothing is assigned
      // here); without a recorded drain it is cut at once.
      const told = serverDraining
        ? Promise.resolve(false)
        : setDrain(true).then(
            () => true,
            (error: unknown) => {
              logger.warn({ error: describeError(error) }, "could not mark the node draining");
              return false;
            },
          );
      if (!(await told)) pollStop.abort();
      await polling;
      await waitForAttempts();
      if (phase !== "draining") return;
      loopsStop.abort();
      await Promise.all(loops);
      await state?.flush();
      await unlock?.();
      await transport.close();
      phase = "stopped";
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
      await Promise.all(loops);
      await state?.flush();
      await unlock?.();
      await transport.close();
      phase = "stopped";
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
