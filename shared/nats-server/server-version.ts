import { execFileSync } from "node:child_process";
import versions from "./versions.json" with { type: "json" };

/**
 * The nats-server release `make setup` builds, and the oldest one a service will run on.
 * Both are written once, in versions.json, which deploy/scripts/ensure-nats-server.sh reads too.
 * The minimum: clustered compare-and-set is unsafe before 2.9.21 (nats-server#4320),
 * `sync_interval: always`, which production needs, came in 2.10, per-message TTLs (the
 * job bucket's delete markers) in 2.11, and the log relay's byte quotas count in NATS
 * counters, new in 2.12.
 */
export const NATS_SERVER_PINNED: string = versions.pinned;
export const NATS_SERVER_MINIMUM: string = versions.minimum;

/** `[major, minor, patch]` of `v2.15.2`, `2.12.0-RC.1` or `nats-server: v2.10.4`; undefined when it has none. */
export function parseServerVersion(text: string): [number, number, number] | undefined {
  const match = /(\d+)\.(\d+)\.(\d+)/.exec(text);
  return match ? [Number(match[1]), Number(match[2]), Number(match[3])] : undefined;
}

/** Whether `version` is at least `NATS_SERVER_MINIMUM` (pre-releases count as their release). */
export function isSupportedServerVersion(version: string): boolean {
  const found = parseServerVersion(version);
  const minimum = parseServerVersion(NATS_SERVER_MINIMUM);
  if (!found || !minimum) return false;
  for (let part = 0; part < 3; part += 1) {
    if (found[part]! !== minimum[part]!) return found[part]! > minimum[part]!;
  }
  return true;
}

/** Thrown when a service meets a nats-server older than it supports. */
export class UnsupportedServerError extends Error {
  constructor(
    readonly found: string,
    where: string,
  ) {
    super(
      `nats-server ${found} (${where}) is too old: this service needs nats-server ${NATS_SERVER_MINIMUM} or newer ` +
        `(${NATS_SERVER_PINNED} is the tested release). Before 2.9.21 compare-and-set is unsafe on a cluster ` +
        `(nats-server#4320), before 2.10 no write is synced to disk before it is acknowledged, and before 2.12 ` +
        `there are no counters, in which the log relay keeps its quotas. ` +
        `\`make setup\` builds ${NATS_SERVER_PINNED}; see docs/operations.md#server-versions.`,
    );
    this.name = "UnsupportedServerError";
  }
}

/** Refuses a server older than the minimum; `where` names it in the message (a URL or a path). */
export function assertSupportedServer(version: string | undefined, where: string): void {
  if (version === undefined || !isSupportedServerVersion(version))
    throw new UnsupportedServerError(version ?? "of unknown version", where);
}

/** The version a nats-server binary reports (`nats-server --version`), or undefined when it does not run. */
export function binaryVersion(binary: string): string | undefined {
  try {
    const output = execFileSync(binary, ["--version"], {
      encoding: "utf8",
      timeout: 10_000,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const parsed = parseServerVersion(output);
    return parsed ? parsed.join(".") : undefined;
  } catch {
    return undefined;
  }
}
