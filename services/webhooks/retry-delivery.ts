import type { z } from "zod";
import type { DeliveryPayload, RetryDeliveryCommand } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import { queueDelivery } from "./enqueue-delivery.js";
import { publicDelivery } from "./list-deliveries.js";
import { deliveryKey, ownWebhook, type WebhooksContext } from "./webhooks-context.js";

/**
 * Sends a delivery that has ended again now: its record goes back to `pending`, due at
 * once, and onto the work queue under a message id of its own (the delivery's tries so
 * far), so the queue's de-duplication keeps the first queueing from hiding it. The try is
 * signed afresh; a failure within the event's retry window is tried again on the usual
 * schedule, one past it ends the delivery `failed` again. A delivery still `pending` is on
 * its way already: 409.
 */
export function retryDelivery(ctx: WebhooksContext) {
  return async ({ caller, body }: z.infer<typeof RetryDeliveryCommand>): Promise<DeliveryPayload> => {
    const webhook = await ownWebhook(ctx, caller, body.webhook_id);
    const key = deliveryKey(caller.app_id, caller.business_id, body.webhook_id, body.delivery_id);
    const stored = await ctx.deliveries.mutate(key, (current) => {
      if (current.state === "pending")
        throw new AppError("state.conflict", "The delivery is still being tried; it can be sent again once it ends.", {
          details: { delivery_id: body.delivery_id, state: current.state },
        });
      return { ...current, state: "pending", next_attempt_at: new Date(ctx.clock.now()).toISOString() };
    });
    if (!stored)
      throw new AppError("resource.not_found", `No delivery ${body.delivery_id}.`, {
        details: { delivery_id: body.delivery_id },
      });
    await queueDelivery(ctx, webhook, body.delivery_id, `${body.delivery_id}.${stored.value.attempts.length}`);
    return { delivery: publicDelivery(stored.value) };
  };
}
