import { readFileSync } from "node:fs";
import type { Command } from "commander";
import type { RpcRequest } from "../../sdk/src/index.js";
import type { CliContext } from "../context.js";
import { dryRunText } from "../dry-run-text.js";
import { exitCodeOfJob, UsageError } from "../exit-codes.js";
import { collect, numberOf } from "../flag-values.js";
import { printLogs, waitWithProgress } from "../follow.js";
import type { Run } from "../run.js";
import { jobRows } from "./job-rows.js";

type SubmitRequest = RpcRequest<"submitJob">;

export interface SubmitOptions {
  file?: string;
  type?: string;
  pool?: string;
  name?: string;
  cpu?: string;
  memory?: string;
  gpu?: string;
  timeout?: string;
  priority?: string;
  maxAttempts?: string;
  runAt?: string;
  queueTimeout?: string;
  retries?: string;
  retryOnExitCodes?: string;
  retryBackoff?: string;
  label: string[];
  env: string[];
  meta: string[];
  dependsOn: string[];
  concurrencyKey?: string;
  maxRunning?: string;
  wait?: boolean;
  follow?: boolean;
  dryRun?: boolean;
  idempotencyKey?: string;
}

/** Without the flag, the SDK sends a key of its own (the same on each of its retries). */
export const IDEMPOTENCY_KEY_HELP =
  "a key (1 to 255 printable ASCII characters) that makes running the same command again within 24 h answer as the first did";

/** `k=v` pairs of a repeatable flag as an object. */
function pairs(flag: string, values: string[]): Record<string, string> | undefined {
  if (values.length === 0) return undefined;
  const entries = values.map((pair) => {
    const at = pair.indexOf("=");
    if (at <= 0) throw new UsageError(`${flag} takes key=value, not "${pair}".`);
    return [pair.slice(0, at), pair.slice(at + 1)] as const;
  });
  return Object.fromEntries(entries);
}

/** `--retries` and its companions over the file's `retry`; a companion without a policy to apply to is a usage error. */
function retryPolicy(options: SubmitOptions, base: SubmitRequest["retry"]): SubmitRequest["retry"] {
  const maxRetries = numberOf("--retries", options.retries);
  const initialSeconds = numberOf("--retry-backoff", options.retryBackoff);
  const onExitCodes = options.retryOnExitCodes
    ?.split(",")
    .map((code) => numberOf("--retry-on-exit-codes", code.trim()) as number);
  if (maxRetries === undefined && initialSeconds === undefined && onExitCodes === undefined) return base;
  const max_retries = maxRetries ?? base?.max_retries;
  if (max_retries === undefined) throw new UsageError("--retry-backoff and --retry-on-exit-codes need --retries <n>.");
  const backoff = initialSeconds === undefined ? base?.backoff : { ...base?.backoff, initial_seconds: initialSeconds };
  return { ...base, ...definedOnly({ backoff, on_exit_codes: onExitCodes }), max_retries } as SubmitRequest["retry"];
}

function readJobFile(path: string): Partial<SubmitRequest> {
  let text: string;
  try {
    text = readFileSync(path === "-" ? 0 : path, "utf8");
  } catch (error) {
    throw new UsageError(`Cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return JSON.parse(text) as Partial<SubmitRequest>;
  } catch (error) {
    throw new UsageError(`${path} is not JSON: ${(error as Error).message}`);
  }
}

/** The submit body: the file's fields, then each flag given over them, then the command after `--`. */
export function submitRequest(options: SubmitOptions, command: string[]): SubmitRequest {
  const base = options.file ? readJobFile(options.file) : {};
  const resources = {
    ...base.resources,
    ...definedOnly({
      cpu: numberOf("--cpu", options.cpu),
      memory_mb: numberOf("--memory", options.memory),
      gpu: numberOf("--gpu", options.gpu),
    }),
  };
  const body = {
    ...base,
    ...definedOnly({
      type: options.type,
      pool_id: options.pool,
      name: options.name,
      timeout_seconds: numberOf("--timeout", options.timeout),
      priority: numberOf("--priority", options.priority),
      max_attempts: numberOf("--max-attempts", options.maxAttempts),
      run_at: options.runAt,
      queue_timeout_seconds: numberOf("--queue-timeout", options.queueTimeout),
      retry: retryPolicy(options, base.retry),
      labels: pairs("--label", options.label),
      env: pairs("--env", options.env),
      metadata: pairs("--meta", options.meta),
      depends_on: options.dependsOn.length > 0 ? options.dependsOn : undefined,
      concurrency: concurrencyOf(options),
    }),
    ...(Object.keys(resources).length > 0 ? { resources } : {}),
    ...(command.length > 0 ? { command } : {}),
  } as Partial<SubmitRequest>;
  body.type ??= "shell";
  if (!body.command || body.command.length === 0)
    throw new UsageError("Give the command after `--` (cjs jobs submit -- echo hello), or in --file.");
  return body as SubmitRequest;
}

/** `--concurrency-key` with `--max-running` (default 1) as the body's `concurrency`. */
function concurrencyOf(options: Pick<SubmitOptions, "concurrencyKey" | "maxRunning">): SubmitRequest["concurrency"] {
  if (options.concurrencyKey === undefined) {
    if (options.maxRunning !== undefined) throw new UsageError("--max-running needs --concurrency-key.");
    return undefined;
  }
  return { key: options.concurrencyKey, max_running: numberOf("--max-running", options.maxRunning) ?? 1 };
}

function definedOnly<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as Partial<T>;
}

/** `jobs submit`: queues a job (or says what a submit would do); with --wait or --follow, exits with its outcome. */
export function submitCommand(jobs: Command, run: Run, setExit: (code: number) => void): void {
  jobs
    .command("submit")
    .description("Queue a job: the command after `--`, the rest from flags and/or --file")
    .argument("[command...]", "the program and its arguments, after --")
    .option("-f, --file <path>", "a JSON file with the submit body (`-` for stdin); flags override its fields")
    .option("--type <type>", "the job type (default shell)")
    .option("--pool <pool>", "the pool (default: the service's default pool)")
    .option("--name <name>", "a name to find it by")
    .option("--cpu <cores>", "cores (fractions allowed)")
    .option("--memory <mb>", "memory in MB")
    .option("--gpu <count>", "GPUs")
    .option("--timeout <seconds>", "how long a run may take")
    .option("--priority <n>", "higher runs first within a pool (-1000 to 1000)")
    .option("--max-attempts <n>", "runs allowed in all")
    .option("--run-at <time>", "not before this ISO-8601 UTC time (e.g. 2026-11-23T02:00:00Z)")
    .option(
      "--queue-timeout <seconds>",
      "cancel the job if no node has started it this long after its submit (or --run-at)",
    )
    .option("--retries <n>", "run a failed or timed-out attempt again, up to n times, after a backoff")
    .option("--retry-on-exit-codes <codes>", "with --retries: retry only these exit codes (comma-separated)")
    .option("--retry-backoff <seconds>", "with --retries: the first backoff (doubling each retry, at most 600 s)")
    .option("--label <key=value>", "a label the node must carry (repeatable)", collect, [])
    .option("--env <NAME=value>", "an environment variable of the run (repeatable)", collect, [])
    .option("--meta <key=value>", "metadata kept with the job (repeatable)", collect, [])
    .option("--depends-on <job_id>", "a job that must succeed first (repeatable)", collect, [])
    .option("--concurrency-key <key>", "at most --max-running jobs of the business with this key run at once")
    .option("--max-running <n>", "with --concurrency-key: how many of its jobs may run at once (default 1)")
    .option("--wait", "wait for the job's end; exit with its outcome")
    .option("--follow", "stream its log until it ends; exit with its outcome")
    .option("--idempotency-key <key>", IDEMPOTENCY_KEY_HELP)
    .option(
      "--dry-run",
      "say what a submit would do (nodes that fit, cost, credit, quota and rate-limit room), creating nothing",
    )
    .action(
      run(async (ctx: CliContext, command: string[], options: SubmitOptions) => {
        const client = ctx.client();
        if (options.dryRun) {
          const answer = await client.jobs.dryRun(submitRequest(options, command));
          ctx.print(answer, () => dryRunText(ctx, answer));
          return;
        }
        const queued = await client.jobs.submit(submitRequest(options, command), {
          idempotencyKey: options.idempotencyKey,
        });
        if (options.follow) {
          ctx.note(ctx.colors.dim(`job ${queued.job_id} queued; following its log`));
          setExit(await printLogs(ctx, client, queued.job_id, true));
          return;
        }
        if (options.wait) {
          const done = await waitWithProgress(ctx, client, queued.job_id);
          ctx.print(done, () => jobRows(ctx, [done.job]));
          setExit(exitCodeOfJob(done.job));
          return;
        }
        ctx.print(queued, () => `${queued.job_id}\n`);
      }),
    );
}
