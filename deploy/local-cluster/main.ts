/**
 * `make cluster`, `make cluster-stop`, `make cluster-clean`: a production-shaped cluster
 * on one machine (docs/operations.md, "A production-shaped cluster on one machine").
 *
 *   tsx deploy/local-cluster/main.ts start|stop|status|clean [--dir .data/cluster] [--base-port 18000]
 *
 * `start` returns once everything is ready; the processes run on in the background.
 */
import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { zodIssues } from "../../shared/runtime/index.js";
import { clusterBanner } from "./banner.js";
import { ClusterFlags, clusterSettings, stateDir } from "./options.js";
import { startCluster } from "./start.js";
import { readState } from "./state.js";
import { running, STOP_GRACE_MS, stopCluster } from "./stop.js";

const USAGE =
  "usage: tsx deploy/local-cluster/main.ts start|stop|status|clean [--dir .data/cluster] [--base-port 18000]\n";
const say = (line: string) => process.stdout.write(`cluster: ${line}\n`);

function fail(message: string, code = 1): never {
  process.stderr.write(`cluster: ${message}\n`);
  process.exit(code);
}

let command: string | undefined;
let flags: ClusterFlags;
try {
  const parsed = parseArgs({
    options: { dir: { type: "string" }, "base-port": { type: "string" } },
    allowPositionals: true,
  });
  command = parsed.positionals[0];
  const result = ClusterFlags.safeParse(parsed.values);
  if (!result.success)
    fail(
      `${zodIssues(result.error)
        .map((issue) => `--${issue.path} ${issue.message}`)
        .join("; ")}\n${USAGE}`,
      2,
    );
  flags = result.data;
} catch (error) {
  fail(`${(error as Error).message}\n${USAGE}`, 2);
}
const dir = stateDir(flags);
const state = readState(dir);
const alive = state ? running(state) : [];

switch (command) {
  case "start": {
    if (state && alive.length > 0) {
      const down = state.processes.filter((record) => !alive.includes(record)).map((record) => record.name);
      say(`already running in ${dir} (${alive.length} of ${state.processes.length} processes)`);
      if (down.length > 0)
        say(`not running: ${down.join(", ")}; \`make cluster-stop\` then \`make cluster\` starts them all again`);
      if (state.started_at) process.stdout.write(clusterBanner(state, dir));
      break;
    }
    let settings;
    try {
      settings = clusterSettings(flags, process.env);
    } catch (error) {
      fail((error as Error).message);
    }
    try {
      const started = await startCluster(settings, process.env, say);
      const banner = clusterBanner(started, dir);
      writeFileSync(join(dir, "cluster.txt"), banner, { mode: 0o600 });
      process.stdout.write(banner);
    } catch (error) {
      fail(`could not start the cluster: ${(error as Error).message}`);
    }
    break;
  }
  case "stop": {
    if (!state || alive.length === 0) {
      say(`nothing running in ${dir}`);
      break;
    }
    const outcome = await stopCluster(state, say);
    say(
      `stopped ${outcome.stopped.length} processes${outcome.killed.length > 0 ? ` (SIGKILL after ${STOP_GRACE_MS / 1000} s: ${outcome.killed.join(", ")})` : ""}; data kept in ${dir}`,
    );
    break;
  }
  case "status": {
    if (!state) {
      say(`no cluster in ${dir}`);
      break;
    }
    for (const record of state.processes)
      say(
        `  ${alive.includes(record) ? "running" : "stopped"}  ${record.name.padEnd(16)} pid ${record.pid}  ${record.log}`,
      );
    break;
  }
  case "clean": {
    if (alive.length > 0) fail(`the cluster in ${dir} is running; \`make cluster-stop\` first`);
    rmSync(dir, { recursive: true, force: true });
    say(`removed ${dir}`);
    break;
  }
  default:
    fail(USAGE, 2);
}
