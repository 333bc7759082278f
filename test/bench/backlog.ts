import { startBullSide, type BullSide } from "./bullmq/bull-side.js";
import { comparisonTable, figureData, formatNumber, type Figure } from "./compare.js";
import { countErrors, formatErrors, runClosedLoop, type LoadResult } from "./load.js";
import { RAISED_RATE_LIMITS_NOTE, startOurSystem, type OurSystem } from "./ours/system.js";
import { rssBytes, type ProcessRef } from "./proc-stats.js";
import type { Scenario, ScenarioContext, ScenarioOutcome } from "./scenario.js";
import { percentile } from "./stats.js";
import { JOB, SUBMITTERS, ourJob, sideNotes } from "./workload.js";

const POOL = "backlog";
/** Clients filling the backlog on our side (BullMQ fills with addBulk: how it gets there does not matter, only that it is there). */
const FILLERS = 64;
const BULK = 1_000;
/** Clients reading at once in the list and retrieve windows. */
const READERS = 8;
const LIST_LIMIT = 50;
/** Unmeasured submits before each measured submit window. */
const SUBMIT_WARMUP = 200;
const MB = 1024 * 1024;

type Side = "ours" | "bullmq";
type Measure = "submit0" | "submitFull" | "list" | "retrieve";

interface Window {
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
}

function describeFailedReads({ answered, failed }: { answered: number; failed: Map<string, number> }): string {
  return failed.size === 0 ? "none" : `${formatErrors(failed)} (${answered} answered)`;
}

function summarise(result: LoadResult): Window {
  const sorted = [...result.latenciesMs].sort((a, b) => a - b);
  return {
    perSecond: (result.ok * 1000) / result.elapsedMs,
    p50Ms: sorted.length > 0 ? percentile(sorted, 50) : Number.NaN,
    p99Ms: sorted.length > 0 ? percentile(sorted, 99) : Number.NaN,
  };
}

/**
 * (e): a backlog of queued jobs that nobody takes (no node, no Worker). Read: the memory
 * of every process before and after, the submit rate when the queue is empty and when it
 * is full, and the latency of listing jobs and reading one while they wait.
 */
export const backlog: Scenario = {
  name: "backlog",
  title: "backlog",
  async run(context: ScenarioContext): Promise<ScenarioOutcome> {
    const { config, cleanup, progress, signal } = context;
    const failures: string[] = [];
    progress.step("backlog  starting our system");
    const ours: OurSystem = await startOurSystem(cleanup, progress, { logLevel: config.serviceLogLevel });
    let bull: BullSide | undefined;
    const windows: Record<Measure, Record<Side, Window[]>> = {
      submit0: { ours: [], bullmq: [] },
      submitFull: { ours: [], bullmq: [] },
      list: { ours: [], bullmq: [] },
      retrieve: { ours: [], bullmq: [] },
    };
    const rss: Array<{ side: string; name: string; before: number; after: number }> = [];
    const fill = { ours: { jobs: 0, seconds: 0 }, bullmq: { jobs: 0, seconds: 0 } };
    const failedReads: Record<Side, { answered: number; failed: Map<string, number> }> = {
      ours: { answered: 0, failed: new Map() },
      bullmq: { answered: 0, failed: new Map() },
    };
    try {
      progress.step("backlog  starting BullMQ");
      bull = await startBullSide(cleanup, progress, "backlog");
      const queue = bull.queue;
      const ids: Record<Side, string[]> = { ours: [], bullmq: [] };
      const processes: Array<ProcessRef & { side: string }> = [
        ...ours.processes.map((ref) => ({ side: "ours", ...ref })),
        { side: "BullMQ", ...bull.redis },
        { side: "both", name: "bench (the load generator)", pid: process.pid },
      ];
      const readRss = () => new Map(processes.map(({ pid }) => [pid, rssBytes(pid)]));

      const submitOne: Record<Side, (index: number) => Promise<void>> = {
        ours: async (index) => void ids.ours.push((await ours.user.call("submitJob", ourJob(POOL, index))).job_id),
        bullmq: async (index) =>
          void ids.bullmq.push((await queue.add("noop", { ...JOB, name: `bench-${index}` })).id!),
      };
      const read: Record<Side, Record<"list" | "retrieve", (index: number) => Promise<unknown>>> = {
        ours: {
          list: () => ours.user.call("listJobs", { limit: LIST_LIMIT }),
          retrieve: (index) => ours.user.call("retrieveJob", { job_id: ids.ours[(index * 7919) % ids.ours.length]! }),
        },
        bullmq: {
          list: () => queue.getJobs(["waiting"], 0, LIST_LIMIT - 1),
          retrieve: async (index) => {
            if (!(await queue.getJob(ids.bullmq[(index * 7919) % ids.bullmq.length]!)))
              throw new Error("getJob found no job");
          },
        },
      };

      /**
       * A submit window is a count, the same on both sides, so both queues always hold the
       * same number of jobs; a read window is a time (reads add nothing).
       */
      const window = async (measure: Measure, side: Side, label: string): Promise<Window | undefined> => {
        const name = side === "ours" ? "ours" : "BullMQ";
        const reading = measure === "list" || measure === "retrieve";
        progress.step(`backlog  ${label}: ${name}, ${reading ? `jobs/${measure}` : "submit"}`);
        const onProgress = ({ ok, failed }: { ok: number; failed: number }) =>
          progress.update(`${ok} answered, ${failed} failed`);
        const result = reading
          ? await runClosedLoop(
              { concurrency: READERS, warmupMs: config.warmupMs, durationMs: config.windowMs, signal, onProgress },
              read[side][measure],
            )
          : await (async () => {
              await runClosedLoop({ concurrency: SUBMITTERS, requests: SUBMIT_WARMUP, signal }, submitOne[side]);
              return runClosedLoop(
                { concurrency: SUBMITTERS, requests: config.submitWindowJobs, signal, onProgress },
                submitOne[side],
              );
            })();
        if (countErrors(result.errors) > 0) {
          // A read that fails under the backlog is what the backlog does to that side: a result, not a broken run.
          if (!reading) {
            failures.push(
              `${label}, ${name} ${measure}: ${formatErrors(result.errors)} (${result.errorSamples.join("; ")})`,
            );
            return undefined;
          }
          const seen = failedReads[side];
          seen.answered += result.ok;
          for (const [code, count] of result.errors)
            seen.failed.set(`${measure} ${code}`, (seen.failed.get(`${measure} ${code}`) ?? 0) + count);
        } else if (reading) {
          failedReads[side].answered += result.ok;
        }
        return summarise(result);
      };
      const compareRounds = async (measures: readonly Measure[], label: string) => {
        for (let round = 1; round <= config.rounds && !signal.aborted; round++) {
          const order: Side[] = round % 2 === 1 ? ["ours", "bullmq"] : ["bullmq", "ours"];
          for (const measure of measures) {
            const results = new Map<Side, Window | undefined>();
            for (const side of order)
              results.set(
                side,
                signal.aborted ? undefined : await window(measure, side, `${label}, round ${round}/${config.rounds}`),
              );
            if (order.every((side) => results.get(side)))
              for (const side of order) windows[measure][side].push(results.get(side)!);
          }
        }
      };

      const before = readRss();
      await compareRounds(["submit0"], "empty queue");

      progress.step(`backlog  filling ours to ${config.backlogJobs} queued jobs`);
      const oursStart = performance.now();
      const oursMissing = Math.max(0, config.backlogJobs - ids.ours.length);
      const filled = await runClosedLoop(
        {
          concurrency: FILLERS,
          requests: oursMissing,
          signal,
          onProgress: () => progress.update(`${ids.ours.length}/${config.backlogJobs} queued`),
        },
        (index) => submitOne.ours(index),
      );
      if (countErrors(filled.errors) > 0)
        throw new Error(
          `filling our backlog failed: ${formatErrors(filled.errors)} (${filled.errorSamples.join("; ")})`,
        );
      fill.ours = { jobs: oursMissing, seconds: (performance.now() - oursStart) / 1000 };

      progress.step(`backlog  filling BullMQ to ${config.backlogJobs} waiting jobs`);
      const bullStart = performance.now();
      const bullMissing = Math.max(0, config.backlogJobs - ids.bullmq.length);
      for (let done = 0; done < bullMissing && !signal.aborted; done += BULK) {
        const count = Math.min(BULK, bullMissing - done);
        const added = await queue.addBulk(
          Array.from({ length: count }, (_, offset) => ({
            name: "noop",
            data: { ...JOB, name: `fill-${done + offset}` },
          })),
        );
        for (const job of added) ids.bullmq.push(job.id!);
        progress.update(`${ids.bullmq.length}/${config.backlogJobs} waiting`);
      }
      fill.bullmq = { jobs: bullMissing, seconds: (performance.now() - bullStart) / 1000 };

      const after = readRss();
      for (const { side, name, pid } of processes)
        rss.push({ side, name, before: before.get(pid)!, after: after.get(pid)! });
      await compareRounds(["submitFull", "list", "retrieve"], "full queue");
    } finally {
      progress.step("backlog  stopping");
      await bull?.stop();
      await ours.stop();
    }

    const pick = (measure: Measure, key: keyof Window): Pick<Figure, "ours" | "theirs"> => ({
      ours: windows[measure].ours.map((w) => w[key]),
      theirs: windows[measure].bullmq.map((w) => w[key]),
    });
    const figures: Figure[] = [
      { label: "submits/s, queue empty", ...pick("submit0", "perSecond") },
      { label: `submits/s, ${config.backlogJobs} queued`, ...pick("submitFull", "perSecond") },
      { label: "submit p99 ms, queue empty", ...pick("submit0", "p99Ms") },
      { label: `submit p99 ms, ${config.backlogJobs} queued`, ...pick("submitFull", "p99Ms") },
      { label: "jobs/list p50 ms", ...pick("list", "p50Ms") },
      { label: "jobs/list p99 ms", ...pick("list", "p99Ms") },
      { label: "jobs/retrieve p50 ms", ...pick("retrieve", "p50Ms") },
      { label: "jobs/retrieve p99 ms", ...pick("retrieve", "p99Ms") },
    ];
    const servers = (side: string, key: "before" | "after") =>
      rss.filter((row) => row.side === side).reduce((sum, row) => sum + row[key], 0);
    const mb = (bytes: number) => formatNumber(bytes / MB);
    const growthPer1000 = (side: string) =>
      ((servers(side, "after") - servers(side, "before")) / MB / config.backlogJobs) * 1000;
    return {
      tables: [
        comparisonTable(
          `(e) a backlog of ${config.backlogJobs} queued jobs that no node or Worker takes`,
          "BullMQ",
          figures,
          [
            `${windows.submit0.bullmq.length} rounds, sides alternating; a submit window is ${config.submitWindowJobs} submits from ${SUBMITTERS} clients after ${SUBMIT_WARMUP} unmeasured, the same count on both sides so both queues always hold as many jobs; a read window is ${config.windowMs / 1000} s of ${READERS} clients after ${config.warmupMs / 1000} s unmeasured`,
            `"queue empty": before the fill (the submit windows themselves leave ${config.rounds * (config.submitWindowJobs + SUBMIT_WARMUP)} jobs); "${config.backlogJobs} queued": after the fill, the windows adding more`,
            `jobs/list: ours POST /api/compute/jobs/list {"limit": ${LIST_LIMIT}} (the business's newest jobs); BullMQ Queue.getJobs(["waiting"], 0, ${LIST_LIMIT - 1})`,
            "jobs/retrieve: ours POST /api/compute/jobs/retrieve, BullMQ Queue.getJob, each of a job picked across the whole backlog",
            `reads that failed (left out of the latencies; – where none was answered): ours ${describeFailedReads(failedReads.ours)}, BullMQ ${describeFailedReads(failedReads.bullmq)}`,
            `filled by ${FILLERS} submitting clients on ours (${formatNumber(fill.ours.jobs / fill.ours.seconds)} jobs/s, ${formatNumber(fill.ours.seconds)} s), by addBulk of ${BULK} on BullMQ (${formatNumber(fill.bullmq.jobs / fill.bullmq.seconds)} jobs/s): only the state matters`,
            ...sideNotes(bull?.driver ?? "?", "none"),
            RAISED_RATE_LIMITS_NOTE,
          ],
        ),
        {
          title: `(e) resident memory (RSS) of every process, before the first submit and with ${config.backlogJobs} jobs queued`,
          columns: ["side", "process", "before MB", "after MB", "growth MB"],
          rows: [
            ...rss.map((row) => [row.side, row.name, mb(row.before), mb(row.after), mb(row.after - row.before)]),
            [
              "ours",
              "all processes",
              mb(servers("ours", "before")),
              mb(servers("ours", "after")),
              mb(servers("ours", "after") - servers("ours", "before")),
            ],
            [
              "BullMQ",
              "all processes",
              mb(servers("BullMQ", "before")),
              mb(servers("BullMQ", "after")),
              mb(servers("BullMQ", "after") - servers("BullMQ", "before")),
            ],
          ],
          notes: [
            `growth per 1000 queued jobs: ours ${formatNumber(growthPer1000("ours"))} MB, BullMQ ${formatNumber(growthPer1000("BullMQ"))} MB (ratio ${formatNumber(growthPer1000("ours") / growthPer1000("BullMQ"))}); one reading each, not rounds`,
            "VmRSS from /proc/<pid>/status; nats-server's JetStream store also writes to its directory (file storage), which RSS does not show",
            "the bench's own process holds both sides' clients and the lists of job ids",
          ],
        },
      ],
      data: {
        backlog_jobs: config.backlogJobs,
        figures: figures.map(figureData),
        rss_bytes: rss,
        fill,
        failed_reads: failedReads,
      },
      failures,
    };
  },
};
