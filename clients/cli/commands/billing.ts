import type { Command } from "commander";
import type { CliContext } from "../context.js";
import { saveExport } from "../export-file.js";
import { choiceOption } from "../choices.js";
import { ExportFormat } from "../../../shared/contract/index.js";
import { itemsTable, table, timeText } from "../output.js";
import type { Run } from "../run.js";

export function registerBillingCommands(program: Command, run: Run): void {
  const billing = program
    .command("billing")
    .description("Plans, the business's subscription, buying a plan, the credit ledger");
  billingPlansCommand(billing, run);
  billingSubscriptionCommand(billing, run);
  billingCancelCommand(billing, run);
  billingExportCommand(billing, run);
  billingCheckoutCommand(billing, run);
  billingLedgerCommand(billing, run);
}

function billingPlansCommand(billing: Command, run: Run): void {
  billing
    .command("plans")
    .description("The plans on offer")
    .action(
      run(async (ctx: CliContext) => {
        const answer = await ctx.client().billing.plans();
        ctx.print(answer, () =>
          table(
            ["PLAN", "NAME", "PRICE", "CREDIT", "CPU CORE-HOUR", "MAX CPU", "DEFAULT"],
            answer.plans.map((plan) => [
              plan.id,
              plan.name,
              `${plan.price} ${plan.currency}/${plan.interval}`,
              String(plan.included_credit),
              String(plan.rates.cpu_core_hour),
              String(plan.limits.max_job_cpu),
              plan.id === answer.default_plan_id ? "yes" : "",
            ]),
            ctx.colors,
          ),
        );
      }),
    );
}

function billingSubscriptionCommand(billing: Command, run: Run): void {
  billing
    .command("subscription")
    .description("The business's plan, period, credit balance and usage")
    .action(
      run(async (ctx: CliContext) => {
        const sub = await ctx.client().billing.subscription();
        ctx.print(
          sub,
          () =>
            [
              `plan      ${sub.plan.name} (${sub.plan.id}), ${sub.status}`,
              `period    ${timeText(sub.current_period_start)} to ${timeText(sub.current_period_end)}`,
              `credit    ${sub.credit_balance} left, ${sub.usage_this_period} used this period`,
              `provider  ${sub.provider ?? "-"}`,
            ].join("\n") + "\n",
        );
      }),
    );
}

function billingCancelCommand(billing: Command, run: Run): void {
  billing
    .command("cancel")
    .description("Cancel the subscription at the end of its period (business admins)")
    .action(
      run(async (ctx: CliContext) => {
        const sub = await ctx.client().billing.cancelSubscription();
        ctx.print(
          sub,
          () =>
            `${sub.plan.name} ends at ${timeText(sub.ends_at ?? sub.current_period_end)}; the business then goes back to the default plan.\n`,
        );
      }),
    );
}

function billingExportCommand(billing: Command, run: Run): void {
  billing
    .command("export")
    .description("The whole credit ledger as a CSV or NDJSON file, streamed (business admins)")
    .addOption(choiceOption("--format <format>", "the file's format", ExportFormat.options).default("csv"))
    .option("-o, --output <path>", "where to write it (default stdout)", "-")
    .action(
      run(async (ctx: CliContext, options: { format: string; output: string }) => {
        await saveExport(
          ctx,
          await ctx.client().billing.exportLedger({ format: options.format as ExportFormat }),
          options.output,
        );
      }),
    );
}

function billingCheckoutCommand(billing: Command, run: Run): void {
  billing
    .command("checkout")
    .description("Start buying a plan; prints the payment page's URL to open in a browser")
    .requiredOption("--plan <plan>", "the plan to buy")
    .option("--success-url <url>", "where the browser lands after paying")
    .option("--cancel-url <url>", "where it lands after giving up")
    .action(
      run(async (ctx: CliContext, options: { plan: string; successUrl?: string; cancelUrl?: string }) => {
        const base = ctx.target().url;
        const checkout = await ctx.client().billing.checkout({
          plan_id: options.plan,
          success_url: options.successUrl ?? `${base}/?checkout=done`,
          cancel_url: options.cancelUrl ?? `${base}/?checkout=cancelled`,
        });
        ctx.print(checkout, () => `${checkout.checkout_url}\n`);
        if (!ctx.json)
          ctx.note(ctx.colors.dim("Open it in a browser to pay; the plan changes once the payment provider confirms."));
      }),
    );
}

function billingLedgerCommand(billing: Command, run: Run): void {
  billing
    .command("ledger")
    .description("The credit balance and its entries, newest first")
    .option("--limit <n>", "entries on the page", "50")
    .option("--all", "every entry, not only the first page")
    .action(
      run(async (ctx: CliContext, options: { limit: string; all?: boolean }) => {
        const client = ctx.client();
        const first = await client.billing.ledger({ limit: Math.min(200, Number(options.limit) || 50) });
        const items = [...first.items];
        if (options.all && first.next_cursor !== null) {
          for await (const entry of client.paginate("listLedger", { limit: 200, cursor: first.next_cursor }))
            items.push(entry);
        }
        ctx.print(
          { balance: first.balance, items },
          () =>
            `balance ${first.balance}\n` +
            itemsTable(ctx.colors, items, "No entries.\n", ["WHEN", "KIND", "AMOUNT", "BALANCE", "JOB"], (entry) => [
              timeText(entry.created_at),
              entry.kind,
              String(entry.amount),
              String(entry.balance_after),
              entry.job_id ? `${entry.job_id} #${entry.attempt}` : "-",
            ]),
        );
      }),
    );
}
