import type { Command } from "commander";
import type { RpcRequest } from "../../sdk/src/index.js";
import type { CliContext } from "../context.js";
import { UsageError } from "../exit-codes.js";
import { wholeNumberOf } from "../flag-values.js";
import { itemsTable, timeText } from "../output.js";
import type { Run } from "../run.js";
import { idOf } from "../choices.js";
import { API_KEY_SCOPES } from "../../../shared/contract/index.js";

/** `--scopes a,b`: each must be a scope, and a wrong one is named with the list of them all. */
function scopesOf(text: string): string[] {
  const scopes = text.split(",").map((scope) => scope.trim());
  const unknown = scopes.find((scope) => !(API_KEY_SCOPES as readonly string[]).includes(scope));
  if (unknown !== undefined)
    throw new UsageError(`--scopes: "${unknown}" is not a scope. The scopes are ${API_KEY_SCOPES.join(", ")}.`);
  return scopes;
}

function credits(text: string): number {
  const value = Number(text);
  if (text.trim() === "" || !Number.isFinite(value))
    throw new UsageError(`--budget takes a number of credits, not "${text}".`);
  return value;
}

export function registerKeyCommands(program: Command, run: Run): void {
  const keys = program.command("keys").description("Your API keys: create (the secret is shown once), list, revoke");
  keyCreateCommand(keys, run);
  keyListCommand(keys, run);
  keyUpdateCommand(keys, run);
  keyRevokeCommand(keys, run);
}

function keyCreateCommand(keys: Command, run: Run): void {
  keys
    .command("create")
    .description("Mint an API key; prints the key itself once")
    .requiredOption("--name <name>", "what the key is for")
    .option("--max-jobs-per-hour <n>", "submits allowed per hour")
    .option("--max-concurrent-jobs <n>", "jobs that may be unfinished at once")
    .option("--allowed-job-types <types>", "comma-separated job types it may submit")
    .option("--scopes <scopes>", `comma-separated scopes, of ${API_KEY_SCOPES.join(", ")}; default every scope`)
    .option("--expires-at <time>", "when it stops working (ISO 8601)")
    .option("--budget <credits>", "compute credits its jobs may be charged per month")
    .action(
      run(
        async (
          ctx: CliContext,
          options: {
            name: string;
            maxJobsPerHour?: string;
            maxConcurrentJobs?: string;
            allowedJobTypes?: string;
            scopes?: string;
            expiresAt?: string;
            budget?: string;
          },
        ) => {
          const request = {
            name: options.name,
            ...(options.maxJobsPerHour !== undefined
              ? { maxJobsPerHour: wholeNumberOf("--max-jobs-per-hour", options.maxJobsPerHour) }
              : {}),
            ...(options.maxConcurrentJobs !== undefined
              ? { maxConcurrentJobs: wholeNumberOf("--max-concurrent-jobs", options.maxConcurrentJobs) }
              : {}),
            ...(options.allowedJobTypes !== undefined
              ? { allowedJobTypes: options.allowedJobTypes.split(",").map((type) => type.trim()) }
              : {}),
            ...(options.scopes !== undefined ? { scopes: scopesOf(options.scopes) } : {}),
            ...(options.expiresAt !== undefined ? { expires_at: options.expiresAt } : {}),
            ...(options.budget !== undefined ? { budget_credits_per_month: credits(options.budget) } : {}),
          } as RpcRequest<"createApiKey">;
          const created = await ctx.client().keys.create(request);
          ctx.print(created, () => `${created.key}\n`);
          if (!ctx.json)
            ctx.note(ctx.colors.dim(`Key ${created.key_id} ("${created.name}"). Store it now: it is not shown again.`));
        },
      ),
    );
}

function keyListCommand(keys: Command, run: Run): void {
  keys
    .command("ls")
    .alias("list")
    .description("Your API keys, without their secrets")
    .action(
      run(async (ctx: CliContext) => {
        const { items } = await ctx.client().keys.list();
        ctx.print({ items }, () =>
          itemsTable(
            ctx.colors,
            items,
            "No API keys.\n",
            ["KEY", "NAME", "ENDS", "SCOPES", "EXPIRES", "SPENT/BUDGET", "LAST USED", "REVOKED"],
            (key) => [
              key.key_id,
              key.name,
              `…${key.hint}`,
              key.scopes === null ? "all" : key.scopes.join(","),
              timeText(key.expires_at),
              key.budget_credits_per_month === null
                ? "-"
                : `${key.spent_credits_this_month ?? "?"}/${key.budget_credits_per_month}`,
              key.last_used_at ? `${timeText(key.last_used_at)} ${key.last_used_ip ?? ""}`.trim() : "-",
              key.revoked_at ? ctx.colors.red(timeText(key.revoked_at)) : "-",
            ],
          ),
        );
      }),
    );
}

function keyUpdateCommand(keys: Command, run: Run): void {
  keys
    .command("update")
    .description("Rename a key or change its monthly budget")
    .argument("<key>", "the key id (key_…)", idOf("key"))
    .option("--name <name>", "its new name")
    .option("--budget <credits>", "its monthly budget in credits; `none` removes it")
    .action(
      run(async (ctx: CliContext, keyId: string, options: { name?: string; budget?: string }) => {
        if (options.name === undefined && options.budget === undefined)
          throw new UsageError("Give --name, --budget or both.");
        const updated = await ctx.client().keys.update({
          key_id: keyId,
          ...(options.name !== undefined ? { name: options.name } : {}),
          ...(options.budget !== undefined
            ? { budget_credits_per_month: options.budget === "none" ? null : credits(options.budget) }
            : {}),
        });
        ctx.print(
          updated,
          () =>
            `${updated.key_id} "${updated.name}"${updated.budget_credits_per_month !== null ? `, budget ${updated.budget_credits_per_month} credits a month` : ""}\n`,
        );
      }),
    );
}

function keyRevokeCommand(keys: Command, run: Run): void {
  keys
    .command("revoke")
    .description("Revoke one of your keys; every gateway refuses it from then on")
    .argument("<key>", "the key id (key_…)", idOf("key"))
    .action(
      run(async (ctx: CliContext, keyId: string) => {
        const revoked = await ctx.client().keys.revoke(keyId);
        ctx.print(revoked, () => `${revoked.key_id} revoked at ${timeText(revoked.revoked_at)}\n`);
      }),
    );
}
