import type { Command } from "commander";
import type { RpcRequest } from "../../sdk/src/index.js";
import type { CliContext } from "../context.js";
import { wholeNumberOf } from "../flag-values.js";
import { itemsTable, stateText, timeText } from "../output.js";
import type { Run } from "../run.js";
import { deleteCommand } from "./delete-command.js";
import { idOf } from "../choices.js";

const WEBHOOK_ID = "the webhook id (whk_…)";

/** `--limit` and `--cursor` of a listing, as its request's fields. */
function pageOf(options: { limit?: string; cursor?: string }): { limit?: number; cursor?: string } {
  const limit = wholeNumberOf("--limit", options.limit);
  return {
    ...(limit !== undefined ? { limit } : {}),
    ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
  };
}

export function registerWebhookCommands(program: Command, run: Run): void {
  const webhooks = program
    .command("webhooks")
    .description("Your business's webhooks: create (the secret is shown once), list, remove, test, deliveries, resend");
  webhookCreateCommand(webhooks, run);
  webhookListCommand(webhooks, run);
  deleteCommand(
    webhooks,
    run,
    "webhook",
    "Delete a webhook; deliveries not yet made are dropped",
    (client, id) => client.webhooks.delete(id),
    WEBHOOK_ID,
  );
  webhookTestCommand(webhooks, run);
  webhookResendCommand(webhooks, run);
  webhookDeliveriesCommand(webhooks, run);
}

function webhookCreateCommand(webhooks: Command, run: Run): void {
  webhooks
    .command("create")
    .description("Subscribe a URL to job events; prints the signing secret once")
    .argument("<url>", "where events are POSTed (http or https)")
    .option(
      "--events <events>",
      "comma-separated: job.started, job.succeeded, job.failed, job.timed_out, job.cancelled, or job.*",
      "job.*",
    )
    .option("--description <text>", "a note for yourself")
    .action(
      run(async (ctx: CliContext, url: string, options: { events: string; description?: string }) => {
        const request = {
          url,
          events: options.events
            .split(",")
            .map((event) => event.trim())
            .filter((event) => event !== ""),
          ...(options.description !== undefined ? { description: options.description } : {}),
        } as RpcRequest<"createWebhook">;
        const created = await ctx.client().webhooks.create(request);
        ctx.print(created, () => `${created.secret}\n`);
        if (!ctx.json)
          ctx.note(
            ctx.colors.dim(
              `Webhook ${created.webhook.webhook_id} → ${created.webhook.url}. Store the secret now: it is not shown again.`,
            ),
          );
      }),
    );
}

function webhookListCommand(webhooks: Command, run: Run): void {
  webhooks
    .command("ls")
    .alias("list")
    .description("Your business's webhooks, without their secrets")
    .option("--limit <n>", "webhooks per page (1 to 100)")
    .option("--cursor <webhook>", "the next page after this webhook id")
    .action(
      run(async (ctx: CliContext, options: { limit?: string; cursor?: string }) => {
        const page = await ctx.client().webhooks.list(pageOf(options));
        ctx.print(page, () =>
          itemsTable(
            ctx.colors,
            page.items,
            "No webhooks.\n",
            ["WEBHOOK", "URL", "EVENTS", "CREATED", "DESCRIPTION"],
            (webhook) => [
              webhook.webhook_id,
              webhook.url,
              webhook.events.join(","),
              timeText(webhook.created_at),
              webhook.description ?? "-",
            ],
            page.next_cursor,
          ),
        );
      }),
    );
}

function webhookTestCommand(webhooks: Command, run: Run): void {
  webhooks
    .command("test")
    .description("Send a webhook.test event to the webhook through the normal delivery path")
    .argument("<webhook>", WEBHOOK_ID, idOf("webhook"))
    .action(
      run(async (ctx: CliContext, webhookId: string) => {
        const queued = await ctx.client().webhooks.test(webhookId);
        ctx.print(
          queued,
          () =>
            `${queued.delivery_id} queued (event ${queued.event_id}); see \`cjs webhooks deliveries ${webhookId}\`\n`,
        );
      }),
    );
}

function webhookResendCommand(webhooks: Command, run: Run): void {
  webhooks
    .command("resend")
    .description("Send a delivery that has ended (succeeded or failed) again now")
    .argument("<webhook>", WEBHOOK_ID)
    .argument("<delivery>", "the delivery id (dlv_…)")
    .action(
      run(async (ctx: CliContext, webhookId: string, deliveryId: string) => {
        const { delivery } = await ctx.client().webhooks.retryDelivery(webhookId, deliveryId);
        ctx.print(
          { delivery },
          () => `${delivery.delivery_id} queued again; see \`cjs webhooks deliveries ${webhookId}\`\n`,
        );
      }),
    );
}

function webhookDeliveriesCommand(webhooks: Command, run: Run): void {
  webhooks
    .command("deliveries")
    .description("The webhook's deliveries of the last 7 days, newest first, with each try's status")
    .argument("<webhook>", WEBHOOK_ID, idOf("webhook"))
    .option("--limit <n>", "deliveries per page (1 to 100)")
    .option("--cursor <delivery>", "the next page after this delivery id")
    .action(
      run(async (ctx: CliContext, webhookId: string, options: { limit?: string; cursor?: string }) => {
        const page = await ctx.client().webhooks.deliveries({ webhook_id: webhookId, ...pageOf(options) });
        ctx.print(page, () =>
          itemsTable(
            ctx.colors,
            page.items,
            "No deliveries.\n",
            ["DELIVERY", "EVENT", "STATE", "CREATED", "TRIES", "NEXT TRY"],
            (delivery) => [
              delivery.delivery_id,
              delivery.event_type,
              stateText(ctx.colors, delivery.state),
              timeText(delivery.created_at),
              delivery.attempts
                .map((attempt) =>
                  attempt.status_code === null ? (attempt.error ?? "error") : String(attempt.status_code),
                )
                .join(",") || "-",
              timeText(delivery.next_attempt_at),
            ],
            page.next_cursor,
          ),
        );
      }),
    );
}
