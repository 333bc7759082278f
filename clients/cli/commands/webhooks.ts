import type { Command } from "commander";
import type { RpcRequest } from "../../sdk/src/index.js";
import type { CliContext } from "../context.js";
import { UsageError } from "../exit-codes.js";
import { stateText, table, timeText } from "../output.js";
import type { Run } from "../run.js";
import { idOf } from "../choices.js";

function limitOf(text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d+$/.test(text)) throw new UsageError(`--limit takes a whole number, not "${text}".`);
  return Number(text);
}

export function registerWebhookCommands(program: Command, run: Run): void {
  const webhooks = program
    .command("webhooks")
    .description("Your business's webhooks: create (the secret is shown once), list, remove, test, deliveries, resend");

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

  webhooks
    .command("ls")
    .alias("list")
    .description("Your business's webhooks, without their secrets")
    .option("--limit <n>", "webhooks per page (1 to 100)")
    .option("--cursor <webhook>", "the next page after this webhook id")
    .action(
      run(async (ctx: CliContext, options: { limit?: string; cursor?: string }) => {
        const limit = limitOf(options.limit);
        const page = await ctx.client().webhooks.list({
          ...(limit !== undefined ? { limit } : {}),
          ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
        });
        ctx.print(page, () =>
          page.items.length === 0
            ? "No webhooks.\n"
            : table(
                ["WEBHOOK", "URL", "EVENTS", "CREATED", "DESCRIPTION"],
                page.items.map((webhook) => [
                  webhook.webhook_id,
                  webhook.url,
                  webhook.events.join(","),
                  timeText(webhook.created_at),
                  webhook.description ?? "-",
                ]),
                ctx.colors,
              ) + (page.next_cursor ? ctx.colors.dim(`More: --cursor ${page.next_cursor}\n`) : ""),
        );
      }),
    );

  webhooks
    .command("rm")
    .alias("delete")
    .description("Delete a webhook; deliveries not yet made are dropped")
    .argument("<webhook>", "the webhook id (whk_…)", idOf("webhook"))
    .action(
      run(async (ctx: CliContext, webhookId: string) => {
        const deleted = await ctx.client().webhooks.delete(webhookId);
        ctx.print(deleted, () => `${deleted.webhook_id} deleted\n`);
      }),
    );

  webhooks
    .command("test")
    .description("Send a webhook.test event to the webhook through the normal delivery path")
    .argument("<webhook>", "the webhook id (whk_…)", idOf("webhook"))
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

  webhooks
    .command("resend")
    .description("Send a delivery that has ended (succeeded or failed) again now")
    .argument("<webhook>", "the webhook id (whk_…)")
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

  webhooks
    .command("deliveries")
    .description("The webhook's deliveries of the last 7 days, newest first, with each try's status")
    .argument("<webhook>", "the webhook id (whk_…)", idOf("webhook"))
    .option("--limit <n>", "deliveries per page (1 to 100)")
    .option("--cursor <delivery>", "the next page after this delivery id")
    .action(
      run(async (ctx: CliContext, webhookId: string, options: { limit?: string; cursor?: string }) => {
        const limit = limitOf(options.limit);
        const page = await ctx.client().webhooks.deliveries({
          webhook_id: webhookId,
          ...(limit !== undefined ? { limit } : {}),
          ...(options.cursor !== undefined ? { cursor: options.cursor } : {}),
        });
        ctx.print(page, () =>
          page.items.length === 0
            ? "No deliveries.\n"
            : table(
                ["DELIVERY", "EVENT", "STATE", "CREATED", "TRIES", "NEXT TRY"],
                page.items.map((delivery) => [
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
                ]),
                ctx.colors,
              ) + (page.next_cursor ? ctx.colors.dim(`More: --cursor ${page.next_cursor}\n`) : ""),
        );
      }),
    );
}
