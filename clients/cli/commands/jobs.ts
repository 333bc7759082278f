import type { Command } from "commander";
import type { ExportRequest, RpcRequest } from "../../sdk/src/index.js";
import type { CliContext } from "../context.js";
import { saveExport } from "../export-file.js";
import { choiceOption, idOf, repeatableChoiceOption } from "../choices.js";
import { ExportFormat, JobState } from "../../../shared/contract/index.js";
import { collect, numberOf } from "../flag-values.js";
import { printLogs } from "../follow.js";
import { stateText, timeText } from "../output.js";
import type { Run } from "../run.js";
import { deleteCommand } from "./delete-command.js";
import { type JobRow, jobRows } from "./job-rows.js";
import { IDEMPOTENCY_KEY_HELP, submitCommand } from "./job-submit.js";

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

export function registerJobCommands(program: Command, run: Run, setExit: (code: number) => void): void {
  const jobs = program.command("jobs").description("Submit, list, inspect, cancel and retry jobs");
  submitCommand(jobs, run, setExit);
  listCommand(jobs, run);
  getCommand(jobs, run);
  cancelAndRetryCommands(jobs, run);
  deleteCommand(jobs, run, "job", "Delete a finished job with its logs and artifacts", (client, id) =>
    client.jobs.delete(id),
  );
  exportCommand(jobs, run);
  logsCommand(program, run, setExit);
}

/** `jobs list`: the business's jobs, filtered, a page or all of them, or watched. */
function listCommand(jobs: Command, run: Run): void {
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
          limit: Math.min(200, numberOf("--limit", options.limit) ?? 50),
        } as RpcRequest<"listJobs">;
        if (options.watch) return watchJobs(ctx, filter);
        const items: JobRow[] = [];
        if (options.all) for await (const job of client.jobs.all(filter)) items.push(job);
        else items.push(...(await client.jobs.list(filter)).items);
        ctx.print({ items }, () => (items.length === 0 ? "No jobs.\n" : jobRows(ctx, items)));
      }),
    );
}

/** `jobs get`: one job with its timeline and artifacts. */
function getCommand(jobs: Command, run: Run): void {
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
}

/** `jobs cancel` and `jobs retry`. */
function cancelAndRetryCommands(jobs: Command, run: Run): void {
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
}

/** `jobs export`: the business's jobs as a file. */
function exportCommand(jobs: Command, run: Run): void {
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
}

/** `logs`: a job's log, followed with -f until the job ends. */
function logsCommand(program: Command, run: Run, setExit: (code: number) => void): void {
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
