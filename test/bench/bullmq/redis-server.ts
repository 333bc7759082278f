import { spawn } from "node:child_process";
import { accessSync, constants, rmSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort } from "../../harness/free-port.js";
import { killOnExit } from "../../harness/kill-on-exit.js";
import { terminate } from "../bench-process.js";

/** A redis-server of the bench's own: loopback only, a free port, a temporary directory, nothing persisted. */
export interface RedisServer {
  readonly port: number;
  readonly pid: number;
  /** SIGTERM, then SIGKILL after a grace period; removes the directory. Idempotent. */
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 10_000;
const STOP_GRACE_MS = 5_000;
const PORT_ATTEMPTS = 5;

export const REDIS_SERVER_NOT_FOUND =
  "redis-server not found: `make bench` installs it (deploy/scripts/ensure-redis-server.sh); or set REDIS_SERVER_BIN to a redis-server binary";

export function findRedisServerBinary(env: Record<string, string | undefined>): string | undefined {
  const candidates = [
    env.REDIS_SERVER_BIN,
    ...(env.PATH ?? "").split(":").map((dir) => join(dir, "redis-server")),
    "/usr/bin/redis-server",
    "/usr/sbin/redis-server",
    "/usr/local/bin/redis-server",
  ];
  for (const candidate of candidates) {
    if (!candidate) continue;
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // the next one
    }
  }
  return undefined;
}

export async function startRedisServer(): Promise<RedisServer> {
  const binary = findRedisServerBinary(process.env);
  if (!binary) throw new Error(REDIS_SERVER_NOT_FOUND);
  for (let attempt = 1; ; attempt++) {
    // A directory per attempt: a failed attempt's stop removes its own.
    const dir = await mkdtemp(join(tmpdir(), "bench-redis-"));
    try {
      return await launch(binary, dir, await freePort());
    } catch (error) {
      if (!(error instanceof PortInUseError) || attempt >= PORT_ATTEMPTS) throw error;
    }
  }
}

class PortInUseError extends Error {}

async function launch(binary: string, dir: string, port: number): Promise<RedisServer> {
  // No RDB snapshots, no append-only file: a queue that lives in memory only, like a cache.
  const args = [
    "--port",
    String(port),
    "--bind",
    "127.0.0.1",
    "--dir",
    dir,
    "--save",
    "",
    "--appendonly",
    "no",
    "--daemonize",
    "no",
    "--logfile",
    "",
  ];
  const child = spawn(binary, args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("close", () => resolve()));
  const forget = killOnExit({
    killNow: () => {
      child.kill("SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    },
  });
  let stopped: Promise<void> | undefined;
  const stop = (): Promise<void> =>
    (stopped ??= (async () => {
      await terminate(child, exited, STOP_GRACE_MS);
      forget();
      await rm(dir, { recursive: true, force: true });
    })());

  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(`redis-server on port ${port} was not ready within ${READY_TIMEOUT_MS} ms; its output:\n${output}`),
        ),
      READY_TIMEOUT_MS,
    );
    const watch = (chunk: string) => {
      output = (output + chunk).slice(-8_000);
      if (output.includes("Ready to accept connections")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout.setEncoding("utf8").on("data", watch);
    child.stderr.setEncoding("utf8").on("data", watch);
    void exited.then(() => {
      clearTimeout(timer);
      const message = `redis-server on port ${port} exited (code ${child.exitCode}, signal ${child.signalCode}) before it was ready; its output:\n${output}`;
      reject(/address already in use/i.test(output) ? new PortInUseError(message) : new Error(message));
    });
  });
  try {
    await ready;
  } catch (error) {
    await stop();
    throw error;
  }
  return { port, pid: child.pid!, stop };
}
