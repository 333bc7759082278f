import type { Command } from "commander";
import type { RpcRequest, RpcResponse } from "../../sdk/src/index.js";
import type { CliContext } from "../context.js";
import { table, timeText } from "../output.js";
import type { Run } from "../run.js";
import { deleteCommand } from "./delete-command.js";
import { submitRequest } from "./job-submit.js";
import { choiceOption, idOf } from "../choices.js";
import { OverlapPolicy } from "../../../shared/contract/index.js";

type Schedule = RpcResponse<"retrieveSchedule">["schedule"];

function scheduleRows(ctx: CliContext, schedules: Schedule[]): string {
  return table(
    ["SCHEDULE", "STATE", "CRON", "TIME ZONE", "OVERLAP", "NEXT RUN", "LAST JOB", "NAME"],
    schedules.map((schedule) => [
      schedule.schedule_id,
      schedule.state,
      schedule.cron,
      schedule.timezone,
      schedule.overlap,
      schedule.next_run_at === null ? "-" : timeText(schedule.next_run_at),
      schedule.last_job_id ?? "-",
      schedule.name ?? "",
    ]),
    ctx.colors,
  );
}

function scheduleText(ctx: CliContext, schedule: Schedule): string {
  const lines = [
    scheduleRows(ctx, [schedule]),
    `command: ${schedule.job.command.join(" ")} (pool ${schedule.job.pool_id})`,
  ];
  if (schedule.last_error)
    lines.push(ctx.colors.red(`last tick refused: ${schedule.last_error.code}: ${schedule.last_error.message}`));
  if (schedule.skipped_count > 0)
    lines.push(`ticks skipped: ${schedule.skipped_count} (last ${timeText(schedule.last_skipped_at)})`);
  return `${lines.join("\n")}\n`;
}

export function registerScheduleCommands(program: Command, run: Run): void {
  const schedules = program
    .command("schedules")
    .description("Jobs made on the ticks of a cron expression: create, list, pause, resume, delete");
  scheduleCreateCommand(schedules, run);
  scheduleListCommand(schedules, run);
  scheduleGetCommand(schedules, run);
  schedulePauseAndResumeCommands(schedules, run);
  deleteCommand(schedules, run, "schedule", "Delete a schedule; the jobs it made are kept", (client, id) =>
    client.schedules.delete(id),
  );
}

function scheduleCreateCommand(schedules: Command, run: Run): void {
  schedules
    .command("create")
    .description("A schedule that submits the job after `--` (or in --file) on each tick")
    .argument("[command...]", "the job's command, after --")
    .requiredOption("--cron <expression>", "5 fields (minute hour day month weekday), or 6 with seconds first")
    .option("--timezone <zone>", "the IANA time zone the expression is read in (default UTC)")
    .addOption(choiceOption("--overlap <policy>", "while the previous job runs (default skip)", OverlapPolicy.options))
    .option("--name <name>", "a name for the schedule")
    .option("--paused", "create it paused")
    .option("-f, --file <path>", "a JSON file with the job template (a submit body; `-` for stdin)")
    .option("--type <type>", "the job type (default shell)")
    .option("--pool <pool>", "the job's pool (default: the service's default pool)")
    .action(
      run(
        async (
          ctx: CliContext,
          command: string[],
          options: {
            cron: string;
            timezone?: string;
            overlap?: string;
            name?: string;
            paused?: boolean;
            file?: string;
            type?: string;
            pool?: string;
          },
        ) => {
          const job = submitRequest(
            { file: options.file, type: options.type, pool: options.pool, label: [], env: [], meta: [], dependsOn: [] },
            command,
          );
          const request = {
            cron: options.cron,
            job,
            ...(options.timezone !== undefined ? { timezone: options.timezone } : {}),
            ...(options.overlap !== undefined ? { overlap: options.overlap } : {}),
            ...(options.name !== undefined ? { name: options.name } : {}),
            ...(options.paused ? { paused: true } : {}),
          } as RpcRequest<"createSchedule">;
          const { schedule } = await ctx.client().schedules.create(request);
          ctx.print({ schedule }, () => scheduleText(ctx, schedule));
        },
      ),
    );
}

function scheduleListCommand(schedules: Command, run: Run): void {
  schedules
    .command("ls")
    .alias("list")
    .description("The business's schedules, newest first")
    .option("--all", "every page, not only the first")
    .action(
      run(async (ctx: CliContext, options: { all?: boolean }) => {
        const client = ctx.client();
        const items: Schedule[] = [];
        if (options.all) for await (const schedule of client.schedules.all()) items.push(schedule);
        else items.push(...(await client.schedules.list()).items);
        ctx.print({ items }, () => (items.length === 0 ? "No schedules.\n" : scheduleRows(ctx, items)));
      }),
    );
}

function scheduleGetCommand(schedules: Command, run: Run): void {
  schedules
    .command("get")
    .description("One schedule: its next tick, its last job, a refusal or skips")
    .argument("<schedule>", "the schedule id", idOf("schedule"))
    .action(
      run(async (ctx: CliContext, scheduleId: string) => {
        const { schedule } = await ctx.client().schedules.retrieve(scheduleId);
        ctx.print({ schedule }, () => scheduleText(ctx, schedule));
      }),
    );
}

function schedulePauseAndResumeCommands(schedules: Command, run: Run): void {
  for (const [name, description] of [
    ["pause", "Make no more jobs until resumed"],
    ["resume", "Make jobs again from the next tick"],
  ] as const) {
    schedules
      .command(name)
      .description(description)
      .argument("<schedule>", "the schedule id", idOf("schedule"))
      .action(
        run(async (ctx: CliContext, scheduleId: string) => {
          const { schedule } = await ctx.client().schedules[name](scheduleId);
          ctx.print(
            { schedule },
            () =>
              `${schedule.schedule_id} ${schedule.state}${schedule.next_run_at ? `, next run ${timeText(schedule.next_run_at)}` : ""}\n`,
          );
        }),
      );
  }
}
