import type { AgentAssignment } from "../../clients/agent/index.js";
import type { LogLine } from "../../shared/contract/index.js";
import { startBullSide, type BullSide } from "./bullmq/bull-side.js";
import { comparisonTable, figureData, type Figure } from "./compare.js";
import { countErrors, formatErrors, runClosedLoop } from "./load.js";
import {
  RAISED_RATE_LIMITS_NOTE,
  startOurSystem,
  type NodeTransport,
  type OurSystem,
  type RegisteredNode,
} from "./ours/system.js";
import type { Scenario, ScenarioContext, ScenarioOutcome } from "./scenario.js";
import { percentile } from "./stats.js";
import { JOB, ourJob } from "./workload.js";

const BATCH_LINES = 100;
/** The log relay's default `CJS_LOG_MAX_LINES_PER_JOB`: a pusher moves to a new job before its job reaches it. */
const LINES_PER_JOB = 100_000;
const PUSHERS = [1, 8] as const;
const LINE_TEXT =
  "2026-11-22T04:00:00.000Z INFO step 42/100 loss=0.1234 lr=3e-4 tokens/s=51234 (bench line of about 90 characters)";
const POLL_WAIT_SECONDS = 5;

type Side = NodeTransport | "bullmq";

/** One pusher: a node with one running attempt (ours), or a job id (BullMQ). */
interface Pusher {
  push(): Promise<void>;
}

interface Window {
  linesPerSecond: number;
  batchP50Ms: number;
  batchP99Ms: number;
}

function batch(from: number): LogLine[] {
  const ts = new Date().toISOString();
  return Array.from({ length: BATCH_LINES }, (_, index) => ({
    seq: from + index,
    stream: index % 10 === 9 ? "stderr" : "stdout",
    line: LINE_TEXT,
    ts,
  }));
}

/** Submits a job to the node's own pool and polls until the node holds it. */
async function startJob(ours: OurSystem, node: RegisteredNode, pool: string): Promise<AgentAssignment> {
  await ours.user.call("submitJob", ourJob(pool, 0));
  for (;;) {
    const { jobs } = await node.plane.poll({ wait_seconds: POLL_WAIT_SECONDS });
    if (jobs[0]) return jobs[0];
  }
}

/** A node pushing the lines of its running attempt in order, 100 at a time; a new attempt before the log cap. */
async function ourPusher(
  ours: OurSystem,
  transport: NodeTransport,
  index: number,
  notStored: { lines: number },
): Promise<Pusher> {
  const pool = `logs-${transport}-${index}`;
  const node = await ours.registerNode(transport, pool, 1);
  let job = await startJob(ours, node, pool);
  let nextSeq = 1;
  return {
    async push() {
      if (nextSeq + BATCH_LINES - 1 > LINES_PER_JOB) {
        await node.plane.result({ job_id: job.job_id, attempt: job.attempt, outcome: "succeeded", exit_code: 0 });
        job = await startJob(ours, node, pool);
        nextSeq = 1;
      }
      const answer = await node.plane.pushLogs({ job_id: job.job_id, attempt: job.attempt, lines: batch(nextSeq) });
      nextSeq += BATCH_LINES;
      notStored.lines += BATCH_LINES - answer.accepted;
    },
  };
}

/** BullMQ's analogue: `Queue.addJobLog` once per line (BullMQ has no batch call), the 100 of a batch at once. */
async function bullPusher(bull: BullSide, index: number): Promise<Pusher> {
  const job = await bull.queue.add("noop", { ...JOB, name: `logs-${index}` });
  return {
    async push() {
      await Promise.all(Array.from({ length: BATCH_LINES }, () => bull.queue.addJobLog(job.id!, LINE_TEXT)));
    },
  };
}

/**
 * (g): log lines/s that nodes push in batches of 100 (`nodes/logs`, over HTTP and over
 * NATS-direct) to the log relay, which stores each push as one message in the `CJS_LOGS`
 * stream; each node sends its next batch when the last one is answered. BullMQ's analogue
 * is a job's log (`Job.log` / `Queue.addJobLog`): one Redis list per job, one call per line.
 */
export const logIngest: Scenario = {
  name: "log-ingest",
  title: "log ingest",
  async run(context: ScenarioContext): Promise<ScenarioOutcome> {
    const { config, cleanup, progress, signal } = context;
    const failures: string[] = [];
    progress.step("log ingest  starting our system");
    const ours: OurSystem = await startOurSystem(cleanup, progress, { logLevel: config.serviceLogLevel });
    let bull: BullSide | undefined;
    const windows = new Map<number, Record<Side, Window[]>>(
      PUSHERS.map((count) => [count, { nats: [], http: [], bullmq: [] }]),
    );
    const notStored = { lines: 0 };
    try {
      progress.step("log ingest  starting BullMQ");
      bull = await startBullSide(cleanup, progress, "logs");
      const most = Math.max(...PUSHERS);
      const pushers: Record<Side, Pusher[]> = { nats: [], http: [], bullmq: [] };
      for (let index = 0; index < most; index++) {
        progress.update(`starting a running job on ${index + 1}/${most} nodes of each transport`);
        pushers.nats.push(await ourPusher(ours, "nats", index, notStored));
        pushers.http.push(await ourPusher(ours, "http", index, notStored));
        pushers.bullmq.push(await bullPusher(bull, index));
      }

      const window = async (side: Side, count: number, label: string): Promise<Window | undefined> => {
        const name = side === "bullmq" ? "BullMQ" : side === "nats" ? "ours, NATS-direct" : "ours, HTTP";
        progress.step(`log ingest  ${label}: ${name}, ${count} pusher${count === 1 ? "" : "s"}`);
        // As many workers as pushers: each takes an idle one, so a pusher's batches stay in order.
        const idle = pushers[side].slice(0, count);
        const result = await runClosedLoop(
          {
            concurrency: count,
            warmupMs: config.warmupMs,
            durationMs: config.windowMs,
            signal,
            onProgress: ({ ok }) => progress.update(`${ok * BATCH_LINES} lines`),
          },
          async () => {
            const pusher = idle.pop()!;
            try {
              await pusher.push();
            } finally {
              idle.push(pusher);
            }
          },
        );
        if (countErrors(result.errors) > 0) {
          failures.push(
            `${label}, ${name} with ${count} pushers: ${formatErrors(result.errors)} (${result.errorSamples.join("; ")})`,
          );
          return undefined;
        }
        const sorted = [...result.latenciesMs].sort((a, b) => a - b);
        return {
          linesPerSecond: (result.ok * BATCH_LINES * 1000) / result.elapsedMs,
          batchP50Ms: percentile(sorted, 50),
          batchP99Ms: percentile(sorted, 99),
        };
      };

      for (let round = 1; round <= config.rounds && !signal.aborted; round++) {
        const order: Side[] = round % 2 === 1 ? ["nats", "bullmq", "http"] : ["http", "bullmq", "nats"];
        for (const count of PUSHERS) {
          const results = new Map<Side, Window | undefined>();
          for (const side of order)
            results.set(
              side,
              signal.aborted ? undefined : await window(side, count, `round ${round}/${config.rounds}`),
            );
          if (order.every((side) => results.get(side)))
            for (const side of order) windows.get(count)![side].push(results.get(side)!);
        }
      }
      if (notStored.lines > 0)
        failures.push(`${notStored.lines} log lines were answered as not stored (duplicates or dropped)`);
    } finally {
      progress.step("log ingest  stopping");
      await bull?.stop();
      await ours.stop();
    }

    const figures: Figure[] = PUSHERS.flatMap((count) => {
      const bySide = windows.get(count)!;
      const against = (side: NodeTransport, key: keyof Window) => ({
        ours: bySide[side].map((w) => w[key]),
        theirs: bySide.bullmq.map((w) => w[key]),
      });
      const who = `${count} pusher${count === 1 ? "" : "s"}`;
      return [
        { label: `${who}, NATS-direct: lines/s`, ...against("nats", "linesPerSecond") },
        { label: `${who}, HTTP: lines/s`, ...against("http", "linesPerSecond") },
        { label: `${who}, NATS-direct: batch p50 ms`, ...against("nats", "batchP50Ms") },
        { label: `${who}, HTTP: batch p50 ms`, ...against("http", "batchP50Ms") },
      ];
    });
    return {
      tables: [
        comparisonTable(
          `(g) log ingest: batches of ${BATCH_LINES} lines of ${LINE_TEXT.length} characters, each pusher sending its next batch when the last is answered`,
          "BullMQ",
          figures,
          [
            `${windows.get(PUSHERS[0])!.bullmq.length} rounds; in each, for 1 and 8 pushers, a ${config.windowMs / 1000} s window (after ${config.warmupMs / 1000} s unmeasured) per side, in alternating order`,
            "ours: a node with one running attempt per pusher pushes POST /api/compute/nodes/logs (HTTP) or cjs.nodeplane.logs (NATS-direct); the log relay stores each push as one JetStream message",
            "BullMQ has no log ingest of its own; its analogue is a job's log: Queue.addJobLog (what Job.log calls) once per line, the 100 lines of a batch at once, into one Redis list per job, with nothing to stream them to a reader",
            "both sides' rows of one pusher count compare with the same BullMQ windows",
            RAISED_RATE_LIMITS_NOTE,
          ],
        ),
      ],
      data: { figures: figures.map(figureData), windows: Object.fromEntries(windows) },
      failures,
    };
  },
};
