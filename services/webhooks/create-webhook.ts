import type { z } from "zod";
import {
  type CreateWebhookCommand,
  type CreateWebhookResponse,
  MAX_WEBHOOKS_PER_BUSINESS,
} from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { newId } from "../../shared/runtime/index.js";
import { publicWebhook, type WebhookRecord } from "./records.js";
import { newSecretSalt, webhookSecret } from "./secrets.js";
import { checkWebhookUrl } from "./url-policy.js";
import { businessWebhooks, type WebhooksContext, webhookKey } from "./webhooks-context.js";

/**
 * Creates a webhook of the caller's business and answers its secret, derived from the
 * service key and a salt kept in the record, so the secret itself is stored nowhere. The
 * job-event consumer then takes in the business's jobs.
 */
export function createWebhook(ctx: WebhooksContext) {
  return async ({ caller, body }: z.infer<typeof CreateWebhookCommand>): Promise<CreateWebhookResponse> => {
    await checkWebhookUrl(body.url, ctx.config.CJS_WEBHOOKS_ALLOW_PRIVATE_URLS);
    // Counted before the create: two creates at once may both pass at the cap, a bounded overshoot.
    const existing = await businessWebhooks(ctx, caller.app_id, caller.business_id);
    if (existing.length >= MAX_WEBHOOKS_PER_BUSINESS) {
      throw new AppError(
        "webhook.limit_reached",
        `A business may have at most ${MAX_WEBHOOKS_PER_BUSINESS} webhooks; delete one first.`,
        {
          details: { limit: MAX_WEBHOOKS_PER_BUSINESS },
        },
      );
    }
    const record: WebhookRecord = {
      webhook_id: newId("whk"),
      app_id: caller.app_id,
      business_id: caller.business_id,
      url: body.url,
      events: body.events,
      description: body.description ?? null,
      created_at: new Date(ctx.clock.now()).toISOString(),
      created_by: caller.user_id,
      secret_salt: newSecretSalt(),
    };
    await ctx.webhooks.create(webhookKey(caller.app_id, caller.business_id, record.webhook_id), record);
    await ctx.refreshEventFilter();
    return { webhook: publicWebhook(record), secret: webhookSecret(ctx.key, record.webhook_id, record.secret_salt) };
  };
}
