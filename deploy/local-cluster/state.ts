/**
 * `<state dir>/cluster.json`: what runs (each process's spec and pid), where the load
 * balancer is and the admin login. `make cluster-stop` and `make chaos` read it; chaos
 * writes a restarted process's new pid back. Mode 0600: it holds the agents' API keys.
 */
import { readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { z } from "zod";

const ProcessRecord = z.object({
  name: z.string(),
  kind: z.enum(["nats", "service", "lb", "agent"]),
  command: z.string(),
  args: z.array(z.string()),
  env: z.record(z.string(), z.string()),
  log: z.string(),
  ports: z.array(z.number()),
  ready: z.discriminatedUnion("kind", [
    z.object({ kind: z.literal("http"), url: z.string() }),
    z.object({ kind: z.literal("jetstream"), url: z.string() }),
    z.object({ kind: z.literal("log"), message: z.string() }),
  ]),
  files: z.array(z.object({ path: z.string(), text: z.string() })),
  pid: z.number().int(),
});
export type ProcessRecord = z.infer<typeof ProcessRecord>;

export const ClusterState = z.object({
  started_at: z.string(),
  lb_url: z.string(),
  nats_urls: z.array(z.string()),
  app_id: z.string(),
  business_id: z.string(),
  email: z.string(),
  password: z.string(),
  processes: z.array(ProcessRecord),
});
export type ClusterState = z.infer<typeof ClusterState>;

export function statePath(dir: string): string {
  return join(dir, "cluster.json");
}

/** The recorded cluster, or null when none was started in `dir`. */
export function readState(dir: string): ClusterState | null {
  let text: string;
  try {
    text = readFileSync(statePath(dir), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
  return ClusterState.parse(JSON.parse(text));
}

/** Written whole to a temporary file and renamed, so a reader never sees half a file. */
export function writeState(dir: string, state: ClusterState): void {
  const path = statePath(dir);
  writeFileSync(`${path}.tmp`, `${JSON.stringify(state, null, 2)}\n`, { mode: 0o600 });
  renameSync(`${path}.tmp`, path);
}
