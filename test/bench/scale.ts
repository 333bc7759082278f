import { mkdir } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { JOB_PARTITIONS } from "../../shared/records/index.js";
import { metricValue } from "../harness/readiness.js";
import { startBullSide, type BullSide, type BullWorker } from "./bullmq/bull-side.js";
import { comparisonTable, figureData, formatSpread, type Figure } from "./compare.js";
import { type BurstRun, BurstTracking, measuredBurst } from "./measured-burst.js";
import { profileSummaries } from "./ours/profiles.js";
import { RAISED_RATE_LIMITS_NOTE, startOurSystem, type OurSystem } from "./ours/system.js";
import type { ProcessRef } from "./proc-stats.js";
import type { ResultTable, Scenario, ScenarioContext, ScenarioOutcome } from "./scenario.js";
import { JOB, NODES, SLOTS, ourJob, sideNotes } from "./workload.js";

/** Scheduler replicas of each deployment the scenario measures, in order; the first is the reference. */
const REPLICA_COUNTS = [1, 2, 3] as const;
const GATEWAYS = 2;
const LOAD_GENERATOR = "load generator";
/** How long a deployment may take to spread the partitions over its replicas. */
const SPREAD_TIMEOUT_MS = 60_000;
const POOL = "scale";
/**
 * The steady runs: each replica's share of the rate is the same in every deployment
 * (N replicas get N times this), so each replica works at the pace the single one did
 * and the split is not mixed with how much less a replica batches at half the pace.
 */
const STEADY_RATE_PER_REPLICA = 80;
const STEADY_SECONDS = 6;

/** One deployment's measured bursts, and BullMQ's bursts run between them. */
interface Deployment {
  replicas: number;
  /** The scheduler processes' names, as the CPU readings use them. */
  schedulers: string[];
  ours: BurstRun[];
  bullmq: BurstRun[];
  /**
   * Steady runs by rate, one per round: at STEADY_RATE_PER_REPLICA × replicas; the single
   * replica also at every other deployment's rate (the same total rate on one replica).
   */
  steadyAt: Map<number, BurstRun[]>;
  /** Jobs each replica placed over the measured bursts, by name (the cjs_scheduler_placements_total delta). */
  placed: Map<string, number>;
  /** Partitions each replica owned when the bursts began. */
  owned: Map<string, number>;
  /** With `--cpu-prof`: the first replica's profile over the measured bursts. */
  profile: ResultTable[];
}

/**
 * (h) Scheduler replicas: the same bursts of no-op jobs as (a), NATS-direct nodes, against
 * deployments of 1, 2 and 3 scheduler replicas (2 gateways each, submits taking turns
 * between them), each round beside a BullMQ burst. Read: jobs/s, and the scheduler CPU per
 * 1000 jobs of each replica and in total against the single replica's: on a machine with
 * a core per replica, the busiest replica's share is what bounds the rate.
 */
export const scale: Scenario = {
  name: "scale",
  title: "scheduler replicas",
  async run(context: ScenarioContext): Promise<ScenarioOutcome> {
    const { config, cleanup, progress, signal } = context;
    const failures: string[] = [];
    const tracking = new BurstTracking();
    const deployments: Deployment[] = [];
    const jobs = config.scaleJobs;

    if (config.cpuProfileDir !== undefined) await mkdir(config.cpuProfileDir, { recursive: true });
    progress.step("scale  starting BullMQ");
    const bull: BullSide = await startBullSide(cleanup, progress, "scale");
    const redisDriver = bull.driver;
    let worker: BullWorker | undefined;
    try {
      worker = await bull.startWorker({ onStarted: tracking.onStarted, onCompleted: tracking.onFinished });
      const loadGenerator: ProcessRef = { name: LOAD_GENERATOR, pid: process.pid };
      const bullProcesses = [bull.redis, worker.process, loadGenerator];
      const queue = bull.queue;
      const bullBurst = (label: string, count: number) =>
        measuredBurst({
          tracking,
          submitOne: async (index) => (await queue.add("noop", { ...JOB, name: `bench-${index}` })).id!,
          measured: bullProcesses,
          jobs: count,
          label: `scale  ${label}: BullMQ`,
          progress,
          signal,
        });

      for (const replicas of REPLICA_COUNTS) {
        if (signal.aborted) break;
        progress.step(`scale  starting our system with ${replicas} scheduler replica(s) and ${GATEWAYS} gateways`);
        const ours = await startOurSystem(cleanup, progress, {
          logLevel: config.serviceLogLevel,
          replicas: { scheduler: replicas, gateway: GATEWAYS },
          ...(config.cpuProfileDir === undefined
            ? {}
            : { cpuProfile: { dir: config.cpuProfileDir, services: ["scheduler"] } }),
        });
        let deployment: Deployment | undefined;
        try {
          const schedulers = [...ours.opsUrls.keys()].filter((name) => name.startsWith("scheduler"));
          const owned = await waitForSpread(ours, schedulers, signal);
          if (typeof owned === "string") {
            failures.push(`${replicas} replica(s): ${owned}`);
            continue;
          }
          await ours.startNodes({
            transport: "nats",
            pool: POOL,
            nodes: NODES,
            slots: SLOTS,
            onStarted: tracking.onStarted,
            onFinished: tracking.onFinished,
          });
          const clients = ours.gatewayUrls.map((url) => ours.clientOf(url));
          const measured = [...ours.processes, loadGenerator];
          const oursBurst = (label: string, count: number) =>
            measuredBurst({
              tracking,
              // Submits take turns between the gateways, as a load balancer would spread them.
              submitOne: async (index) =>
                (await clients[index % clients.length]!.call("submitJob", ourJob(POOL, index))).job_id,
              measured,
              jobs: count,
              label: `scale  ${label}: ${replicas} scheduler replica(s)`,
              progress,
              signal,
            });
          const warm = await oursBurst("warm-up", config.warmupJobs);
          if ("failure" in warm) {
            failures.push(warm.failure);
            continue;
          }
          const placedBefore = await placementsOf(ours, schedulers);
          deployment = {
            replicas,
            schedulers,
            ours: [],
            bullmq: [],
            steadyAt: new Map(),
            placed: new Map(),
            owned,
            profile: [],
          };
          for (let round = 1; round <= config.rounds && !signal.aborted; round++) {
            const label = `round ${round}/${config.rounds}`;
            const ourRun = await oursBurst(label, jobs);
            const theirRun = signal.aborted ? undefined : await bullBurst(label, jobs);
            for (const run of [ourRun, theirRun]) if (run && "failure" in run) failures.push(run.failure);
            // A round counts only when both sides ran: its ratios need both.
            if (ourRun && !("failure" in ourRun) && theirRun && !("failure" in theirRun)) {
              deployment.ours.push(ourRun);
              deployment.bullmq.push(theirRun);
            }
          }
          const placedAfter = await placementsOf(ours, schedulers);
          const rates = (replicas === 1 ? REPLICA_COUNTS : [replicas]).map((n) => STEADY_RATE_PER_REPLICA * n);
          for (let round = 1; round <= config.rounds && !signal.aborted; round++)
            for (const rate of rates) {
              const run = await measuredBurst({
                tracking,
                submitOne: async (index) =>
                  (await clients[index % clients.length]!.call("submitJob", ourJob(POOL, index))).job_id,
                measured,
                jobs: rate * STEADY_SECONDS,
                label: `scale  steady round ${round}/${config.rounds}: ${replicas} scheduler replica(s) at ${rate} jobs/s`,
                progress,
                signal,
                ratePerSecond: rate,
              });
              if ("failure" in run) failures.push(run.failure);
              else deployment.steadyAt.set(rate, [...(deployment.steadyAt.get(rate) ?? []), run]);
            }
          for (const name of schedulers)
            deployment.placed.set(name, (placedAfter.get(name) ?? 0) - (placedBefore.get(name) ?? 0));
          deployments.push(deployment);
        } finally {
          progress.step(`scale  stopping the deployment of ${replicas}`);
          await ours.stop();
        }
        // The first replica writes its profile as it exits.
        if (config.cpuProfileDir !== undefined && deployment)
          deployment.profile = await profileSummaries(
            ours,
            deployment.ours,
            `measured bursts with ${replicas} scheduler replica(s), first replica`,
          );
      }
      if (worker.errors.length > 0)
        failures.push(`the BullMQ worker reported: ${worker.errors.slice(0, 3).join("; ")}`);
    } finally {
      await bull.stop();
    }
    return {
      tables: scaleTables(deployments, jobs, config.rounds, redisDriver),
      data: scaleData(deployments, jobs),
      failures,
    };
  },
};

/**
 * Waits until every partition is owned and each scheduler replica owns some (a replica
 * that joined takes its share within a renewal); answers each replica's count, or why not.
 */
async function waitForSpread(
  ours: OurSystem,
  schedulers: readonly string[],
  signal: AbortSignal,
): Promise<Map<string, number> | string> {
  const deadline = Date.now() + SPREAD_TIMEOUT_MS;
  let owned = new Map<string, number>();
  while (Date.now() < deadline && !signal.aborted) {
    owned = new Map(
      await Promise.all(
        schedulers.map(
          async (name) =>
            [name, (await metricValue(ours.opsUrls.get(name)!, "cjs_scheduler_partitions_owned")) ?? 0] as const,
        ),
      ),
    );
    const counts = [...owned.values()];
    if (counts.every((count) => count > 0) && counts.reduce((sum, count) => sum + count, 0) === JOB_PARTITIONS)
      return owned;
    await sleep(200);
  }
  // A replica that owns nothing: its own words say why (stuck starting, or exited).
  const idle = [...owned].filter(([, count]) => count === 0).map(([name]) => ours.describe(name));
  return `the partitions were not spread over the replicas within ${SPREAD_TIMEOUT_MS / 1000} s (owned: ${[...owned]
    .map(([name, count]) => `${name} ${count}`)
    .join(", ")})${idle.map((text) => `\n${text}`).join("")}`;
}

async function placementsOf(ours: OurSystem, schedulers: readonly string[]): Promise<Map<string, number>> {
  return new Map(
    await Promise.all(
      schedulers.map(
        async (name) =>
          [name, (await metricValue(ours.opsUrls.get(name)!, "cjs_scheduler_placements_total")) ?? 0] as const,
      ),
    ),
  );
}

const serversOnly = (run: BurstRun) =>
  [...run.cpuPer1000].filter(([name]) => name !== LOAD_GENERATOR).reduce((sum, [, ms]) => sum + ms, 0);
const schedulerCpu = (deployment: Deployment, run: BurstRun) =>
  deployment.schedulers.map((name) => run.cpuPer1000.get(name) ?? Number.NaN);
/** The bursts (`ours`) or the steady runs of a deployment. */
type RunsOf = (deployment: Deployment) => readonly BurstRun[];
const bursts: RunsOf = (deployment) => deployment.ours;
const steadyRate = (deployment: Deployment) => STEADY_RATE_PER_REPLICA * deployment.replicas;
/** A deployment's steady runs at its own rate. */
const steadyRuns: RunsOf = (deployment) => deployment.steadyAt.get(steadyRate(deployment)) ?? [];
const busiest = (deployment: Deployment, runs: RunsOf = bursts) =>
  runs(deployment).map((run) => Math.max(...schedulerCpu(deployment, run)));
const summed = (deployment: Deployment, runs: RunsOf = bursts) =>
  runs(deployment).map((run) => schedulerCpu(deployment, run).reduce((sum, ms) => sum + ms, 0));

/**
 * Each deployment's busiest replica and all its replicas together, against the single
 * replica's runs that `reference` picks for it (by default its runs of the same kind).
 */
function splitFigures(
  deployments: readonly Deployment[],
  runs: RunsOf,
  reference: (single: Deployment, deployment: Deployment) => readonly BurstRun[] = (single) => runs(single),
): Figure[] {
  const single = deployments.find((deployment) => deployment.replicas === 1);
  if (!single) return [];
  return deployments
    .filter((deployment) => deployment !== single)
    .flatMap((deployment) => {
      const theirs = summed(single, () => reference(single, deployment));
      return [
        { label: `${deployment.replicas} replicas: the busiest replica`, ours: busiest(deployment, runs), theirs },
        { label: `${deployment.replicas} replicas: all replicas together`, ours: summed(deployment, runs), theirs },
      ];
    });
}

function scaleTables(
  deployments: readonly Deployment[],
  jobs: number,
  rounds: number,
  redisDriver: string,
): ResultTable[] {
  const against = (deployment: Deployment): Figure[] => [
    {
      label: "jobs/s, first submit → last completed",
      ours: deployment.ours.map((run) => run.jobsPerSecond),
      theirs: deployment.bullmq.map((run) => run.jobsPerSecond),
    },
    {
      label: "submit → start p99 ms",
      ours: deployment.ours.map((run) => run.p99Ms),
      theirs: deployment.bullmq.map((run) => run.p99Ms),
    },
    {
      label: "all but the load generator, CPU ms per 1000 jobs",
      ours: deployment.ours.map(serversOnly),
      theirs: deployment.bullmq.map(serversOnly),
    },
  ];
  return [
    ...deployments.map((deployment) =>
      comparisonTable(
        `(h) scale: ${deployment.replicas} scheduler replica(s), ${GATEWAYS} gateways, NATS-direct nodes, against BullMQ (${jobs} no-op jobs per burst)`,
        "BullMQ",
        against(deployment),
        deployment === deployments[0]
          ? [
              `${rounds} rounds per deployment, each ours then BullMQ, after an unmeasured burst of ours; submits take turns between the ${GATEWAYS} gateways`,
              ...sideNotes(redisDriver, "NATS-direct"),
              RAISED_RATE_LIMITS_NOTE,
            ]
          : [],
      ),
    ),
    {
      title: "(h) scale: scheduler CPU ms per 1000 jobs, by replica, and the partitions and placements each had",
      columns: ["replicas", "replica", "partitions owned", "jobs placed", "CPU ms per 1000 jobs (min / median / max)"],
      rows: deployments.flatMap((deployment) => [
        ...deployment.schedulers.map((name) => [
          String(deployment.replicas),
          name,
          String(deployment.owned.get(name) ?? "–"),
          String(deployment.placed.get(name) ?? "–"),
          formatSpread(deployment.ours.map((run) => run.cpuPer1000.get(name) ?? Number.NaN)),
        ]),
        [String(deployment.replicas), "all replicas", String(JOB_PARTITIONS), "", formatSpread(summed(deployment))],
      ]),
      notes: [
        "read from /proc/<pid>/stat over each measured burst, in 10 ms ticks; jobs placed counts every assignment the replica made, a placement round's and those it handed a node with its result (take_next)",
        "every replica answers RPCs (submit, retrieve, a node's poll and result) whichever partition the job is in; a replica places, times and settles only its own partitions' jobs",
      ],
    },
    comparisonTable(
      "(h) scale: scheduler CPU per 1000 jobs against one replica's (the split; targets with 2 replicas: busiest ≤ 0.6, together ≤ 1.15)",
      "1 replica",
      splitFigures(deployments, bursts),
      [
        "ratios round by round against the single replica's round of the same number",
        "the busiest replica bounds the rate when each replica has a core: N replicas on N cores place up to single ÷ busiest times the jobs",
      ],
    ),
    {
      title: `(h) scale, steady: ${STEADY_RATE_PER_REPLICA} jobs/s per scheduler replica (${STEADY_SECONDS} s per round), scheduler CPU ms per 1000 jobs by replica`,
      columns: [
        "replicas",
        "rate, jobs/s",
        "replica",
        "CPU ms per 1000 jobs (min / median / max)",
        "submit → start p99 ms",
      ],
      rows: deployments.flatMap((deployment) =>
        [...deployment.steadyAt].flatMap(([rate, runs]) => [
          ...(deployment.replicas === 1
            ? []
            : deployment.schedulers.map((name) => [
                String(deployment.replicas),
                String(rate),
                name,
                formatSpread(runs.map((run) => run.cpuPer1000.get(name) ?? Number.NaN)),
                "",
              ])),
          [
            String(deployment.replicas),
            String(rate),
            deployment.replicas === 1 ? "scheduler" : "all replicas",
            formatSpread(summed(deployment, () => runs)),
            formatSpread(runs.map((run) => run.p99Ms)),
          ],
        ]),
      ),
      notes: [
        "a burst runs each of N replicas at about 1/N of the single replica's pace on two cores, and a replica costs more per job the less it batches; here each replica gets the same pace as the single one did, as it would with a core of its own",
        "each replica's CPU includes what it spends idle (timers, lease renewals: about 10 ms a second), which at this pace is near a tenth of its share",
      ],
    },
    comparisonTable(
      "(h) scale, steady: scheduler CPU per 1000 jobs against one replica's at the same rate per replica (targets with 2 replicas: busiest ≤ 0.6, together ≤ 1.15)",
      "1 replica",
      splitFigures(deployments, steadyRuns),
      ["ratios round by round against the single replica's steady round of the same number"],
    ),
    comparisonTable(
      "(h) scale, steady: the same, against one replica at the same total rate (the control: how much of the split is the higher rate's batching)",
      "1 replica",
      splitFigures(deployments, steadyRuns, (single, deployment) => single.steadyAt.get(steadyRate(deployment)) ?? []),
      [
        "the single replica run at N × the rate per replica: what the higher total rate alone does to the cost per job (the services around the scheduler batch more), taken out of the split",
      ],
    ),
    ...deployments.flatMap((deployment) => deployment.profile),
  ];
}

function scaleData(deployments: readonly Deployment[], jobs: number) {
  return {
    jobs_per_burst: jobs,
    gateways: GATEWAYS,
    deployments: deployments.map((deployment) => ({
      replicas: deployment.replicas,
      jobs_per_second: figureData({
        label: "jobs/s",
        ours: deployment.ours.map((run) => run.jobsPerSecond),
        theirs: deployment.bullmq.map((run) => run.jobsPerSecond),
      }),
      scheduler_cpu_ms_per_1000_jobs: Object.fromEntries(
        deployment.schedulers.map((name) => [name, deployment.ours.map((run) => run.cpuPer1000.get(name))]),
      ),
      cpu_ms_per_1000_jobs: deployment.ours.map((run) => Object.fromEntries(run.cpuPer1000)),
      bullmq_cpu_ms_per_1000_jobs: deployment.bullmq.map((run) => Object.fromEntries(run.cpuPer1000)),
      partitions_owned: Object.fromEntries(deployment.owned),
      placed: Object.fromEntries(deployment.placed),
      steady_scheduler_cpu_ms_per_1000_jobs_by_rate: Object.fromEntries(
        [...deployment.steadyAt].map(([rate, runs]) => [
          rate,
          Object.fromEntries(deployment.schedulers.map((name) => [name, runs.map((run) => run.cpuPer1000.get(name))])),
        ]),
      ),
    })),
  };
}
