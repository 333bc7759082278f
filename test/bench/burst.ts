import { mkdir } from "node:fs/promises";
import { startBullSide, WORKER_CONCURRENCY, type BullSide, type BullWorker } from "./bullmq/bull-side.js";
import { comparisonTable, figureData, formatNumber, formatSpread, type Figure } from "./compare.js";
import { type BurstRun, BurstTracking, measuredBurst } from "./measured-burst.js";
import { JOB, NODES, SLOTS, ourJob, sideNotes } from "./workload.js";
import type { TimeWindow } from "./cpu-profile.js";
import { profileSummaries } from "./ours/profiles.js";
import { type Census, censusTables } from "./message-census.js";
import { countBurst } from "./ours/census-burst.js";
import {
  RAISED_RATE_LIMITS_NOTE,
  startOurSystem,
  type NodeFleet,
  type NodeTransport,
  type OurSystem,
} from "./ours/system.js";
import { cpuSince, cpuSnapshot, type ProcessRef } from "./proc-stats.js";
import type { Scenario, ScenarioContext, ScenarioOutcome } from "./scenario.js";

type Side = NodeTransport | "bullmq";

const LOAD_GENERATOR = "load generator";
/** How long every process is watched while nothing is asked of either side. */
const IDLE_MS = 3_000;
const SERVERS_ONLY = "all but the load generator";
/** The services `--cpu-prof` profiles. */
const PROFILED = ["scheduler", "gateway"] as const;

/** One burst's place on the monotonic clock, for the profiles. */
interface BurstWindow extends TimeWindow {
  description: string;
  label: string;
}

/**
 * (a), (b) and (d): bursts of no-op jobs end to end. Each burst submits N jobs from 32
 * clients as fast as they are answered, while the nodes (ours) or the Worker (BullMQ)
 * take them; it ends when the last one is completed. Read: jobs/s, submit → start
 * percentiles, and the CPU time each process used per 1000 jobs.
 */
export const burst: Scenario = {
  name: "burst",
  title: "burst end to end",
  async run(context: ScenarioContext): Promise<ScenarioOutcome> {
    const { config, cleanup, progress, signal } = context;
    const failures: string[] = [];
    const tracking = new BurstTracking();
    const { onStarted, onFinished } = tracking;

    progress.step("burst  starting our system");
    if (config.cpuProfileDir !== undefined) await mkdir(config.cpuProfileDir, { recursive: true });
    const ours: OurSystem = await startOurSystem(cleanup, progress, {
      logLevel: config.serviceLogLevel,
      monitor: config.count,
      ...(config.cpuProfileDir === undefined ? {} : { cpuProfile: { dir: config.cpuProfileDir, services: PROFILED } }),
    });
    let bull: BullSide | undefined;
    let worker: BullWorker | undefined;
    const fleets = new Map<NodeTransport, NodeFleet>();
    const runs: Record<Side, BurstRun[]> = { nats: [], http: [], bullmq: [] };
    let idle: Array<{ side: string; name: string; msPerSecond: number }> | undefined;
    const windows: BurstWindow[] = [];
    const censuses: Array<{
      title: string;
      jobs: number;
      census: Census;
      notes: string[];
      cpuPer1000: Map<string, number> | undefined;
    }> = [];
    try {
      for (const transport of ["nats", "http"] as const) {
        progress.update(`registering ${NODES} ${transport} nodes`);
        fleets.set(
          transport,
          await ours.startNodes({
            transport,
            pool: `burst-${transport}`,
            nodes: NODES,
            slots: SLOTS,
            onStarted,
            onFinished,
          }),
        );
      }
      progress.step("burst  starting BullMQ");
      bull = await startBullSide(cleanup, progress, "burst");
      worker = await bull.startWorker({ onStarted, onCompleted: onFinished });
      const loadGenerator: ProcessRef = { name: LOAD_GENERATOR, pid: process.pid };
      const processes: Record<Side, ProcessRef[]> = {
        nats: [...ours.processes, loadGenerator],
        http: [...ours.processes, loadGenerator],
        bullmq: [bull.redis, worker.process, loadGenerator],
      };
      const queue = bull.queue;
      const submit: Record<Side, (index: number) => Promise<string>> = {
        nats: async (index) => (await ours.user.call("submitJob", ourJob("burst-nats", index))).job_id,
        http: async (index) => (await ours.user.call("submitJob", ourJob("burst-http", index))).job_id,
        bullmq: async (index) => (await queue.add("noop", { ...JOB, name: `bench-${index}` })).id!,
      };

      const burstWith = async (
        description: string,
        submitOne: (index: number) => Promise<string>,
        measured: ProcessRef[],
        jobs: number,
        label: string,
      ): Promise<BurstRun | undefined> => {
        const run = await measuredBurst({
          tracking,
          submitOne,
          measured,
          jobs,
          label: `burst  ${label}: ${description}`,
          progress,
          signal,
        });
        if ("failure" in run) {
          failures.push(run.failure);
          return undefined;
        }
        windows.push({ description, label, startMs: run.startMs, endMs: run.endMs });
        return run;
      };
      const burstOn = (side: Side, jobs: number, label: string) =>
        burstWith(describeSide(side), submit[side], processes[side], jobs, label);

      for (const side of ["nats", "http", "bullmq"] as const) {
        if (!signal.aborted && !(await burstOn(side, config.warmupJobs, "warm-up")))
          throw new Error(`the warm-up burst on ${describeSide(side)} did not complete`);
      }
      progress.step(`burst  both sides idle for ${IDLE_MS / 1000} s`);
      const idleProcesses = [
        ...ours.processes.map((ref) => ({ side: "ours", ...ref })),
        ...[bull.redis, worker.process].map((ref) => ({ side: "BullMQ", ...ref })),
      ];
      const idleBefore = cpuSnapshot(idleProcesses);
      await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
      const idleCpu = cpuSince(idleBefore, idleProcesses);
      idle = idleProcesses.map(({ side, name }) => ({
        side,
        name,
        msPerSecond: (idleCpu.get(name)! * 1000) / IDLE_MS,
      }));

      for (let round = 1; round <= config.rounds && !signal.aborted; round++) {
        // BullMQ between our two runs; ours in the other order every other round.
        const order: Side[] = round % 2 === 1 ? ["nats", "bullmq", "http"] : ["http", "bullmq", "nats"];
        const results = new Map<Side, BurstRun | undefined>();
        for (const side of order)
          results.set(
            side,
            signal.aborted ? undefined : await burstOn(side, config.burstJobs, `round ${round}/${config.rounds}`),
          );
        // A round counts only when all three ran: its ratios need both sides.
        if (order.every((side) => results.get(side) !== undefined))
          for (const side of order) runs[side].push(results.get(side)!);
      }
      const checked = new Set<NodeFleet>();
      const checkAgents = (fleet: NodeFleet | undefined) => {
        if (!fleet || checked.has(fleet)) return;
        checked.add(fleet);
        for (const agent of fleet.agents)
          if (agent.unexpected.length > 0)
            failures.push(`node ${agent.nodeId}: ${agent.unexpected.slice(0, 3).join("; ")}`);
      };
      checkAgents(fleets.get("http"));

      if (config.count && !signal.aborted) {
        // Only the fleet that takes the counted jobs runs: the others' polls would be counted too.
        await fleets.get("http")?.stop();
        const census = async (
          title: string,
          pool: string,
          description: string,
          submitOne: (index: number) => Promise<string>,
          notes: string[],
        ) => {
          const jobs = config.burstJobs;
          const counted = await countBurst({
            natsUrl: ours.natsUrl,
            monitorUrl: ours.monitorUrl!,
            jobs,
            progress,
            signal,
            dumpFile: config.censusDump === undefined ? undefined : `${config.censusDump}-${pool}.ndjson`,
            burst: async () => {
              const run = await burstWith(description, submitOne, processes.nats, jobs, "census");
              return run ? { ids: [...tracking.current.sentAt.keys()], cpuPer1000: run.cpuPer1000 } : undefined;
            },
          });
          if (!counted) return;
          if (counted.failure) failures.push(`census, ${description}: ${counted.failure}`);
          if (counted.census)
            censuses.push({ title, jobs, census: counted.census, notes, cpuPer1000: counted.cpuPer1000 });
        };
        await census(
          "self-hosted pool, NATS-direct nodes (as in the bursts above)",
          "self-hosted",
          describeSide("nats"),
          submit.nats,
          [
            `${NODES} fake agents × ${SLOTS} slots (NATS-direct) on a self-hosted pool: no credit check, no metering; clients submit over HTTP (node:http, kept-alive, as the agent sends) with a user API key (no key quotas)`,
          ],
        );
        checkAgents(fleets.get("nats"));
        await fleets.get("nats")?.stop();
        if (!signal.aborted) {
          progress.step("burst  census: an operator business with nodes on the operator pool");
          const operator = await ours.addTenant({ operator: true });
          const onOperatorPool = async (index: number) =>
            (await operator.user.call("submitJob", ourJob("default", index))).job_id;
          const fleet = await ours.startNodes({
            transport: "nats",
            pool: "default",
            nodes: NODES,
            slots: SLOTS,
            onStarted,
            onFinished,
            owner: operator,
          });
          fleets.set("nats", fleet);
          const description = "ours, operator pool, NATS-direct nodes";
          if (await burstWith(description, onOperatorPool, processes.nats, config.warmupJobs, "census warm-up")) {
            await census("operator pool, NATS-direct nodes", "operator", description, onOperatorPool, [
              `${NODES} fake agents × ${SLOTS} slots (NATS-direct) of an operator business on the operator pool "default": each submit asks billing for credit, each end is metered and charged on the free plan; clients submit over HTTP (node:http, kept-alive, as the agent sends) with a user API key (no key quotas)`,
            ]);
          }
        }
      }
      checkAgents(fleets.get("nats"));
      if (worker.errors.length > 0)
        failures.push(`the BullMQ worker reported: ${worker.errors.slice(0, 3).join("; ")}`);
    } finally {
      progress.step("burst  stopping");
      await bull?.stop();
      await ours.stop();
    }
    // The services write their profiles as they exit.
    const profiled =
      config.cpuProfileDir === undefined
        ? []
        : await profileSummaries(
            ours,
            windows.filter((window) => window.description === describeSide("nats") && window.label.startsWith("round")),
            "measured burst(s) with NATS-direct nodes",
          );

    const figures = (side: NodeTransport): Figure[] => [
      {
        label: "jobs/s, first submit → last completed",
        ours: runs[side].map((run) => run.jobsPerSecond),
        theirs: runs.bullmq.map((run) => run.jobsPerSecond),
      },
      {
        label: "submit → start p50 ms",
        ours: runs[side].map((run) => run.p50Ms),
        theirs: runs.bullmq.map((run) => run.p50Ms),
      },
      {
        label: "submit → start p99 ms",
        ours: runs[side].map((run) => run.p99Ms),
        theirs: runs.bullmq.map((run) => run.p99Ms),
      },
      {
        label: "submits/s meanwhile",
        ours: runs[side].map((run) => run.submitsPerSecond),
        theirs: runs.bullmq.map((run) => run.submitsPerSecond),
      },
    ];
    const totals = (side: Side, withLoad: boolean) =>
      runs[side].map((run) =>
        [...run.cpuPer1000]
          .filter(([name]) => withLoad || name !== LOAD_GENERATOR)
          .reduce((sum, [, ms]) => sum + ms, 0),
      );
    const cpuFigures: Figure[] = (["nats", "http"] as const).flatMap((side) => [
      { label: `all processes, ${describeSide(side)}`, ours: totals(side, true), theirs: totals("bullmq", true) },
      { label: `${SERVERS_ONLY}, ${describeSide(side)}`, ours: totals(side, false), theirs: totals("bullmq", false) },
    ]);
    const cpuRows = (["nats", "http", "bullmq"] as const).flatMap((side) => {
      const names = runs[side][0] ? [...runs[side][0].cpuPer1000.keys()] : [];
      return [
        ...names.map((name) => [
          describeSide(side),
          name,
          formatSpread(runs[side].map((run) => run.cpuPer1000.get(name) ?? Number.NaN)),
        ]),
        [describeSide(side), "total", formatSpread(totals(side, true))],
        [describeSide(side), SERVERS_ONLY, formatSpread(totals(side, false))],
      ];
    });
    const rounds = runs.bullmq.length;
    const common = [
      `${rounds} rounds of ${config.burstJobs} jobs per side, after an unmeasured burst of ${config.warmupJobs}; each round runs ours (NATS-direct), BullMQ, ours (HTTP), our two in the other order every other round`,
      ...sideNotes(bull?.driver ?? "?", "NATS-direct or HTTP"),
      "submit → start: from the client sending the submit to the node's poll (ours) or the Worker's processor (BullMQ) receiving the job, on the machine's monotonic clock",
      "ratios are taken round by round: below 1 for jobs/s means ours is slower; above 1 for latency means ours is slower",
      RAISED_RATE_LIMITS_NOTE,
    ];
    return {
      tables: [
        comparisonTable(
          `(a) burst end to end: ours with NATS-direct nodes against BullMQ (${config.burstJobs} no-op jobs per burst)`,
          "BullMQ",
          figures("nats"),
          common,
        ),
        comparisonTable(
          `(b) burst end to end: ours with HTTP nodes against BullMQ (${config.burstJobs} no-op jobs per burst)`,
          "BullMQ",
          figures("http"),
          ["the BullMQ runs are the same as in (a): each round's BullMQ burst is compared with both of ours"],
        ),
        {
          title: "(d) CPU time per 1000 jobs, by process, during the bursts of (a) and (b)",
          columns: ["side", "process", "CPU ms per 1000 jobs (min / median / max)"],
          rows: cpuRows,
          notes: [
            "read from /proc/<pid>/stat (user + system, every thread) before and after each burst; the kernel counts in 10 ms ticks",
            `the load generator is the bench's own process: the 32 submitting HTTP clients and the ${NODES} fake agents (ours), or the Queue client (BullMQ)`,
            "every process of a side is counted during its burst, busy or not",
          ],
        },
        comparisonTable("(d) CPU time per 1000 jobs, summed over the processes of each side", "BullMQ", cpuFigures, [
          "below 1: ours uses less CPU per job; above 1: more",
        ]),
        {
          title: `(d) CPU time of each process while both sides sat idle for ${IDLE_MS / 1000} s after the warm-up (nodes long-polling, the Worker blocked on Redis)`,
          columns: ["side", "process", "CPU ms per second"],
          rows: (idle ?? []).map(({ side, name, msPerSecond }) => [side, name, formatNumber(msPerSecond)]),
          notes: [
            "what each process spends on its own (timers, sweeps, heartbeats) and is in every figure above whether a job moves or not; one reading, in 10 ms ticks",
          ],
        },
        ...profiled,
        ...censuses.flatMap(({ title, jobs, census, notes, cpuPer1000 }) =>
          censusTables(census, title, jobs, notes, cpuPer1000),
        ),
      ],
      data: {
        jobs_per_burst: config.burstJobs,
        rounds,
        redis_driver: bull?.driver,
        nats_direct: figures("nats").map(figureData),
        http: figures("http").map(figureData),
        cpu_ms_per_1000_jobs: Object.fromEntries(
          (["nats", "http", "bullmq"] as const).map((side) => [
            side,
            runs[side].map((run) => Object.fromEntries(run.cpuPer1000)),
          ]),
        ),
        cpu_totals: cpuFigures.map(figureData),
        idle_cpu_ms_per_second: idle,
        worker_concurrency: WORKER_CONCURRENCY,
        censuses: censuses.map(({ title, jobs, census, cpuPer1000 }) => ({
          title,
          jobs,
          idle_seconds: census.idleSeconds,
          burst_seconds: census.burstSeconds,
          round_trips_per_job: census.roundTrips,
          durable_writes_per_job: census.durableWrites,
          rows: census.rows,
          connections: census.connections,
          trace: census.trace,
          cpu_ms_per_1000_jobs: cpuPer1000,
        })),
        cpu_profiles: config.cpuProfileDir === undefined ? undefined : Object.fromEntries(ours.cpuProfiles),
      },
      failures,
    };
  },
};

function describeSide(side: Side): string {
  return side === "nats" ? "ours, NATS-direct nodes" : side === "http" ? "ours, HTTP nodes" : "BullMQ";
}
