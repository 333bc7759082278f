/**
 * One fault at a time: kill -9 a process of the cluster, keep it down a moment, start it
 * again exactly as `make cluster` did, and time its return. The new pid is written back to
 * the state file, so `make cluster-stop` still finds it.
 */
import { setTimeout as delay } from "node:timers/promises";
import { identityOf, isOurs, kill, spawnDetached, waitForExit } from "../daemon.js";
import { logSize, probeOnce, waitReady } from "../readiness.js";
import { type ClusterState, writeState } from "../state.js";
import type { FaultTiming } from "./accounting.js";

/** Long enough for clients and peers to notice the loss (failed requests, a NATS reconnect, a lost leader). */
const DOWN_MS = 3_000;
const READY_TIMEOUT_MS = 120_000;
const KILL_WAIT_MS = 5_000;
const SETTLE_POLL_MS = 500;

/** Every service replica in turn, one NATS node and one agent: the full soak's faults, in order. */
export const ALL_FAULTS = [
  "nats-2",
  "gateway-1",
  "gateway-2",
  "scheduler-1",
  "scheduler-2",
  "node-registry-1",
  "node-registry-2",
  "log-relay-1",
  "log-relay-2",
  "billing-1",
  "billing-2",
  "webhooks-1",
  "webhooks-2",
  "agent-1",
] as const;
/** `--quick`: one of each kind of process that matters most. */
export const QUICK_FAULTS = ["nats-2", "gateway-1", "scheduler-1", "agent-1"] as const;

export async function injectFault(
  state: ClusterState,
  dir: string,
  target: string,
  env: Record<string, string | undefined>,
): Promise<FaultTiming> {
  const record = state.processes.find((candidate) => candidate.name === target);
  if (!record) throw new Error(`no process named ${target} in the cluster`);
  const identity = identityOf(record);
  const killedAtMs = Date.now();
  kill(record.pid, "SIGKILL");
  const timing: FaultTiming = { target, killedAtMs, restartedAtMs: null, readyAtMs: null, error: null };
  if ((await waitForExit([{ pid: record.pid, identity }], KILL_WAIT_MS)).length > 0) {
    return { ...timing, error: `pid ${record.pid} did not exit after SIGKILL` };
  }
  await delay(DOWN_MS);
  const logOffset = logSize(record.log);
  record.pid = spawnDetached(record, env);
  timing.restartedAtMs = Date.now();
  writeState(dir, state);
  try {
    await waitReady(
      { name: record.name, pid: record.pid, identity, ready: record.ready, log: record.log, logOffset },
      READY_TIMEOUT_MS,
    );
    timing.readyAtMs = Date.now();
  } catch (error) {
    timing.error = (error as Error).message.split("\n")[0] ?? "not ready";
  }
  return timing;
}

/** Waits (bounded) until every process of the cluster answers its readiness probe, so faults never overlap. */
export async function untilAllReady(state: ClusterState, timeoutMs: number): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const checks = await Promise.all(
      state.processes
        .filter((record) => record.ready.kind !== "log")
        .map(async (record) => ((await probeOnce(record.ready, record.log, 0)) ? null : record.name)),
    );
    const notReady = checks.filter((name): name is string => name !== null);
    if (notReady.length === 0 || Date.now() >= deadline) return notReady;
    await delay(SETTLE_POLL_MS);
  }
}

/** Starts again every process of the cluster that is not running (a soak interrupted mid-fault leaves none down); returns their names. */
export function restartDown(state: ClusterState, dir: string, env: Record<string, string | undefined>): string[] {
  const down = state.processes.filter((record) => !isOurs(record.pid, identityOf(record)));
  for (const record of down) record.pid = spawnDetached(record, env);
  if (down.length > 0) writeState(dir, state);
  return down.map((record) => record.name);
}
