import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { get } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ComputeClient } from "../../shared/client/index.js";
import { type LogLine, logStreamPath } from "../../shared/contract/index.js";
import { errorCode } from "./load.js";
import {
  NOISY_STREAM_OPENERS,
  NOISY_HEARTBEATERS,
  NOISY_SUBMITTERS,
  type Outcomes,
  startNoisyTenant,
} from "./noisy-tenant.js";
import { type AddedTenant, startOurSystem } from "./ours/system.js";
import { formatMs } from "./report.js";
import type { Scenario, ScenarioContext, ScenarioOutcome } from "./scenario.js";
import { percentiles, type Percentiles } from "./stats.js";

/**
 * The quiet tenant's samples of each figure in one segment, and the pace they are sent at:
 * 15 requests a second together, under the default rate limits (50 a second, 1000 a minute).
 * Idle and noisy segments alternate, SEGMENT_PAIRS of each in ABBA order (idle, noisy,
 * noisy, idle, …), so a change in the shared machine's load falls on both alike.
 */
const SUBMITS = 100;
const SUBMIT_EVERY_MS = 100;
const STREAM_OPENS = 50;
const STREAM_OPEN_EVERY_MS = 200;
const SEGMENT_PAIRS = 4;
/** The pause after a noisy segment, before the next one: its streams' closing is counted in neither phase. */
const SETTLE_MS = 1_000;
/**
 * The noisy tenant's log quotas, small enough that it reaches them within seconds: its
 * first node pushes alone until its hour is used up, then its second until the business's
 * day is (two nodes side by side would use up the day before either's hour).
 */
const NODE_BYTES_PER_HOUR = 20 * 1024 * 1024;
const BUSINESS_BYTES_PER_DAY = 30 * 1024 * 1024;
/** The noisy tenant's nodes: the second pushes once the first is past its hour. */
const NOISY_NODES = 2;
/** The noisy tenant reaches its limits in seconds; past this something is wrong, and the scenario says what it saw. */
const LIMITS_WAIT_MS = 120_000;
const QUIET_LINES: LogLine[] = Array.from({ length: 20 }, (_, index) => ({
  seq: index + 1,
  stream: "stdout",
  line: `quiet line ${index + 1}`,
  ts: new Date().toISOString(),
}));

/** A phase's samples, gathered over its segments. */
interface Samples {
  submit: number[];
  stream: number[];
  errors: string[];
}

interface Phase {
  submit: Percentiles | null;
  stream: Percentiles | null;
  errors: string[];
}

function phaseOf(samples: Samples): Phase {
  return { submit: percentiles(samples.submit), stream: percentiles(samples.stream), errors: samples.errors };
}

/** Milliseconds from opening a job's log stream to its first `log` event; the connection is then closed. */
function timeToFirstLine(baseUrl: string, path: string, headers: Record<string, string>): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    const request = get(`${baseUrl}${path}`, { headers, agent: false }, (response) => {
      if (response.statusCode !== 200) {
        request.destroy();
        reject(new Error(`log stream answered ${response.statusCode}`));
        return;
      }
      let text = "";
      response.on("data", (chunk: Buffer) => {
        text += chunk.toString("utf8");
        if (text.includes("event: log")) {
          resolve(performance.now() - started);
          request.destroy();
        }
      });
      response.on("error", () => undefined);
    });
    // After the first line the request is destroyed on purpose: the promise has settled, and the error is moot.
    request.on("error", reject);
  });
}

/** A job of the tenant's own pool, running on a node registered over HTTP, with `lines` stored. */
async function runningJob(tenant: AddedTenant, baseUrl: string, pool: string, lines: LogLine[]): Promise<string> {
  const node = await tenant.user.call("registerNode", {
    name: "quiet",
    hostname: "bench.local",
    pool_id: pool,
    labels: {},
    capacity: { cpu: 1, memory_mb: 1024, gpu: 0, slots: 1 },
    job_types: ["shell"],
    agent_version: "bench",
  });
  const plane = new ComputeClient({ baseUrl, appId: tenant.appId, apiKey: node.api_key });
  const { job_id } = await tenant.user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool });
  for (;;) {
    const { jobs } = await plane.call("poll", { wait_seconds: 5 });
    if (jobs.some((job) => job.job_id === job_id)) break;
  }
  await plane.call("pushLogs", { job_id, attempt: 1, lines });
  return job_id;
}

/** Runs `each` `times` times, starting one every `everyMs` (or when the last ended, if later). */
async function paced(times: number, everyMs: number, signal: AbortSignal, each: () => Promise<void>): Promise<void> {
  for (let index = 0; index < times && !signal.aborted; index += 1) {
    const next = performance.now() + everyMs;
    await each();
    const wait = next - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  }
}

/** One segment of the quiet tenant's figures, added to `samples`: submit latency and time to a stream's first line, each at a steady pace. */
async function measure(
  tenant: AddedTenant,
  baseUrl: string,
  jobId: string,
  signal: AbortSignal,
  { submit, stream, errors }: Samples,
): Promise<void> {
  const headers = { "x-app-id": tenant.appId, "x-api-key": tenant.apiKey };
  const submits = paced(SUBMITS, SUBMIT_EVERY_MS, signal, async () => {
    const started = performance.now();
    try {
      await tenant.user.call("submitJob", { type: "shell", command: ["true"], pool_id: "quiet-queue" });
      submit.push(performance.now() - started);
    } catch (error) {
      errors.push(`submit: ${errorCode(error)}`);
    }
  });
  const opens = paced(STREAM_OPENS, STREAM_OPEN_EVERY_MS, signal, async () => {
    try {
      stream.push(await timeToFirstLine(baseUrl, logStreamPath(jobId), headers));
    } catch (error) {
      errors.push(`log stream: ${error instanceof Error ? error.message : String(error)}`);
    }
  });
  await Promise.all([submits, opens]);
}

/** Whether segment `index` is idle: ABBA order, idle first (idle, noisy, noisy, idle, idle, …). */
function isIdleSegment(index: number): boolean {
  return Math.floor(index / 2) % 2 === 0 ? index % 2 === 0 : index % 2 === 1;
}

const noSamples = (): Samples => ({ submit: [], stream: [], errors: [] });

/**
 * The quiet tenant's figures in alternating segments: alone, and beside the noisy tenant
 * pressing on (it presses for the segment and stops after it, its held streams closed).
 */
async function alternate(
  context: ScenarioContext,
  quiet: { tenant: AddedTenant; jobId: string },
  press: (stop: AbortSignal) => Promise<void>,
  baseUrl: string,
): Promise<{ idle: Samples; noisy: Samples }> {
  const samples = { idle: noSamples(), noisy: noSamples() };
  const { progress, signal } = context;
  for (let index = 0; index < 2 * SEGMENT_PAIRS && !signal.aborted; index += 1) {
    const idle = isIdleSegment(index);
    progress.step(
      `noisy neighbour  segment ${index + 1}/${2 * SEGMENT_PAIRS}: ${idle ? "the quiet tenant alone" : "the quiet tenant beside the noisy one"}`,
    );
    if (idle) {
      await measure(quiet.tenant, baseUrl, quiet.jobId, signal, samples.idle);
      continue;
    }
    const stop = new AbortController();
    const pressing = press(stop.signal);
    await measure(quiet.tenant, baseUrl, quiet.jobId, signal, samples.noisy);
    stop.abort();
    await pressing;
    // The noisy tenant's streams close as it stops; the next segment starts once that work is done.
    await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  }
  return samples;
}

function row(label: string, idle: Percentiles | null, noisy: Percentiles | null): string[] {
  if (idle === null || noisy === null) return [label, "–", "–", "–", "–", "–", "–"];
  const ratio = noisy.p99 / idle.p99;
  return [
    label,
    formatMs(idle.p50),
    formatMs(idle.p99),
    formatMs(noisy.p50),
    formatMs(noisy.p99),
    `${ratio.toFixed(2)}×`,
    ratio <= 2 ? "yes" : "no",
  ];
}

/**
 * One tenant at every one of its limits (log streams, requests, log bytes of its nodes and
 * its business), and another tenant's latency beside it: the p99 of a submit and of a log
 * stream's first line while the noisy tenant sends nothing, and while it presses on, in
 * alternating segments. The promise (issue 25): within 2× of the idle figures.
 */
export const noisyNeighbour: Scenario = {
  name: "noisy-neighbour",
  title: "noisy neighbour",
  async run(context: ScenarioContext): Promise<ScenarioOutcome> {
    const { config, cleanup, progress, signal } = context;
    const failures: string[] = [];
    const plansDir = await mkdtemp(join(tmpdir(), "cjs-bench-plans-"));
    const removePlans = cleanup.add("plans file", () => rm(plansDir, { recursive: true, force: true }));
    const plans = JSON.parse(await readFile("services/billing/plans.json", "utf8")) as {
      plans: Array<{ limits: Record<string, number> }>;
    };
    for (const plan of plans.plans) plan.limits.max_log_bytes_per_day = BUSINESS_BYTES_PER_DAY;
    const plansFile = join(plansDir, "plans.json");
    await writeFile(plansFile, JSON.stringify(plans));

    progress.step("noisy neighbour  starting our system");
    const ours = await startOurSystem(cleanup, progress, {
      logLevel: config.serviceLogLevel,
      rateLimits: "default",
      // The gateway and the scheduler profiled whole (idle and noisy segments alike) with --cpu-prof.
      ...(config.cpuProfileDir === undefined
        ? {}
        : { cpuProfile: { dir: config.cpuProfileDir, services: ["gateway", "scheduler"] as const } }),
      env: {
        "log-relay": { CJS_LOG_MAX_BYTES_PER_NODE_PER_HOUR: String(NODE_BYTES_PER_HOUR) },
        billing: { CJS_BILLING_PLANS_FILE: plansFile },
      },
    });
    let outcomes: Outcomes = new Map();
    let idle: Phase | undefined;
    let noisy: Phase | undefined;
    try {
      progress.update("a quiet tenant with a running job, and the noisy tenant's nodes");
      const quiet = await ours.addTenant({ operator: false });
      const quietJob = await runningJob(quiet, ours.gatewayUrl, "quiet-logs", QUIET_LINES);
      const noisyNodes: Array<{ apiKey: string; jobId: string }> = [];
      for (let index = 0; index < NOISY_NODES; index += 1) {
        const pool = `noisy-logs-${index}`;
        const node = await ours.registerNode("http", pool, 1);
        const { job_id } = await ours.user.call("submitJob", { type: "shell", command: ["true"], pool_id: pool });
        let held = false;
        while (!held) held = (await node.plane.poll({ wait_seconds: 5 })).jobs.some((job) => job.job_id === job_id);
        noisyNodes.push({ apiKey: node.apiKey, jobId: job_id });
      }
      const noisyTenant = startNoisyTenant(
        {
          gatewayUrl: ours.gatewayUrl,
          appId: ours.tenant.app.app_id,
          userApiKey: ours.userApiKey,
          streamJobId: noisyNodes[0]!.jobId,
          nodes: noisyNodes,
        },
        cleanup,
      );
      outcomes = noisyTenant.outcomes;
      const press = (stop: AbortSignal) => noisyTenant.press(stop);

      // Measured once the noisy tenant has reached its limits: its streams, its requests and its log bytes all refused.
      progress.step("noisy neighbour  the noisy tenant reaching its limits");
      const stop = new AbortController();
      const pressing = press(stop.signal);
      const atLimits = () =>
        outcomes.has("log stream 429") &&
        outcomes.has("log push logs.quota_exceeded node_hour") &&
        outcomes.has("log push logs.quota_exceeded business_day") &&
        outcomes.has("heartbeat rate.limited");
      const givenUpAt = performance.now() + LIMITS_WAIT_MS;
      while (!atLimits() && !signal.aborted && performance.now() < givenUpAt)
        await new Promise((resolve) => setTimeout(resolve, 100));
      stop.abort();
      await pressing;
      if (!atLimits() && !signal.aborted) {
        const seen = [...outcomes.entries()].map(([outcome, times]) => `${outcome} ×${times}`).join(", ");
        throw new Error(
          `the noisy tenant did not reach its limits (a stream refused, its first node's hour, its business's day, its node's heartbeats) within ${LIMITS_WAIT_MS / 1000} s; it was answered: ${seen}`,
        );
      }

      const samples = await alternate(context, { tenant: quiet, jobId: quietJob }, press, ours.gatewayUrl);
      idle = phaseOf(samples.idle);
      noisy = phaseOf(samples.noisy);
      await noisyTenant.close();
    } finally {
      progress.step("noisy neighbour  stopping");
      await ours.stop();
      await removePlans();
    }
    for (const phase of [idle, noisy])
      if (phase && phase.errors.length > 0)
        failures.push(`the quiet tenant was refused: ${[...new Set(phase.errors)].join("; ")}`);
    const refusals = [...outcomes.entries()].sort(([a], [b]) => a.localeCompare(b));
    return {
      tables: [
        {
          title: "noisy neighbour: another tenant's latency while one tenant is at every limit",
          columns: [
            "quiet tenant",
            "idle p50 ms",
            "idle p99 ms",
            "noisy p50 ms",
            "noisy p99 ms",
            "p99 ratio",
            "within 2×",
          ],
          rows: [
            row(
              `submit (${SUBMITS * SEGMENT_PAIRS} a phase, one every ${SUBMIT_EVERY_MS} ms)`,
              idle?.submit ?? null,
              noisy?.submit ?? null,
            ),
            row(
              `log stream, open to first line (${STREAM_OPENS * SEGMENT_PAIRS} a phase, one every ${STREAM_OPEN_EVERY_MS} ms)`,
              idle?.stream ?? null,
              noisy?.stream ?? null,
            ),
          ],
          notes: [
            `the noisy tenant meanwhile, a client on a thread of its own: ${NOISY_STREAM_OPENERS} workers opening and holding log streams, ${NOISY_SUBMITTERS} submitting as fast as answered, ${NOISY_NODES} nodes pushing 90 lines of 10 kB per batch (the second once the first is past its hour), the first node heartbeating from ${NOISY_HEARTBEATERS} loops; each refusal waits its Retry-After (or 1 s) before the next try`,
            `its answers: ${refusals.map(([outcome, times]) => `${outcome} × ${times}`).join(", ")}`,
            `limits: the defaults (rate 50 requests a second and 1000 a minute, 20 streams a user, 4 a signed URL, 100 a business, 1000 calls a second a node and 5 heartbeats), CJS_LOG_MAX_BYTES_PER_NODE_PER_HOUR=${NODE_BYTES_PER_HOUR}, plan max_log_bytes_per_day=${BUSINESS_BYTES_PER_DAY}`,
            `measured once the noisy tenant has reached its limits (its streams, its first node's hour, its business's day and its node's heartbeats refused), in ${2 * SEGMENT_PAIRS} segments of ${(SUBMITS * SUBMIT_EVERY_MS) / 1000} s alternating in ABBA order: idle (the noisy tenant sends nothing and holds no stream) and noisy (it presses on as above); the submit and stream samples run side by side, each at its steady pace`,
          ],
        },
      ],
      data: { idle, noisy, outcomes: Object.fromEntries(outcomes) },
      failures,
    };
  },
};
