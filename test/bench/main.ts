/**
 * `make bench`: the service's speed, measured on a real nats-server with the real
 * services (docs/benchmarks.md). Each scenario prints a progress line while it runs;
 * the results tables come at the end. Exits non-zero only when a scenario could not
 * complete, never because a number is low.
 */
import os from "node:os";
import { ConfigError } from "../../shared/runtime/index.js";
import { Cleanup } from "./cleanup.js";
import { loadBenchConfig, USAGE, type BenchConfig } from "./config.js";
import { backlog } from "./backlog.js";
import { burst } from "./burst.js";
import { billingBacklog } from "./billing-backlog.js";
import { logIngest } from "./log-ingest.js";
import { noisyNeighbour } from "./noisy-neighbour.js";
import { openLoop } from "./open-loop.js";
import { rateLimiterCost } from "./rate-limiter-cost.js";
import { scale } from "./scale.js";
import { submit } from "./submit.js";
import { Progress } from "./progress.js";
import { renderTable, writeJson } from "./report.js";
import type { Scenario, ScenarioOutcome } from "./scenario.js";

const SCENARIOS: readonly Scenario[] = [
  burst,
  openLoop,
  backlog,
  submit,
  logIngest,
  rateLimiterCost,
  noisyNeighbour,
  billingBacklog,
  scale,
];
const STOP_STEP_TIMEOUT_MS = 15_000;
const SIGNAL_STOP_MS = 3_000;

interface ScenarioRun {
  scenario: Scenario;
  outcome: ScenarioOutcome | undefined;
  elapsedMs: number;
  /** Set when the scenario threw: it did not complete. */
  error: string | undefined;
}

function machine(): string {
  const cpus = os.cpus();
  return `${cpus.length} × ${cpus[0]?.model.trim() ?? "unknown CPU"}, ${Math.round(os.totalmem() / 2 ** 30)} GiB, load ${os
    .loadavg()
    .map((load) => load.toFixed(1))
    .join(" ")}, Node ${process.version}, ${os.platform()} ${os.release()}`;
}

function parseConfigOrExit(): Readonly<BenchConfig> {
  let config: Readonly<BenchConfig> | "help";
  try {
    config = loadBenchConfig(process.argv.slice(2), process.env);
  } catch (error) {
    const message =
      error instanceof ConfigError ? error.message : error instanceof Error ? error.message : String(error);
    process.stderr.write(`bench: ${message}\n\n${USAGE}\n`);
    process.exit(2);
  }
  if (config === "help") {
    process.stdout.write(`${USAGE}\n`);
    process.exit(0);
  }
  return config;
}

async function main(): Promise<number> {
  const config = parseConfigOrExit();
  const cleanup = new Cleanup();
  const progress = new Progress();
  const interrupted = new AbortController();
  if (process.env.NATS_URL) {
    // The harness's startNats would use it; the bench needs servers it started, to read their CPU time.
    progress.note(`bench: ignoring NATS_URL=${process.env.NATS_URL}: every scenario starts a nats-server of its own`);
    delete process.env.NATS_URL;
  }

  let stopping: Promise<void> | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stopping) {
      // A second Ctrl-C: leave now; the harness kills its nats-servers on exit.
      process.exit(130);
    }
    progress.note(`bench: ${signal}, stopping what was started (Ctrl-C again to leave at once)`);
    interrupted.abort();
    // The harness has already killed its nats-servers and removed their stores on this
    // signal, so services stopping now may wait for a connection that is gone: give them
    // a moment, then leave (the in-process services end with the process).
    const leaveAt = setTimeout(() => process.exit(130), SIGNAL_STOP_MS);
    stopping = cleanup.stopAll(SIGNAL_STOP_MS).then((failures) => {
      clearTimeout(leaveAt);
      for (const failure of failures) progress.note(`bench: cleanup: ${failure}`);
      process.exit(130);
    });
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  const started = new Date();
  const runs: ScenarioRun[] = [];
  for (const scenario of SCENARIOS.filter(({ name }) => config.only.includes(name))) {
    if (interrupted.signal.aborted) break;
    const t0 = performance.now();
    progress.step(scenario.title);
    try {
      const outcome = await scenario.run({ config, cleanup, progress, signal: interrupted.signal });
      runs.push({ scenario, outcome, elapsedMs: performance.now() - t0, error: undefined });
    } catch (error) {
      runs.push({
        scenario,
        outcome: undefined,
        elapsedMs: performance.now() - t0,
        error: error instanceof Error ? (error.stack ?? error.message) : String(error),
      });
    }
    // Whatever a failed scenario left running goes before the next one starts.
    for (const failure of await cleanup.stopAll(STOP_STEP_TIMEOUT_MS)) progress.note(`bench: cleanup: ${failure}`);
  }
  progress.clear();
  if (interrupted.signal.aborted) {
    await stopping;
    return 130;
  }

  const totalSeconds = ((Date.now() - started.getTime()) / 1000).toFixed(0);
  const out: string[] = [
    `compute-job-service bench (${config.size}), ${started.toISOString()}, ${totalSeconds} s`,
    machine(),
    "each scenario starts its own nats-server, services, redis-server and BullMQ worker, each a process of its own; the bench process is the load",
    "",
  ];
  for (const run of runs) {
    const seconds = (run.elapsedMs / 1000).toFixed(1);
    if (run.outcome === undefined) {
      out.push(`${run.scenario.title}: DID NOT COMPLETE after ${seconds} s`, run.error ?? "", "");
      continue;
    }
    for (const table of run.outcome.tables) out.push(renderTable(table), "");
    if (run.outcome.failures.length > 0)
      out.push(
        `${run.scenario.title}: FAILED (${seconds} s)`,
        ...run.outcome.failures.map((failure) => `  ! ${failure}`),
        "",
      );
  }
  const failed = runs.filter((run) => run.outcome === undefined || run.outcome.failures.length > 0);
  out.push(
    failed.length === 0
      ? `all ${runs.length} scenarios completed`
      : `${failed.length} of ${runs.length} scenarios failed: ${failed.map((run) => run.scenario.name).join(", ")}`,
  );
  process.stdout.write(`${out.join("\n")}\n`);

  if (config.jsonFile !== undefined) {
    await writeJson(config.jsonFile, {
      started_at: started.toISOString(),
      size: config.size,
      machine: machine(),
      config,
      scenarios: runs.map((run) => ({
        name: run.scenario.name,
        elapsed_ms: run.elapsedMs,
        completed: run.outcome !== undefined && run.outcome.failures.length === 0,
        error: run.error ?? null,
        failures: run.outcome?.failures ?? [],
        results: run.outcome?.data ?? null,
      })),
    });
  }
  return failed.length === 0 ? 0 : 1;
}

// Exit at once: idle keep-alive sockets of the HTTP clients would hold the process for seconds.
process.exit(await main());
