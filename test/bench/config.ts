import { parseArgs } from "node:util";
import { z } from "zod";
import { ConfigError, parseConfig } from "../../shared/runtime/index.js";

/** The scenarios, by the name `--only` takes, in the order they run. */
export const SCENARIOS = ["submit", "end-to-end", "log-ingest", "rate-limiter"] as const;
export type ScenarioName = (typeof SCENARIOS)[number];

/** How big a run is: `quick` (the default, under a minute) or `full`. */
const SIZES = {
  quick: { measureMs: 1_500, warmupMs: 300, jobs: 300, rounds: 3, requestsPerRound: 500 },
  full: { measureMs: 10_000, warmupMs: 1_000, jobs: 1_000, rounds: 6, requestsPerRound: 3_000 },
} as const;

const emptyAsUnset = (value: unknown) => (value === "" ? undefined : value);

/** The environment the bench reads; each unset size comes from `--quick` or `--full`. */
const BenchEnv = z.object({
  /** Jobs driven through the end-to-end scenario. */
  BENCH_JOBS: z.preprocess(emptyAsUnset, z.coerce.number().int().min(1).max(1_000_000).optional()),
  /** Concurrent clients of the submit scenario, comma-separated (`1,16,64`). */
  BENCH_CONCURRENCY: z.preprocess(
    emptyAsUnset,
    z
      .string()
      .regex(/^\d+(,\d+)*$/, "comma-separated positive integers, e.g. 1,16,64")
      .transform((text) => text.split(",").map(Number))
      .refine((list) => list.every((count) => count >= 1 && count <= 1024), "each between 1 and 1024")
      .default([1, 16, 64]),
  ),
  /** A nats-server to use instead of starting one per scenario (read by the test harness's `startNats`). */
  NATS_URL: z.preprocess(emptyAsUnset, z.string().min(1).optional()),
  /** Length of each measured step (one submit setting, one log ingest setting), in seconds. */
  BENCH_SECONDS: z.preprocess(emptyAsUnset, z.coerce.number().positive().max(3_600).optional()),
});

export interface BenchConfig {
  size: keyof typeof SIZES;
  only: readonly ScenarioName[];
  jsonFile: string | undefined;
  /** Set: every scenario runs on this shared server. */
  natsUrl: string | undefined;
  jobs: number;
  concurrency: readonly number[];
  measureMs: number;
  warmupMs: number;
  /** Rounds of the rate-limiter comparison, each one phase counted and one not. */
  rounds: number;
  requestsPerRound: number;
}

export const USAGE = `usage: npx tsx test/bench/main.ts [--quick | --full] [--only ${SCENARIOS.join(",")}] [--json FILE]

  --quick        a run of under a minute (the default; what make bench runs)
  --full         longer steps and more jobs: steadier numbers
  --only LIST    run only these scenarios (comma-separated)
  --json FILE    also write the results as JSON

  env BENCH_JOBS         jobs of the end-to-end scenario (quick ${SIZES.quick.jobs}, full ${SIZES.full.jobs})
  env BENCH_CONCURRENCY  concurrent clients of the submit scenario (default 1,16,64)
  env BENCH_SECONDS      length of each measured step (quick ${SIZES.quick.measureMs / 1000}, full ${SIZES.full.measureMs / 1000})
  env NATS_URL           use this nats-server (with JetStream) instead of starting one`;

/** Reads the flags and the environment once; `"help"` for `--help`; throws ConfigError listing every problem. */
export function loadBenchConfig(argv: readonly string[], env: Record<string, string | undefined>): Readonly<BenchConfig> | "help" {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      quick: { type: "boolean", default: false },
      full: { type: "boolean", default: false },
      only: { type: "string" },
      json: { type: "string" },
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
  if (unknown.length > 0) problems.push(`--only: unknown scenario ${unknown.join(", ")} (known: ${SCENARIOS.join(", ")})`);
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
    natsUrl: parsed.NATS_URL,
    jobs: parsed.BENCH_JOBS ?? defaults.jobs,
    concurrency: parsed.BENCH_CONCURRENCY,
    measureMs: parsed.BENCH_SECONDS === undefined ? defaults.measureMs : parsed.BENCH_SECONDS * 1000,
    warmupMs: defaults.warmupMs,
    rounds: defaults.rounds,
    requestsPerRound: defaults.requestsPerRound,
  });
}
