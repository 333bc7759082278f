import type { z } from "zod";
import type { DeleteWebhookResponse, WebhookRefCommand } from "../../shared/contract/index.js";
import { ownWebhook, type WebhooksContext, webhookKey } from "./webhooks-context.js";

/**
 * Deletes a webhook. Its key is erased, not marked, so the business's listing and count
 * see it gone at once; deliveries still queued find no webhook and are dropped.
 */
export function deleteWebhook(ctx: WebhooksContext) {
  return async ({ caller, body }: z.infer<typeof WebhookRefCommand>): Promise<DeleteWebhookResponse> => {
    await ownWebhook(ctx, caller, body.webhook_id);
    await ctx.webhooks.erase(webhookKey(caller.app_id, caller.business_id, body.webhook_id));
    await ctx.refreshEventFilter();
    return { webhook_id: body.webhook_id, deleted: true };
  };
}
