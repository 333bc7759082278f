import { readFileSync } from "node:fs";
import type { Command } from "commander";
import type { ExportRequest, RpcRequest } from "../../sdk/src/index.js";
import type { CliContext } from "../context.js";
import { dryRunText } from "../dry-run-text.js";
import { exitCodeOfJob, UsageError } from "../exit-codes.js";
import { saveExport } from "../export-file.js";
import { choiceOption, idOf, repeatableChoiceOption } from "../choices.js";
import { ExportFormat, JobState } from "../../../shared/contract/index.js";
import { printLogs, waitWithProgress } from "../follow.js";
import { stateText, table, timeText } from "../output.js";
import type { Run } from "../run.js";

type SubmitRequest = RpcRequest<"submitJob">;
type JobRow = {
  job_id: string;
  name: string | null;
  state: string;
  pool_id: string;
  attempt: number;
  exit_code: number | null;
  created_at: string;
  pending_reason?: string | null;
};

interface SubmitOptions {
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

interface ListOptions {
  state: string[];
  pool?: string;
  type?: string;
  label: string[];
  metadata: string[];
  namePrefix?: string;
  schedule?: string;
  limit: string;
  all?: boolean;
  watch?: boolean;
}

/** Without the flag, the SDK sends a key of its own (the same on each of its retries). */
const IDEMPOTENCY_KEY_HELP =
  "a key (1 to 255 printable ASCII characters) that makes running the same command again within 24 h answer as the first did";

const collect = (value: string, previous: string[]) => [...previous, value];

function number(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const value = Number(text);
  if (!Number.isFinite(value)) throw new UsageError(`${flag} takes a number, not "${text}".`);
  return value;
}

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
  const maxRetries = number("--retries", options.retries);
  const initialSeconds = number("--retry-backoff", options.retryBackoff);
  const onExitCodes = options.retryOnExitCodes
    ?.split(",")
    .map((code) => number("--retry-on-exit-codes", code.trim()) as number);
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
      cpu: number("--cpu", options.cpu),
      memory_mb: number("--memory", options.memory),
      gpu: number("--gpu", options.gpu),
    }),
  };
  const body = {
    ...base,
    ...definedOnly({
      type: options.type,
      pool_id: options.pool,
      name: options.name,
      timeout_seconds: number("--timeout", options.timeout),
      priority: number("--priority", options.priority),
      max_attempts: number("--max-attempts", options.maxAttempts),
      run_at: options.runAt,
      queue_timeout_seconds: number("--queue-timeout", options.queueTimeout),
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
  return { key: options.concurrencyKey, max_running: number("--max-running", options.maxRunning) ?? 1 };
}

function definedOnly<T extends Record<string, unknown>>(object: T): Partial<T> {
  return Object.fromEntries(Object.entries(object).filter(([, value]) => value !== undefined)) as Partial<T>;
}

function jobRows(ctx: CliContext, jobs: JobRow[]): string {
  return table(
    ["JOB", "STATE", "POOL", "ATTEMPT", "EXIT", "CREATED", "NAME"],
    jobs.map((job) => [
      job.job_id,
      stateText(ctx.colors, job.state) + (job.pending_reason ? ctx.colors.dim(` (${job.pending_reason})`) : ""),
      job.pool_id,
      String(job.attempt),
      job.exit_code === null ? "-" : String(job.exit_code),
      timeText(job.created_at),
      job.name ?? "",
    ]),
    ctx.colors,
  );
}

export function registerJobCommands(program: Command, run: Run, setExit: (code: number) => void): void {
  const jobs = program.command("jobs").description("Submit, list, inspect, cancel and retry jobs");

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

  jobs
    .command("list")
    .alias("ls")
    .description("The business's jobs, newest first")
    .addOption(repeatableChoiceOption("--state <state>", "only jobs in this state (repeatable)", JobState.options))
    .option("--pool <pool>", "only this pool")
    .option("--type <type>", "only this type")
    .option("--label <key=value>", "only jobs with this label (repeatable)", collect, [])
    .option(
      "--metadata <key=value>",
      "only jobs with this metadata entry (repeatable; split at the first =)",
      collect,
      [],
    )
    .option("--name-prefix <prefix>", "only jobs whose name starts with this")
    .option("--schedule <schedule>", "only jobs made by this schedule")
    .option("--limit <n>", "at most this many", "50")
    .option("--all", "every page, not only the first")
    .option("--watch", "keep listing; print each change of state as it is seen")
    .action(
      run(async (ctx: CliContext, options: ListOptions) => {
        const client = ctx.client();
        const filter = {
          ...(options.state.length > 0 ? { state: options.state } : {}),
          ...(options.pool ? { pool_id: options.pool } : {}),
          ...(options.type ? { type: options.type } : {}),
          ...(options.label.length > 0 ? { label: options.label } : {}),
          ...(options.metadata.length > 0 ? { metadata: options.metadata } : {}),
          ...(options.namePrefix ? { name_prefix: options.namePrefix } : {}),
          ...(options.schedule ? { schedule_id: options.schedule } : {}),
          limit: Math.min(200, number("--limit", options.limit) ?? 50),
        } as RpcRequest<"listJobs">;
        if (options.watch) return watchJobs(ctx, filter);
        const items: JobRow[] = [];
        if (options.all) for await (const job of client.jobs.all(filter)) items.push(job);
        else items.push(...(await client.jobs.list(filter)).items);
        ctx.print({ items }, () => (items.length === 0 ? "No jobs.\n" : jobRows(ctx, items)));
      }),
    );

  jobs
    .command("get")
    .description("One job with its timeline and artifacts")
    .argument("<job>", "the job id", idOf("job"))
    .action(
      run(async (ctx: CliContext, jobId: string) => {
        const answer = await ctx.client().jobs.retrieve(jobId);
        ctx.print(answer, () => {
          const { job } = answer;
          const lines = [
            jobRows(ctx, [job]),
            `command   ${JSON.stringify(job.command)}`,
            job.error ? `error     ${job.error.code}: ${job.error.message}` : null,
            job.node_id ? `node      ${job.node_id}` : null,
            "",
            ctx.colors.bold("timeline"),
            ...job.timeline.map(
              (event) =>
                `  ${timeText(event.at)}  ${stateText(ctx.colors, event.state).padEnd(9)}  attempt ${event.attempt}  ${event.reason}${event.node_id ? ` on ${event.node_id}` : ""}`,
            ),
            ...(answer.artifacts.length > 0
              ? [
                  "",
                  ctx.colors.bold("artifacts"),
                  ...answer.artifacts.map(
                    (artifact) => `  ${artifact.artifact_id}  ${artifact.size_bytes} B  ${artifact.content_type}`,
                  ),
                ]
              : []),
          ];
          return lines.filter((line) => line !== null).join("\n") + "\n";
        });
      }),
    );

  for (const [name, verb, description] of [
    ["cancel", "cancel", "Cancel a queued, assigned or running job"],
    ["retry", "retry", "Requeue a failed or timed-out job as its next attempt"],
  ] as const) {
    const command = jobs.command(name).description(description).argument("<job>", "the job id", idOf("job"));
    if (verb === "retry") command.option("--idempotency-key <key>", IDEMPOTENCY_KEY_HELP);
    command.action(
      run(async (ctx: CliContext, jobId: string, options: { idempotencyKey?: string }) => {
        const answer = await ctx.client().jobs[verb](jobId, { idempotencyKey: options.idempotencyKey });
        ctx.print(answer, () => `${answer.job.job_id} ${stateText(ctx.colors, answer.job.state)}\n`);
      }),
    );
  }

  jobs
    .command("rm")
    .alias("delete")
    .description("Delete a finished job with its logs and artifacts")
    .argument("<job>", "the job id", idOf("job"))
    .action(
      run(async (ctx: CliContext, jobId: string) => {
        const deleted = await ctx.client().jobs.delete(jobId);
        ctx.print(deleted, () => `${deleted.job_id} deleted\n`);
      }),
    );

  jobs
    .command("export")
    .description("The business's jobs as a CSV or NDJSON file, streamed (business admins); filters as for list")
    .addOption(choiceOption("--format <format>", "the file's format", ExportFormat.options).default("csv"))
    .option("-o, --output <path>", "where to write it (default stdout)", "-")
    .addOption(repeatableChoiceOption("--state <state>", "only jobs in this state (repeatable)", JobState.options))
    .option("--pool <pool>", "only this pool")
    .option("--label <key=value>", "only jobs with this label (repeatable)", collect, [])
    .action(
      run(
        async (
          ctx: CliContext,
          options: { format: string; output: string; state: string[]; pool?: string; label: string[] },
        ) => {
          const request = {
            format: options.format as ExportFormat,
            ...(options.state.length > 0 ? { state: options.state } : {}),
            ...(options.pool ? { pool_id: options.pool } : {}),
            ...(options.label.length > 0 ? { label: options.label } : {}),
          } as ExportRequest<"exportJobs">;
          await saveExport(ctx, await ctx.client().jobs.export(request), options.output);
        },
      ),
    );

  program
    .command("logs")
    .description("A job's log; -f follows it until the job ends (and exits with its outcome)")
    .argument("<job>", "the job id", idOf("job"))
    .option("-f, --follow", "keep streaming until the job ends")
    .action(
      run(async (ctx: CliContext, jobId: string, options: { follow?: boolean }) => {
        const code = await printLogs(ctx, ctx.client(), jobId, options.follow === true);
        if (options.follow) setExit(code);
      }),
    );
}

/** `jobs list --watch`: a line per job whose state changed, checked every 2 s, until Ctrl-C. */
async function watchJobs(ctx: CliContext, filter: RpcRequest<"listJobs">): Promise<void> {
  const client = ctx.client();
  const seen = new Map<string, string>();
  for (;;) {
    const { items } = await client.jobs.list(filter);
    for (const job of [...items].reverse()) {
      if (seen.get(job.job_id) === job.state) continue;
      seen.set(job.job_id, job.state);
      if (ctx.json)
        ctx.io.stdout.write(`${JSON.stringify({ job_id: job.job_id, state: job.state, at: job.updated_at })}\n`);
      else
        ctx.io.stdout.write(
          `${timeText(job.updated_at)}  ${job.job_id}  ${stateText(ctx.colors, job.state)}${job.pending_reason ? ctx.colors.dim(` (${job.pending_reason})`) : ""}\n`,
        );
    }
    await new Promise((resolve) => setTimeout(resolve, 2000));
  }
}
