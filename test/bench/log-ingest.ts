import type { Assignment, LogLine } from "../../shared/contract/index.js";
import { FakeNode } from "../harness/fake-node.js";
import { RAISED_RATE_LIMITS, RAISED_RATE_LIMITS_NOTE, startBenchSystem, type BenchSystem } from "./bench-system.js";
import { countErrors, formatErrors, runClosedLoop } from "./load.js";
import { formatRate, latencyCells } from "./report.js";
import type { Scenario, ScenarioContext, ScenarioOutcome } from "./scenario.js";
import { percentiles, perSecond } from "./stats.js";

const BATCH_LINES = 100;
/** The log relay's default `CJS_LOG_MAX_LINES_PER_JOB`: a pusher moves to a new job before its job reaches it. */
const LINES_PER_JOB = 100_000;
const PUSHERS = [1, 8];
const HEARTBEAT_EVERY_MS = 10_000;
const LINE_TEXT = "2026-11-22T04:00:00.000Z INFO step 42/100 loss=0.1234 lr=3e-4 tokens/s=51234 (bench line of about 90 characters)";

/** A node with one running attempt, pushing its log lines in order. */
interface Pusher {
  node: FakeNode;
  pool: string;
  job: Assignment;
  nextSeq: number;
}

/** Submits a job to the pusher's own pool and waits for its node's poll to start it. */
async function startJob(bench: BenchSystem, node: FakeNode, pool: string): Promise<Assignment> {
  await bench.users[0]!.call("submitJob", { type: "shell", command: ["true"], pool_id: pool, resources: { cpu: 0.5, memory_mb: 64, gpu: 0 } });
  for (;;) {
    const [job] = await node.poll(5);
    if (job) return job;
  }
}

function batch(from: number): LogLine[] {
  const ts = new Date().toISOString();
  return Array.from({ length: BATCH_LINES }, (_, index) => ({ seq: from + index, stream: index % 10 === 9 ? "stderr" : "stdout", line: LINE_TEXT, ts }));
}

/**
 * Log lines/s that nodes push through the gateway (`nodes/logs`, batches of 100) to the
 * log relay, which stores each line in the `CJS_LOGS` stream. Each pusher is a node with
 * one running job, sending its next batch when the last one is answered.
 */
export const logIngest: Scenario = {
  name: "log-ingest",
  title: "log ingest",
  async run({ config, cleanup, progress, signal }: ScenarioContext): Promise<ScenarioOutcome> {
    const bench = await startBenchSystem(cleanup, progress, { env: { ...RAISED_RATE_LIMITS } });
    const rows: string[][] = [];
    const data: unknown[] = [];
    const failures: string[] = [];
    let heartbeats: NodeJS.Timeout | undefined;
    try {
      const pushers: Pusher[] = [];
      progress.update(`registering ${Math.max(...PUSHERS)} nodes`);
      const gateways = bench.system.gateways;
      for (let index = 0; index < Math.max(...PUSHERS); index++) {
        const pool = `bench-logs-${index}`;
        const node = await FakeNode.register(bench.users[0]!, gateways[index % gateways.length]!.baseUrl, bench.tenant.app.app_id, {
          name: `logger-${index}`,
          pool_id: pool,
          capacity: { cpu: 2, memory_mb: 2048, gpu: 0, slots: 1 },
        });
        pushers.push({ node, pool, job: await startJob(bench, node, pool), nextSeq: 1 });
      }
      heartbeats = setInterval(() => {
        for (const { node } of pushers) void node.heartbeat().catch(() => undefined);
      }, HEARTBEAT_EVERY_MS);

      for (const count of PUSHERS) {
        if (signal.aborted) break;
        progress.step(`log ingest  ${count} node${count === 1 ? "" : "s"} pushing`);
        const idle = pushers.slice(0, count);
        let notStored = 0;
        const result = await runClosedLoop(
          {
            concurrency: count,
            warmupMs: config.warmupMs,
            durationMs: config.measureMs,
            signal,
            onProgress: ({ ok, failed, elapsedMs }) => progress.update(`${ok * BATCH_LINES} lines, ${failed} failed pushes, ${formatRate(perSecond(ok * BATCH_LINES, elapsedMs))} lines/s`),
          },
          async () => {
            // As many workers as pushers, so one is always idle here.
            const pusher = idle.pop()!;
            try {
              if (pusher.nextSeq + BATCH_LINES - 1 > LINES_PER_JOB) {
                await pusher.node.finish(pusher.job.job_id);
                pusher.job = await startJob(bench, pusher.node, pusher.pool);
                pusher.nextSeq = 1;
              }
              const answer = await pusher.node.client.call("pushLogs", { job_id: pusher.job.job_id, attempt: pusher.job.attempt, lines: batch(pusher.nextSeq) });
              pusher.nextSeq += BATCH_LINES;
              notStored += BATCH_LINES - answer.accepted;
            } finally {
              idle.push(pusher);
            }
          },
        );
        const lines = result.ok * BATCH_LINES;
        const rate = perSecond(lines, result.elapsedMs);
        const latency = percentiles(result.latenciesMs);
        rows.push([String(count), String(lines), formatRate(rate), formatRate(perSecond(result.ok, result.elapsedMs)), ...latencyCells(latency), formatErrors(result.errors)]);
        data.push({ nodes: count, lines, lines_per_second: rate, batches_per_second: perSecond(result.ok, result.elapsedMs), batch_latency_ms: latency, not_stored: notStored, errors: result.errors });
        if (countErrors(result.errors) > 0) failures.push(`log pushes from ${count} nodes: ${formatErrors(result.errors)} (${result.errorSamples.join("; ")})`);
        if (notStored > 0) failures.push(`log pushes from ${count} nodes: ${notStored} lines answered as not stored (duplicates or dropped)`);
      }
    } finally {
      clearInterval(heartbeats);
      progress.step("log ingest  stopping services");
      await bench.stop();
    }
    return {
      tables: [
        {
          title: `log ingest (POST /api/compute/nodes/logs, batches of ${BATCH_LINES} lines, 2 gateways, 1 log relay)`,
          columns: ["nodes", "lines", "lines/s", "batches/s", "p50 ms", "p95 ms", "p99 ms", "errors"],
          rows,
          notes: [
            `each row: ${config.measureMs / 1000} s measured after ${config.warmupMs / 1000} s of warm-up; each node has one running job and sends its next batch when the last one is answered`,
            `lines of ${LINE_TEXT.length} characters; latency is per batch; node keys are not rate limited`,
            `the log relay stores each line as one JetStream message and waits for its ack before the next (push-logs.ts)`,
            `submits that start the jobs use raised rate limits: ${RAISED_RATE_LIMITS_NOTE}`,
          ],
        },
      ],
      data,
      failures,
    };
  },
};
