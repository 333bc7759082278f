import { randomBytes } from "node:crypto";
import type { z } from "zod";
import type { TestWebhookResponse, WebhookEvent, WebhookRefCommand } from "../../shared/contract/index.js";
import { enqueueDelivery } from "./enqueue-delivery.js";
import { ownWebhook, type WebhooksContext } from "./webhooks-context.js";

/** Queues a `webhook.test` event for the webhook through the normal delivery path (signed, retried, logged). */
export function testWebhook(ctx: WebhooksContext) {
  return async ({ caller, body }: z.infer<typeof WebhookRefCommand>): Promise<TestWebhookResponse> => {
    const webhook = await ownWebhook(ctx, caller, body.webhook_id);
    const event: WebhookEvent = {
      id: `evt_${randomBytes(16).toString("hex")}`,
      type: "webhook.test",
      created_at: new Date(ctx.clock.now()).toISOString(),
      data: { job: null },
    };
    const deliveryId = await enqueueDelivery(ctx, webhook, event);
    return { delivery_id: deliveryId, event_id: event.id };
  };
}
