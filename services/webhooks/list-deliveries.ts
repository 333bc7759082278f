import type { z } from "zod";
import type { Delivery, ListDeliveriesCommand, ListDeliveriesResponse } from "../../shared/contract/index.js";
import { pageAfter } from "./page.js";
import type { DeliveryRecord } from "./records.js";
import { ownWebhook, type WebhooksContext, webhookKey } from "./webhooks-context.js";

/** A delivery as callers see it: the record without the event body it POSTs. */
export function publicDelivery(record: DeliveryRecord): Delivery {
  const { delivery_id, webhook_id, event_id, event_type, created_at, state, attempts, next_attempt_at } = record;
  return { delivery_id, webhook_id, event_id, event_type, created_at, state, attempts, next_attempt_at };
}

/** A webhook's deliveries kept (7 days), newest first; 404 for a webhook not the caller's business's. */
export function listDeliveries(ctx: WebhooksContext) {
  return async ({ caller, body }: z.infer<typeof ListDeliveriesCommand>): Promise<ListDeliveriesResponse> => {
    await ownWebhook(ctx, caller, body.webhook_id);
    const keys = await ctx.deliveries.keys(`${webhookKey(caller.app_id, caller.business_id, body.webhook_id)}.*`);
    const records = (await Promise.all(keys.map((key) => ctx.deliveries.get(key)))).flatMap((found) =>
      found ? [found.value] : [],
    );
    records.sort((a, b) => b.created_at.localeCompare(a.created_at) || b.delivery_id.localeCompare(a.delivery_id));
    const page = pageAfter(records, (record) => record.delivery_id, body.cursor, body.limit);
    return { items: page.items.map(publicDelivery), next_cursor: page.next_cursor };
  };
}
