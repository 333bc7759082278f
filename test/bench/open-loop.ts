import { startBullSide, type BullSide, type BullWorker } from "./bullmq/bull-side.js";
import { monotonicMs } from "./clock.js";
import { comparisonTable, figureData, formatNumber, type Figure } from "./compare.js";
import { JobTracker } from "./job-tracker.js";
import { countErrors, formatErrors, runOpenLoop } from "./load.js";
import { RAISED_RATE_LIMITS_NOTE, startOurSystem, type NodeFleet, type OurSystem } from "./ours/system.js";
import type { ResultTable, Scenario, ScenarioContext, ScenarioOutcome } from "./scenario.js";
import { percentile } from "./stats.js";
import { STAGE_NAMES, startStages, summariseStages, type StageSummary, type StartStages } from "./start-stages.js";
import { forEachBounded } from "../../shared/runtime/index.js";
import { JOB, NODES, SLOTS, ourJob, sideNotes } from "./workload.js";

const RATES = [100, 500, 1_000] as const;
/** Submits unanswered at once at most; one due beyond this is shed (and counted), not queued in the client. */
const MAX_IN_FLIGHT = 512;
/** After a step, its jobs that had not started within the settle time still get this long to finish before the next step. */
const DRAIN_TIMEOUT_MS = 180_000;
const POOL = "open-loop";
/** Jobs of one of our steps whose timelines are read for the stages (the slowest 1 % always among them). */
const STAGE_SAMPLE = 1_000;

type Side = "ours" | "bullmq";

interface Step {
  acceptedPerSecond: number;
  startedPerSecond: number;
  /** NaN when more than 1 % (p99) or half (p50) of the step's jobs had not started within the settle time. */
  p50Ms: number;
  p99Ms: number;
  shed: number;
  notStarted: number;
  lagP99Ms: number;
  /** Ours: where submit → start went (from a sample of the step's jobs' timelines). */
  stages?: StageSummary;
}

/** Percentile `p` of the sample where each missing value counts as infinitely late: NaN if one falls at the rank. */
function censoredPercentile(started: number[], missing: number, p: number): number {
  const all = [...started.sort((a, b) => a - b), ...Array.from({ length: missing }, () => Number.POSITIVE_INFINITY)];
  if (all.length === 0) return Number.NaN;
  const value = percentile(all, p);
  return Number.isFinite(value) ? value : Number.NaN;
}

/**
 * (c): jobs submitted at a fixed rate (100, 500 and 1000 a second) whatever the answers
 * do, onto idle nodes (ours, NATS-direct) or an idle Worker (BullMQ). Read: how many
 * submits were accepted and how many jobs started per second during the step, and
 * submit → start from each submit's intended time.
 */
export const openLoop: Scenario = {
  name: "open-loop",
  title: "open loop",
  async run(context: ScenarioContext): Promise<ScenarioOutcome> {
    const { config, cleanup, progress, signal } = context;
    const failures: string[] = [];
    let tracker = new JobTracker();
    const onStarted = (id: string, at: number) => tracker.started(id, at);
    const onFinished = (id: string, at: number) => tracker.completed(id, at);

    progress.step("open loop  starting our system");
    const ours: OurSystem = await startOurSystem(cleanup, progress, { logLevel: config.serviceLogLevel });
    let bull: BullSide | undefined;
    let worker: BullWorker | undefined;
    let fleet: NodeFleet | undefined;
    const steps = new Map<number, Record<Side, Step[]>>(RATES.map((rate) => [rate, { ours: [], bullmq: [] }]));
    try {
      fleet = await ours.startNodes({
        transport: "nats",
        pool: POOL,
        nodes: NODES,
        slots: SLOTS,
        onStarted,
        onFinished,
      });
      progress.step("open loop  starting BullMQ");
      bull = await startBullSide(cleanup, progress, "open-loop");
      worker = await bull.startWorker({ onStarted, onCompleted: onFinished });
      const queue = bull.queue;
      const submit: Record<Side, (index: number) => Promise<string>> = {
        ours: async (index) => (await ours.user.call("submitJob", ourJob(POOL, index))).job_id,
        bullmq: async (index) => (await queue.add("noop", { ...JOB, name: `bench-${index}` })).id!,
      };

      const step = async (side: Side, rate: number, label: string): Promise<Step | undefined> => {
        const name = side === "ours" ? "ours" : "BullMQ";
        progress.step(`open loop  ${label}: ${name}, ${rate} jobs/s`);
        tracker = new JobTracker();
        const current = tracker;
        const started = monotonicMs();
        const sent = await runOpenLoop(
          {
            ratePerSecond: rate,
            durationMs: config.openLoopStepMs,
            maxInFlight: MAX_IN_FLIGHT,
            signal,
            onProgress: ({ sent: count, ok }) =>
              progress.update(`${count} sent, ${ok} accepted, ${current.startedAt.size} started`),
          },
          async (index, intendedAtMs) => current.submitted(await submit[side](index), intendedAtMs),
        );
        if (countErrors(sent.errors) > 0) {
          failures.push(
            `${label}, ${name} at ${rate}/s: submits failed: ${formatErrors(sent.errors)} (${sent.errorSamples.join("; ")})`,
          );
          return undefined;
        }
        const stepEnd = started + config.openLoopStepMs;
        progress.update(`settling: ${current.completedCount}/${sent.ok} completed`);
        await current.waitForCompleted(sent.ok, Math.max(0, stepEnd + config.openLoopSettleMs - monotonicMs()), signal);
        const latencies = current.submitToStartMs();
        const notStarted = sent.ok - latencies.length;
        if (current.completedCount < sent.ok) {
          progress.update(`draining what is left: ${current.completedCount}/${sent.ok} completed`);
          if (!(await current.waitForCompleted(sent.ok, DRAIN_TIMEOUT_MS, signal)) && !signal.aborted) {
            failures.push(
              `${label}, ${name} at ${rate}/s: ${current.completedCount} of ${sent.ok} jobs completed ${DRAIN_TIMEOUT_MS / 1000} s after the settle time`,
            );
            return undefined;
          }
        }
        const lags = sent.lagMs.sort((a, b) => a - b);
        const stages = side === "ours" ? await stagesOf(current, started) : undefined;
        return {
          acceptedPerSecond: (sent.ok * 1000) / config.openLoopStepMs,
          startedPerSecond: (current.startedBy(stepEnd) * 1000) / config.openLoopStepMs,
          p50Ms: censoredPercentile(latencies, notStarted, 50),
          p99Ms: censoredPercentile(latencies, notStarted, 99),
          shed: sent.shed,
          notStarted,
          lagP99Ms: lags.length > 0 ? percentile(lags, 99) : 0,
          ...(stages === undefined ? {} : { stages }),
        };
      };

      /** The stages of a sample of the step's jobs, read from their timelines after the step (it adds no load to it). */
      const stagesOf = async (run: JobTracker, stepStartMs: number): Promise<StageSummary | undefined> => {
        const wall = Date.now() - monotonicMs();
        const started = [...run.sentAt].flatMap(([id, sentAt]) => {
          const at = run.startedAt.get(id);
          return at === undefined ? [] : [{ id, sentAt, at }];
        });
        started.sort((a, b) => b.at - b.sentAt - (a.at - a.sentAt));
        const slowest = Math.ceil(started.length / 100);
        const stride = Math.max(1, (started.length - slowest) / (STAGE_SAMPLE - slowest));
        const sample = [
          ...started.slice(0, slowest),
          ...started.slice(slowest).filter((_, index) => index % stride < 1),
        ];
        const stages: StartStages[] = [];
        await forEachBounded(sample, 8, async ({ id, sentAt, at }) => {
          const { job } = await ours.user.call("retrieveJob", { job_id: id });
          const one = startStages(job, sentAt + wall, at + wall, stepStartMs + wall);
          if (one) stages.push(one);
        });
        return summariseStages(stages, slowest);
      };

      // An unmeasured step per side first, so neither side's first step is the one that warms it up.
      for (const side of ["ours", "bullmq"] as const) {
        if (!signal.aborted && !(await step(side, RATES[0], "warm-up")))
          throw new Error(`the warm-up step on ${side} did not complete`);
      }
      for (let round = 1; round <= config.rounds && !signal.aborted; round++) {
        const order: Side[] = round % 2 === 1 ? ["ours", "bullmq"] : ["bullmq", "ours"];
        for (const rate of RATES) {
          const results = new Map<Side, Step | undefined>();
          for (const side of order)
            results.set(side, signal.aborted ? undefined : await step(side, rate, `round ${round}/${config.rounds}`));
          if (order.every((side) => results.get(side) !== undefined))
            for (const side of order) steps.get(rate)![side].push(results.get(side)!);
        }
      }
      for (const agent of fleet.agents)
        if (agent.unexpected.length > 0)
          failures.push(`node ${agent.nodeId}: ${agent.unexpected.slice(0, 3).join("; ")}`);
      if (worker.errors.length > 0)
        failures.push(`the BullMQ worker reported: ${worker.errors.slice(0, 3).join("; ")}`);
    } finally {
      progress.step("open loop  stopping");
      await bull?.stop();
      await ours.stop();
    }

    const figures: Figure[] = RATES.flatMap((rate) => {
      const { ours: mine, bullmq: theirs } = steps.get(rate)!;
      const pick = (key: Exclude<keyof Step, "stages">): Pick<Figure, "ours" | "theirs"> => ({
        ours: mine.map((s) => s[key]),
        theirs: theirs.map((s) => s[key]),
      });
      return [
        { label: `${rate}/s: submits accepted/s`, ...pick("acceptedPerSecond") },
        { label: `${rate}/s: jobs started/s`, ...pick("startedPerSecond") },
        { label: `${rate}/s: submit → start p50 ms`, ...pick("p50Ms") },
        { label: `${rate}/s: submit → start p99 ms`, ...pick("p99Ms") },
      ];
    });
    const all = [...steps.values()].flatMap((bySide) => [
      ...bySide.ours.map((s) => ({ side: "ours", ...s })),
      ...bySide.bullmq.map((s) => ({ side: "BullMQ", ...s })),
    ]);
    const sum = (side: string, key: "shed" | "notStarted") =>
      all.filter((s) => s.side === side).reduce((total, s) => total + s[key], 0);
    const lagP99 = Math.max(0, ...all.map((s) => s.lagP99Ms));
    return {
      tables: [
        comparisonTable(
          `(c) open loop: jobs submitted at a fixed rate onto idle nodes or an idle Worker (${config.openLoopStepMs / 1000} s per step)`,
          "BullMQ",
          figures,
          [
            `${steps.get(RATES[0])!.ours.length} rounds; in each, every rate on both sides (ours first in odd rounds, BullMQ first in even ones), after an unmeasured ${RATES[0]}/s step per side`,
            ...sideNotes(bull?.driver ?? "?", "NATS-direct"),
            `submit i is due at start + i ÷ rate whatever the answers; at most ${MAX_IN_FLIGHT} unanswered, beyond that a due submit is shed: ours shed ${sum("ours", "shed")}, BullMQ ${sum("BullMQ", "shed")} over all steps`,
            "jobs started/s: jobs of the step the nodes or the Worker received before the step ended, per second of the step; below the rate means the backlog grew",
            `submit → start is taken from each submit's intended time; a step's jobs that had not started ${config.openLoopSettleMs / 1000} s after it ended count as infinitely late, and a percentile that falls on one is shown as – (ours: ${sum("ours", "notStarted")} such jobs, BullMQ: ${sum("BullMQ", "notStarted")}); they are drained before the next step`,
            `the load generator's own lag (a submit sent after its due time), p99 over the worst step: ${formatNumber(lagP99)} ms`,
            RAISED_RATE_LIMITS_NOTE,
          ],
        ),
        stagesTable(steps, config.openLoopStepMs),
      ],
      data: {
        step_ms: config.openLoopStepMs,
        settle_ms: config.openLoopSettleMs,
        max_in_flight: MAX_IN_FLIGHT,
        figures: figures.map(figureData),
        steps: Object.fromEntries(steps),
      },
      failures,
    };
  },
};

const median = (values: number[]): number =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** Ours: where submit → start went at each rate, medians over the rounds. */
function stagesTable(steps: ReadonlyMap<number, Record<Side, Step[]>>, stepMs: number): ResultTable {
  const rows: string[][] = [];
  const early: string[] = [];
  for (const [rate, { ours }] of steps) {
    const summaries = ours.flatMap((step) => (step.stages === undefined ? [] : [step.stages]));
    if (summaries.length === 0) continue;
    for (const stage of Object.keys(STAGE_NAMES) as Array<keyof typeof STAGE_NAMES>)
      rows.push([
        `${rate}/s`,
        STAGE_NAMES[stage],
        formatNumber(median(summaries.map((summary) => summary.stages[stage].p50))),
        formatNumber(median(summaries.map((summary) => summary.stages[stage].slowestMean))),
      ]);
    const slowest = summaries.flatMap((summary) => summary.slowest);
    const inFirstTenth = slowest.filter((job) => job.dueInStep < stepMs / 10).length;
    early.push(`${rate}/s ${inFirstTenth} of ${slowest.length}`);
  }
  return {
    title: "(c) open loop, ours: where submit → start went (ms; medians over the rounds)",
    columns: ["rate", "stage", "p50", "mean of the slowest 1 %"],
    rows,
    notes: [
      `after each of our steps, up to ${STAGE_SAMPLE} of its jobs (the slowest 1 % among them) are retrieved and their timelines read: queued_at, the assigned event and started_at are the services' wall clock to the millisecond; the submit's due time and the node's receipt are the bench's`,
      "a stage high in the slowest 1 % alone is where the tail comes from; all stages high at once is the machine (every process waited for a core), not one step of the path",
      `the slowest 1 % due in the first tenth of their step (after the idle gap between steps): ${early.join("; ")}`,
    ],
  };
}
