import { resolve } from "node:path";
import { parseArgs } from "node:util";
import { z } from "zod";
import { ConfigError, parseConfig } from "../../shared/runtime/index.js";

/** The scenarios, by the name `--only` takes, in the order they run. */
export const SCENARIOS = [
  "burst",
  "open-loop",
  "backlog",
  "submit",
  "log-ingest",
  "rate-limiter",
  "noisy-neighbour",
  "billing-backlog",
  "scale",
] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** How big a run is: `quick` (the default, 8 to 10 minutes on a 2-core machine) or `full`. */
const SIZES = {
  quick: {
    rounds: 3,
    burstJobs: 500,
    scaleJobs: 1_000,
    warmupJobs: 100,
    windowMs: 2_000,
    warmupMs: 500,
    openLoopStepMs: 2_000,
    openLoopSettleMs: 10_000,
    backlogJobs: 20_000,
    submitWindowJobs: 1_000,
    requestsPerRound: 500,
  },
  full: {
    rounds: 5,
    burstJobs: 2_000,
    scaleJobs: 3_000,
    warmupJobs: 300,
    windowMs: 5_000,
    warmupMs: 1_000,
    openLoopStepMs: 10_000,
    openLoopSettleMs: 30_000,
    backlogJobs: 100_000,
    submitWindowJobs: 5_000,
    requestsPerRound: 3_000,
  },
} as const;

const emptyAsUnset = (value: unknown) => (value === "" ? undefined : value);
const optionalInt = (min: number, max: number) =>
  z.preprocess(emptyAsUnset, z.coerce.number().int().min(min).max(max).optional());

/** The environment the bench reads; each unset size comes from `--quick` or `--full`. */
const BenchEnv = z.object({
  /** Jobs of each measured burst. */
  BENCH_JOBS: optionalInt(1, 1_000_000),
  /** Jobs queued in the backlog scenario. */
  BENCH_BACKLOG: optionalInt(1, 10_000_000),
  /** Rounds of every comparison (each round measures both sides). */
  BENCH_ROUNDS: optionalInt(1, 100),
  /** Length of each closed-loop measuring window, in seconds. */
  BENCH_SECONDS: z.preprocess(emptyAsUnset, z.coerce.number().positive().max(3_600).optional()),
  /** LOG_LEVEL of our services (their default, `info`, as deployed). */
  BENCH_SERVICE_LOG_LEVEL: z.preprocess(
    emptyAsUnset,
    z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  ),
  /** With `--count`: write every message the census saw, classified, as JSON lines, to files named from this prefix. */
  BENCH_CENSUS_DUMP: z.preprocess(emptyAsUnset, z.string().optional()),
});

export interface BenchConfig {
  size: keyof typeof SIZES;
  only: readonly ScenarioName[];
  jsonFile: string | undefined;
  rounds: number;
  burstJobs: number;
  /** Jobs of each measured burst of the scale scenario (bigger: its CPU readings split over replicas). */
  scaleJobs: number;
  /** Jobs of the unmeasured burst each side runs first. */
  warmupJobs: number;
  /** Closed-loop measuring windows (submit rates, list and retrieve, log pushes). */
  windowMs: number;
  /** Unmeasured requests before each closed-loop window. */
  warmupMs: number;
  /** Each open-loop step sends for this long… */
  openLoopStepMs: number;
  /** …and its jobs that start within this much after it count for its latency. */
  openLoopSettleMs: number;
  backlogJobs: number;
  /** Submits in each measured submit window of the backlog scenario (a count, so both queues grow alike). */
  submitWindowJobs: number;
  /** Requests per side in each round of the rate-limiter comparison. */
  requestsPerRound: number;
  serviceLogLevel: string;
  /** `--count`: the burst scenario ends with unmeasured bursts under a message census (docs/benchmarks.md). */
  count: boolean;
  /** `--cpu-prof DIR`: the burst scenario runs the scheduler and the gateway under `node --cpu-prof`, the scale scenario each deployment's first scheduler replica, writing here. */
  cpuProfileDir: string | undefined;
  /** `BENCH_CENSUS_DUMP`: each census's messages go to `<prefix>-<pool>.ndjson`. */
  censusDump: string | undefined;
}

export const USAGE = `usage: npx tsx test/bench/main.ts [--quick | --full] [--only ${SCENARIOS.join(",")}] [--json FILE] [--count] [--cpu-prof DIR]

  --quick        the default (what make bench runs): 8 to 10 minutes on a 2-core machine
  --full         more rounds, longer windows, bigger bursts and backlog: about 40 minutes
  --only LIST    run only these scenarios (comma-separated)
  --json FILE    also write the results as JSON
  --count        burst: after the measured rounds, count every message through nats-server
                 per job in unmeasured bursts (a self-hosted and an operator pool)
  --cpu-prof DIR burst: profile the scheduler and the gateway (node --cpu-prof, into DIR)
                 and summarise their busy time during the NATS-direct bursts;
                 scale: the same for the first scheduler replica of each deployment

  env BENCH_JOBS               jobs of each measured burst (quick ${SIZES.quick.burstJobs}, full ${SIZES.full.burstJobs}; scale: ${SIZES.quick.scaleJobs}, ${SIZES.full.scaleJobs})
  env BENCH_BACKLOG            jobs queued in the backlog scenario (quick ${SIZES.quick.backlogJobs}, full ${SIZES.full.backlogJobs})
  env BENCH_ROUNDS             rounds of every comparison (quick ${SIZES.quick.rounds}, full ${SIZES.full.rounds})
  env BENCH_SECONDS            length of each closed-loop window (quick ${SIZES.quick.windowMs / 1000}, full ${SIZES.full.windowMs / 1000})
  env BENCH_SERVICE_LOG_LEVEL  LOG_LEVEL of our services (default info, as deployed)
  env BENCH_CENSUS_DUMP        with --count: also write each census's messages, classified, to <prefix>-<pool>.ndjson`;

/** Reads the flags and the environment once; `"help"` for `--help`; throws ConfigError listing every problem. */
export function loadBenchConfig(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): Readonly<BenchConfig> | "help" {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: "boolean", default: false },
      full: { type: "boolean", default: false },
      only: { type: "string" },
      json: { type: "string" },
      count: { type: "boolean", default: false },
      "cpu-prof": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
    allowPositionals: false,
  });
  if (values.help) return "help";
  const problems: string[] = [];
  if (values.quick && values.full) problems.push("--quick and --full: choose one");
  const only = (values.only?.split(",") ?? [...SCENARIOS]).filter((name) => name !== "");
  const unknown = only.filter((name) => !(SCENARIOS as readonly string[]).includes(name));
  if (unknown.length > 0)
    problems.push(`--only: unknown scenario ${unknown.join(", ")} (known: ${SCENARIOS.join(", ")})`);
  const cpuProfileDir = values["cpu-prof"] === undefined ? undefined : resolve(values["cpu-prof"]);
  if (values.count && !only.includes("burst")) problems.push("--count belongs to the burst scenario: add it to --only");
  if (cpuProfileDir !== undefined && !["burst", "scale", "noisy-neighbour"].some((name) => only.includes(name)))
    problems.push("--cpu-prof belongs to the burst, scale and noisy-neighbour scenarios: add one to --only");
  let parsed: z.infer<typeof BenchEnv> | undefined;
  try {
    parsed = parseConfig(BenchEnv, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    problems.push(...error.problems);
  }
  if (problems.length > 0 || parsed === undefined) throw new ConfigError(problems);

  const size = values.full ? "full" : "quick";
  const defaults = SIZES[size];
  return Object.freeze({
    size,
    only: only as ScenarioName[],
    jsonFile: values.json,
    rounds: parsed.BENCH_ROUNDS ?? defaults.rounds,
    burstJobs: parsed.BENCH_JOBS ?? defaults.burstJobs,
    scaleJobs: parsed.BENCH_JOBS ?? defaults.scaleJobs,
    warmupJobs: defaults.warmupJobs,
    windowMs: parsed.BENCH_SECONDS === undefined ? defaults.windowMs : parsed.BENCH_SECONDS * 1000,
    warmupMs: defaults.warmupMs,
    openLoopStepMs: defaults.openLoopStepMs,
    openLoopSettleMs: defaults.openLoopSettleMs,
    backlogJobs: parsed.BENCH_BACKLOG ?? defaults.backlogJobs,
    submitWindowJobs: defaults.submitWindowJobs,
    requestsPerRound: defaults.requestsPerRound,
    serviceLogLevel: parsed.BENCH_SERVICE_LOG_LEVEL,
    count: values.count,
    cpuProfileDir,
    censusDump: parsed.BENCH_CENSUS_DUMP === undefined ? undefined : resolve(parsed.BENCH_CENSUS_DUMP),
  });
}
