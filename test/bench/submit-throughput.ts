import type { RpcRequest } from "../../shared/contract/index.js";
import { RAISED_RATE_LIMITS, RAISED_RATE_LIMITS_NOTE, startBenchSystem } from "./bench-system.js";
import { countErrors, formatErrors, runClosedLoop } from "./load.js";
import { formatRate, latencyCells } from "./report.js";
import type { Scenario, ScenarioContext, ScenarioOutcome } from "./scenario.js";
import { percentiles, perSecond } from "./stats.js";

const SELF_HOSTED_POOL = "bench-self";
/** An operator pool: every submit to it asks billing for the business's credit first. */
const OPERATOR_POOL = "default";

/** Submits before the first measured row, so the first row is not the one that warms up the code. */
const SCENARIO_WARMUP_MS = 1_500;

const POOLS = [
  { kind: "self-hosted", pool_id: SELF_HOSTED_POOL },
  { kind: "operator", pool_id: OPERATOR_POOL },
] as const;

function clients(count: number): string {
  return `${count} client${count === 1 ? "" : "s"}`;
}

function jobFor(pool_id: string, index: number): RpcRequest<"submitJob"> {
  return { type: "shell", command: ["true"], pool_id, name: `bench-${index}`, resources: { cpu: 0.5, memory_mb: 64, gpu: 0 } };
}

/**
 * Jobs/s accepted by `jobs/submit` through two gateway replicas, for each count of
 * concurrent clients, on a self-hosted pool (no billing round trip) and on an operator
 * pool (the credit check). No node serves either pool, so the jobs stay queued: what
 * is measured is the submit path (gateway, scheduler, queue and job record, billing).
 */
export const submitThroughput: Scenario = {
  name: "submit",
  title: "submit throughput",
  async run({ config, cleanup, progress, signal }: ScenarioContext): Promise<ScenarioOutcome> {
    const bench = await startBenchSystem(cleanup, progress, { env: { ...RAISED_RATE_LIMITS } });
    const rows: string[][] = [];
    const data: unknown[] = [];
    const failures: string[] = [];
    try {
      // Both pools at one concurrency side by side, so their comparison sees the same warmth and backlog.
      progress.step("submit  warm-up");
      await runClosedLoop({ concurrency: 16, durationMs: SCENARIO_WARMUP_MS, signal }, (index) => bench.users[index % bench.users.length]!.call("submitJob", jobFor(POOLS[index % 2]!.pool_id, index)));
      for (const concurrency of config.concurrency) {
        for (const pool of POOLS) {
          if (signal.aborted) break;
          progress.step(`submit  ${pool.kind} pool, ${clients(concurrency)}`);
          const result = await runClosedLoop(
            {
              concurrency,
              warmupMs: config.warmupMs,
              durationMs: config.measureMs,
              signal,
              onProgress: ({ ok, failed, elapsedMs }) => progress.update(`${ok} accepted, ${failed} failed, ${formatRate(perSecond(ok, elapsedMs))} jobs/s`),
            },
            // Alternate the replicas, as a load balancer would.
            (index) => bench.users[index % bench.users.length]!.call("submitJob", jobFor(pool.pool_id, index)),
          );
          const latency = percentiles(result.latenciesMs);
          const rate = perSecond(result.ok, result.elapsedMs);
          rows.push([String(concurrency), pool.kind, String(result.ok), formatRate(rate), ...latencyCells(latency), formatErrors(result.errors)]);
          data.push({ pool: pool.kind, pool_id: pool.pool_id, clients: concurrency, accepted: result.ok, jobs_per_second: rate, latency_ms: latency, errors: result.errors });
          if (countErrors(result.errors) > 0) failures.push(`submit on the ${pool.kind} pool with ${clients(concurrency)}: ${formatErrors(result.errors)} (${result.errorSamples.join("; ")})`);
        }
      }
    } finally {
      progress.step("submit  stopping services");
      await bench.stop();
    }
    return {
      tables: [
        {
          title: "submit throughput (POST /api/compute/jobs/submit, 2 gateways, 2 schedulers)",
          columns: ["clients", "pool", "accepted", "jobs/s", "p50 ms", "p95 ms", "p99 ms", "errors"],
          rows,
          notes: [
            `each row: ${config.measureMs / 1000} s measured after ${config.warmupMs / 1000} s of warm-up (and ${SCENARIO_WARMUP_MS / 1000} s for the whole scenario first); clients send their next submit when the last one answered`,
            "one user (a JWT) submits; requests alternate between the two gateway replicas",
            `operator pool "${OPERATOR_POOL}": each submit waits for billing's credit check; self-hosted pool "${SELF_HOSTED_POOL}": none`,
            "no node serves either pool: jobs stay queued, and the backlog grows from row to row",
            `rate limits raised: ${RAISED_RATE_LIMITS_NOTE}`,
          ],
        },
      ],
      data,
      failures,
    };
  },
};
