/** Waiting for a started process to be ready, by its probe; failing early when it dies. */
import { openSync, readSync, closeSync, statSync } from "node:fs";
import { setTimeout as delay } from "node:timers/promises";
import { waitForJetStream } from "../../shared/nats-server/index.js";
import { isOurs } from "./daemon.js";
import type { ReadyProbe } from "./layout.js";

const POLL_MS = 200;
const PROBE_TIMEOUT_MS = 2_000;
const LOG_TAIL_BYTES = 4_000;

/** The size of a log file now (0 when missing): a log probe only reads what is written after it. */
export function logSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

function readFrom(path: string, offset: number): string {
  let fd: number;
  try {
    fd = openSync(path, "r");
  } catch {
    return "";
  }
  try {
    const size = statSync(path).size;
    if (size <= offset) return "";
    const buffer = Buffer.alloc(size - offset);
    readSync(fd, buffer, 0, buffer.length, offset);
    return buffer.toString("utf8");
  } finally {
    closeSync(fd);
  }
}

/** The end of a log, for error messages. */
export function logTail(path: string): string {
  return readFrom(path, Math.max(0, logSize(path) - LOG_TAIL_BYTES));
}

function loggedMessage(text: string, message: string): boolean {
  return text.split("\n").some((line) => {
    try {
      return (JSON.parse(line) as { msg?: unknown }).msg === message;
    } catch {
      return false;
    }
  });
}

/** One check of the probe: true when ready now. */
export async function probeOnce(probe: ReadyProbe, log: string, logOffset: number): Promise<boolean> {
  switch (probe.kind) {
    case "http":
      try {
        const response = await fetch(probe.url, { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
        await response.body?.cancel();
        return response.status === 200;
      } catch {
        return false;
      }
    case "jetstream":
      try {
        await waitForJetStream(probe.url, undefined, PROBE_TIMEOUT_MS);
        return true;
      } catch {
        return false;
      }
    case "log":
      return loggedMessage(readFrom(log, logOffset), probe.message);
  }
}

export interface ReadyTarget {
  name: string;
  pid: number;
  identity: string;
  ready: ReadyProbe;
  log: string;
  /** Where the log stood when the process was started. */
  logOffset: number;
}

/** Resolves once the target is ready; throws with its log's tail when it exits first or `timeoutMs` passes. */
export async function waitReady(target: ReadyTarget, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await probeOnce(target.ready, target.log, target.logOffset)) return;
    if (!isOurs(target.pid, target.identity)) {
      throw new Error(
        `${target.name} (pid ${target.pid}) exited before it was ready; the end of ${target.log}:\n${logTail(target.log)}`,
      );
    }
    await delay(POLL_MS);
  }
  throw new Error(
    `${target.name} (pid ${target.pid}) was not ready within ${timeoutMs / 1000} s; the end of ${target.log}:\n${logTail(target.log)}`,
  );
}
