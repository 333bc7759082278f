import { createHash } from "node:crypto";
import type { WebhookEvent } from "../../shared/contract/index.js";
import { encodeJson, subjects } from "../../shared/nats/index.js";
import type { DeliveryDue, DeliveryRecord, WebhookRecord } from "./records.js";
import { deliveryKey, type WebhooksContext } from "./webhooks-context.js";
import { deliveriesQueued } from "./webhook-metrics.js";

/** The same for the same webhook and event, so an event read again is delivered under the same id. */
export function deliveryIdOf(webhookId: string, eventId: string): string {
  return `dlv_${createHash("sha256").update(`${webhookId}.${eventId}`).digest("hex").slice(0, 32)}`;
}

/**
 * Queues one event for one webhook: its delivery record (created once: the record is the
 * de-duplication of an event read twice) and a message on the work queue. A delivery
 * already recorded and never tried is queued again, in case the first reader died between
 * the record and the message; one already tried is on its way.
 */
export async function enqueueDelivery(
  ctx: WebhooksContext,
  webhook: WebhookRecord,
  event: WebhookEvent,
): Promise<string> {
  const deliveryId = deliveryIdOf(webhook.webhook_id, event.id);
  const fresh: DeliveryRecord = {
    delivery_id: deliveryId,
    webhook_id: webhook.webhook_id,
    event_id: event.id,
    event_type: event.type,
    created_at: event.created_at,
    state: "pending",
    attempts: [],
    next_attempt_at: new Date(ctx.clock.now()).toISOString(),
    event,
  };
  const stored = await ctx.deliveries.upsert(
    deliveryKey(webhook.app_id, webhook.business_id, webhook.webhook_id, deliveryId),
    (current) => current ?? fresh,
  );
  if (stored && !stored.written && (stored.value.attempts.length > 0 || stored.value.state !== "pending"))
    return deliveryId;
  await queueDelivery(ctx, webhook, deliveryId, deliveryId);
  return deliveryId;
}

/**
 * Puts a delivery on the work queue. `messageId` de-duplicates the message within the
 * stream's window: the delivery id for its first queueing, so an event read twice is
 * queued once; another per send again, so each is queued.
 */
export async function queueDelivery(
  ctx: WebhooksContext,
  webhook: WebhookRecord,
  deliveryId: string,
  messageId: string,
): Promise<void> {
  const due: DeliveryDue = {
    app_id: webhook.app_id,
    business_id: webhook.business_id,
    webhook_id: webhook.webhook_id,
    delivery_id: deliveryId,
  };
  await ctx.js.publish(subjects.webhookDelivery(webhook.webhook_id), encodeJson(due), { msgID: messageId });
  deliveriesQueued.inc();
}
