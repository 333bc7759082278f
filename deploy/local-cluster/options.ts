/** The command-line options `make cluster`, `make cluster-stop` and `make chaos` share, and the binaries they run. */
import { accessSync, constants as fsConstants } from "node:fs";
import { delimiter, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { findNatsServerBinary, NATS_SERVER_NOT_FOUND } from "../../shared/nats-server/index.js";
import type { ClusterSettings } from "./layout.js";

export const REPO_ROOT = fileURLToPath(new URL("../..", import.meta.url));

export const ClusterFlags = z.object({
  /** The state directory: stores, logs, pids, the login. */
  dir: z.string().min(1).default(".data/cluster"),
  /** The load balancer's port; every other port is above it (base to base+99). */
  "base-port": z.coerce.number().int().min(1024).max(65_435).default(18_000),
});
export type ClusterFlags = z.infer<typeof ClusterFlags>;

function executable(path: string): boolean {
  try {
    accessSync(path, fsConstants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** HAPROXY_BIN, else haproxy on PATH or in /usr/sbin (where Debian puts it). */
export function findHaproxy(env: Record<string, string | undefined>): string {
  if (env.HAPROXY_BIN) {
    if (!executable(env.HAPROXY_BIN)) throw new Error(`HAPROXY_BIN=${env.HAPROXY_BIN} is not an executable file`);
    return env.HAPROXY_BIN;
  }
  const dirs = [...(env.PATH ?? "").split(delimiter).filter(Boolean), "/usr/sbin", "/usr/local/sbin"];
  const found = dirs.map((dir) => join(dir, "haproxy")).find(executable);
  if (!found)
    throw new Error("no haproxy found: run `make cluster` (it installs Debian's haproxy package) or set HAPROXY_BIN");
  return found;
}

/** The state directory, absolute: a relative `--dir` is taken from the repository root, where `make` runs. */
export function stateDir(flags: ClusterFlags): string {
  return resolve(REPO_ROOT, flags.dir);
}

/** Everything the layout needs, from the flags and this machine. */
export function clusterSettings(flags: ClusterFlags, env: Record<string, string | undefined>): ClusterSettings {
  const natsServer = findNatsServerBinary(env);
  if (!natsServer) throw new Error(NATS_SERVER_NOT_FOUND);
  return {
    dir: stateDir(flags),
    basePort: flags["base-port"],
    root: REPO_ROOT,
    natsServer,
    haproxy: findHaproxy(env),
    node: process.execPath,
  };
}
