/**
 * `make chaos`: a bounded soak of the local cluster (docs/operations.md, "A
 * production-shaped cluster on one machine"). A steady stream of short jobs goes through
 * the load balancer while, one at a time, a NATS node, each service replica and an agent
 * are killed with SIGKILL and started again. At the end every acknowledged job must be
 * terminal, none may have run twice, and every charged attempt must have exactly one
 * debit. Starts the cluster first when it is not running.
 *
 *   tsx deploy/local-cluster/chaos/main.ts [--seconds 180] [--rate 2] [--quick] [--dir .data/cluster] [--base-port 18000]
 */
import { setTimeout as delay } from "node:timers/promises";
import { parseArgs } from "node:util";
import { z } from "zod";
import { randomBase62, zodIssues } from "../../../shared/runtime/index.js";
import { clusterBanner } from "../banner.js";
import { ClusterFlags, clusterSettings, stateDir } from "../options.js";
import { startCluster } from "../start.js";
import { type ClusterState, readState } from "../state.js";
import { running } from "../stop.js";
import { account, passed, recoveryOf, type FaultTiming } from "./accounting.js";
import { agentDeliveries, ledgerDebits, retrieveJobs } from "./collect.js";
import { createSoakCustomer } from "./customer.js";
import { ALL_FAULTS, injectFault, QUICK_FAULTS, restartDown, untilAllReady } from "./faults.js";
import { listJobsSince, terminalCount } from "./job-states.js";
import { PlacementSpread, samplePlacements, schedulerMetricsUrls } from "./placement-spread.js";
import { JobStream } from "./job-stream.js";
import { renderReport } from "./report.js";
import { Session } from "./session.js";

const USAGE =
  "usage: tsx deploy/local-cluster/chaos/main.ts [--seconds 180] [--rate 2] [--quick] [--dir .data/cluster] [--base-port 18000]\n";
const FULL_SECONDS = 180;
const QUICK_SECONDS = 75;
const WARMUP_MS = 5_000;
/** A fault is not started with less than this left of the stream: its recovery could not be seen. */
const FAULT_MIN_REMAINING_MS = 20_000;
const SETTLE_TIMEOUT_MS = 60_000;
const TERMINAL_TIMEOUT_MS = 180_000;
const CHARGE_TIMEOUT_MS = 120_000;
const POLL_MS = 2_000;
const PROGRESS_MS = 5_000;

const ChaosFlags = ClusterFlags.extend({
  /** How long the stream of jobs runs; faults are injected during it. */
  seconds: z.coerce.number().int().min(30).max(3_600).optional(),
  /** Jobs submitted per second. */
  rate: z.coerce.number().positive().max(20).default(2),
  /** A short soak: four faults (a NATS node, a gateway, a scheduler, an agent) in 75 s. */
  quick: z.boolean().default(false),
});

const say = (line: string) => process.stdout.write(`chaos: ${line}\n`);
function fail(message: string, code = 1): never {
  process.stderr.write(`chaos: ${message}\n`);
  process.exit(code);
}

let flags: z.infer<typeof ChaosFlags>;
try {
  const parsed = parseArgs({
    options: {
      dir: { type: "string" },
      "base-port": { type: "string" },
      seconds: { type: "string" },
      rate: { type: "string" },
      quick: { type: "boolean" },
    },
  });
  const result = ChaosFlags.safeParse(parsed.values);
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
const streamMs = (flags.seconds ?? (flags.quick ? QUICK_SECONDS : FULL_SECONDS)) * 1000;
const targets: readonly string[] = flags.quick ? QUICK_FAULTS : ALL_FAULTS;
const dir = stateDir(flags);

async function clusterState(): Promise<ClusterState> {
  const recorded = readState(dir);
  const alive = recorded ? running(recorded) : [];
  if (recorded && alive.length === recorded.processes.length && recorded.started_at) return recorded;
  if (recorded && alive.length > 0) {
    const down = recorded.processes.filter((record) => !alive.includes(record)).map((record) => record.name);
    fail(
      `the cluster in ${dir} is only partly running (not running: ${down.join(", ")}); \`make cluster-stop\` then \`make chaos\``,
    );
  }
  say(`no cluster running in ${dir}; starting one`);
  const started = await startCluster(clusterSettings(flags, process.env), process.env, (line) => say(line.trim()));
  process.stdout.write(clusterBanner(started, dir));
  return started;
}

const state = await clusterState().catch((error: Error) => fail(error.message));
const notReady = await untilAllReady(state, SETTLE_TIMEOUT_MS);
if (notReady.length > 0) fail(`not ready: ${notReady.join(", ")}; see their logs in ${dir}/logs`);

// Interrupted (Ctrl-C) between a kill and its restart, the soak still leaves the whole cluster running.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    const restarted = restartDown(state, dir, process.env);
    say(`interrupted${restarted.length > 0 ? `; started ${restarted.join(", ")} again` : ""}; no verdict`);
    process.exit(130);
  });
}

const runId = randomBase62(6);
const customer = await createSoakCustomer(state.nats_urls, state.app_id, runId).catch((error: Error) =>
  fail(`could not create the soak's customer business: ${error.message}`),
);
const session = new Session({
  lbUrl: state.lb_url,
  appId: state.app_id,
  email: customer.email,
  password: customer.password,
});
const startedAtMs = Date.now();
// A second of slack: the gateway's clock stamps created_at, ours stamps the start.
const since = new Date(startedAtMs - 1_000).toISOString();
say(
  `run ${runId}: ${flags.rate} jobs/s for ${streamMs / 1000} s through ${state.lb_url}; faults: ${targets.join(", ")}`,
);

const stream = new JobStream(session, runId, flags.rate);
let phase = "warming up";
let terminalSoFar = 0;
const progress = setInterval(() => {
  const elapsed = Math.round((Date.now() - startedAtMs) / 1000);
  say(
    `${elapsed} s · submitted ${stream.submissions.length} · acknowledged ${stream.acknowledged} · terminal ${terminalSoFar} · ${phase}`,
  );
}, PROGRESS_MS);
const spread = new PlacementSpread();
const schedulerMetrics = schedulerMetricsUrls(state);
const tracking = (async () => {
  while (phase !== "done") {
    await samplePlacements(spread, schedulerMetrics);
    try {
      const listed = await listJobsSince(session, since);
      terminalSoFar = terminalCount(
        stream.submissions.flatMap((submission) => (submission.jobId ? [submission.jobId] : [])),
        listed,
      );
    } catch {
      // A poll during a fault may fail; the next one counts.
    }
    await delay(POLL_MS);
  }
})();

stream.start();
await delay(WARMUP_MS);
const timings: FaultTiming[] = [];
const skipped: string[] = [];
for (const [index, target] of targets.entries()) {
  if (Date.now() - startedAtMs > streamMs - FAULT_MIN_REMAINING_MS) {
    skipped.push(target);
    continue;
  }
  phase = `fault ${index + 1}/${targets.length}: waiting for every process to be ready`;
  const waitingFor = await untilAllReady(state, SETTLE_TIMEOUT_MS);
  if (waitingFor.length > 0) say(`still not ready before ${target}: ${waitingFor.join(", ")}`);
  phase = `fault ${index + 1}/${targets.length}: ${target} killed`;
  const timing = await injectFault(state, dir, target, process.env);
  timings.push(timing);
  say(
    `${target}: killed, restarted, ${timing.readyAtMs === null ? `not ready (${timing.error})` : `ready ${((timing.readyAtMs - timing.killedAtMs) / 1000).toFixed(1)} s after the kill`}`,
  );
}
phase = "stream running, faults done";
const remaining = streamMs - (Date.now() - startedAtMs);
if (remaining > 0) await delay(remaining);
phase = "waiting for the answers to the last submits";
await stream.stop();

const acked = stream.submissions.flatMap((submission) => (submission.jobId ? [submission.jobId] : []));
phase = `waiting (at most ${TERMINAL_TIMEOUT_MS / 1000} s) for ${acked.length} acknowledged jobs to end`;
const terminalDeadline = Date.now() + TERMINAL_TIMEOUT_MS;
while (terminalSoFar < acked.length && Date.now() < terminalDeadline) await delay(POLL_MS);
phase = "done";
await tracking;
clearInterval(progress);
await samplePlacements(spread, schedulerMetrics);

say(`reading ${acked.length} jobs, the ledger and the agents' logs`);
const ackedSet = new Set(acked);
const finals = await retrieveJobs(session, acked, state.app_id);
const agentLogs = state.processes.filter((record) => record.kind === "agent").map((record) => record.log);
let result = account(
  stream.submissions,
  finals,
  await ledgerDebits(session, ackedSet, startedAtMs - 60_000),
  agentDeliveries(agentLogs, ackedSet),
);
// Billing charges from a durable stream shortly after each end, and its audit catches what that missed: wait for both.
const chargeDeadline = Date.now() + CHARGE_TIMEOUT_MS;
while (result.uncharged.length > 0 && Date.now() < chargeDeadline) {
  say(`${result.uncharged.length} charged attempts have no debit yet; waiting for billing`);
  await delay(POLL_MS * 2);
  result = account(
    stream.submissions,
    finals,
    await ledgerDebits(session, ackedSet, startedAtMs - 60_000),
    agentDeliveries(agentLogs, ackedSet),
  );
}

const listed = await listJobsSince(session, since);
const createdWithoutAck = [...listed].filter(
  ([jobId, job]) => job.metadata.chaos_run === runId && !ackedSet.has(jobId),
).length;
const faults = timings.map((timing) => ({ timing, recovery: recoveryOf(timing, stream.submissions, finals) }));
process.stdout.write(
  renderReport({
    result,
    faults,
    skipped,
    createdWithoutAck,
    placements: spread.placed,
    elapsedMs: Date.now() - startedAtMs,
  }),
);
const faultFailed = timings.some((timing) => timing.error !== null);
if (faultFailed) say("a killed process did not come back ready: see its log");
// Every replica places its partitions' jobs: one that placed nothing means placement did not spread.
const idle = spread.idle();
if (idle.length > 0) say(`placed nothing during the soak: ${idle.join(", ")}`);
// The cluster stays up for a look at its logs and metrics, or another soak; it holds ports and two cores' worth of processes.
say(`the cluster is still running (logs in ${dir}/logs); \`make cluster-stop\` stops it`);
process.exit(passed(result) && !faultFailed && idle.length === 0 ? 0 : 1);
