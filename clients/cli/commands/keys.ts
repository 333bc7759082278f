import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { UsageError } from "../exit-codes.js";
import { table, timeText } from "../output.js";
import type { Run } from "../run.js";

export function registerKeyCommands(program: Command, run: Run): void {
  const keys = program.command("keys").description("Your API keys: create (the secret is shown once), list, revoke");

  keys
    .command("create")
    .description("Mint an API key; prints the key itself once")
    .requiredOption("--name <name>", "what the key is for")
    .option("--max-jobs-per-hour <n>", "submits allowed per hour")
    .option("--max-concurrent-jobs <n>", "jobs that may be unfinished at once")
    .option("--allowed-job-types <types>", "comma-separated job types it may submit")
    .action(
      run(async (ctx: CliContext, options: { name: string; maxJobsPerHour?: string; maxConcurrentJobs?: string; allowedJobTypes?: string }) => {
        const whole = (flag: string, text: string | undefined) => {
          if (text === undefined) return undefined;
          if (!/^\d+$/.test(text)) throw new UsageError(`${flag} takes a whole number, not "${text}".`);
          return Number(text);
        };
        const request = {
          name: options.name,
          ...(options.maxJobsPerHour !== undefined ? { maxJobsPerHour: whole("--max-jobs-per-hour", options.maxJobsPerHour) } : {}),
          ...(options.maxConcurrentJobs !== undefined ? { maxConcurrentJobs: whole("--max-concurrent-jobs", options.maxConcurrentJobs) } : {}),
          ...(options.allowedJobTypes !== undefined ? { allowedJobTypes: options.allowedJobTypes.split(",").map((type) => type.trim()) } : {}),
        };
        const created = await ctx.client().keys.create(request);
        ctx.print(created, () => `${created.key}\n`);
        if (!ctx.json) ctx.note(ctx.colors.dim(`Key ${created.key_id} ("${created.name}"). Store it now: it is not shown again.`));
      }),
    );

  keys
    .command("ls")
    .alias("list")
    .description("Your API keys, without their secrets")
    .action(
      run(async (ctx: CliContext) => {
        const { items } = await ctx.client().keys.list();
        ctx.print({ items }, () =>
          items.length === 0
            ? "No API keys.\n"
            : table(
                ["KEY", "NAME", "ENDS", "CREATED", "LAST USED", "REVOKED"],
                items.map((key) => [key.key_id, key.name, `…${key.hint}`, timeText(key.created_at), timeText(key.last_used_at), key.revoked_at ? ctx.colors.red(timeText(key.revoked_at)) : "-"]),
                ctx.colors,
              ),
        );
      }),
    );

  keys
    .command("revoke")
    .description("Revoke one of your keys; every gateway refuses it from then on")
    .argument("<key>", "the key id (key_…)")
    .action(
      run(async (ctx: CliContext, keyId: string) => {
        const revoked = await ctx.client().keys.revoke(keyId);
        ctx.print(revoked, () => `${revoked.key_id} revoked at ${timeText(revoked.revoked_at)}\n`);
      }),
    );
}
