import { z } from "zod";
import {
  DeliveryAttempt,
  DeliveryState,
  type Webhook,
  WebhookEvent,
  WebhookEventFilter,
  WebhookEventType,
} from "../../shared/contract/index.js";

/** A webhook as stored: no secret, only the salt it is derived from (secrets.ts). Unknown keys pass through (rolling upgrades). */
export const WebhookRecord = z.looseObject({
  webhook_id: z.string(),
  app_id: z.string(),
  business_id: z.string(),
  url: z.string(),
  events: z.array(WebhookEventFilter),
  description: z.string().nullable(),
  created_at: z.string(),
  created_by: z.string(),
  secret_salt: z.string(),
});
export type WebhookRecord = z.infer<typeof WebhookRecord>;

export function publicWebhook(record: WebhookRecord): Webhook {
  return {
    webhook_id: record.webhook_id,
    url: record.url,
    events: record.events,
    description: record.description,
    created_at: record.created_at,
  };
}

/** One delivery of one event to one webhook: what is POSTed, and every try so far. */
export const DeliveryRecord = z.looseObject({
  delivery_id: z.string(),
  webhook_id: z.string(),
  event_id: z.string(),
  event_type: WebhookEventType,
  created_at: z.string(),
  state: DeliveryState,
  attempts: z.array(DeliveryAttempt),
  next_attempt_at: z.string().nullable(),
  /** The event body, as POSTed on every try. */
  event: WebhookEvent,
});
export type DeliveryRecord = z.infer<typeof DeliveryRecord>;

/** The work-queue message of a due delivery: where its record is. */
export const DeliveryDue = z.object({
  app_id: z.string(),
  business_id: z.string(),
  webhook_id: z.string(),
  delivery_id: z.string(),
});
export type DeliveryDue = z.infer<typeof DeliveryDue>;
