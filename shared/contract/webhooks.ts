import { z } from "zod";
import { Timestamp } from "./common.js";
import { WebhookId } from "./ids.js";
import { JobSummary } from "./jobs.js";

/** The job events a webhook may subscribe to; `job.*` is every one of them. */
export const WEBHOOK_JOB_EVENTS = [
  "job.started",
  "job.succeeded",
  "job.failed",
  "job.timed_out",
  "job.cancelled",
] as const;
export const WebhookEventType = z.enum([...WEBHOOK_JOB_EVENTS, "webhook.test"]);
export type WebhookEventType = z.infer<typeof WebhookEventType>;
/** What a webhook subscribes to: one of the job events, or `job.*` for all. */
export const WebhookEventFilter = z.enum([...WEBHOOK_JOB_EVENTS, "job.*"]);
export type WebhookEventFilter = z.infer<typeof WebhookEventFilter>;

/** Most webhooks one business may have. */
export const MAX_WEBHOOKS_PER_BUSINESS = 20;

/** Whether a webhook subscribed to `filters` receives events of this type (`webhook.test` goes to the webhook tested only). */
export function webhookWants(filters: readonly WebhookEventFilter[], type: WebhookEventType): boolean {
  if (type === "webhook.test") return false;
  return filters.includes("job.*") || filters.includes(type);
}

export const CreateWebhookRequest = z.strictObject({
  /** Where events are POSTed: an http(s) URL whose host is not loopback, link-local or private (unless the operator allows it). */
  url: z.url({ protocol: /^https?$/, error: "must be an http:// or https:// URL" }).max(2048),
  /** The events to deliver, each at most once. */
  events: z
    .array(WebhookEventFilter)
    .min(1)
    .max(WebhookEventFilter.options.length)
    .refine((events) => new Set(events).size === events.length, "each event at most once")
    // The same rule in the JSON Schema (a refinement has none).
    .meta({ uniqueItems: true }),
  description: z.string().max(200).optional(),
});
export type CreateWebhookRequest = z.infer<typeof CreateWebhookRequest>;

/** A webhook as listed: never its secret. */
export const Webhook = z.object({
  webhook_id: WebhookId,
  url: z.string(),
  events: z.array(WebhookEventFilter),
  description: z.string().nullable(),
  created_at: Timestamp,
});
export type Webhook = z.infer<typeof Webhook>;

/** The webhook just created, with its signing secret (`whsec_…`): shown this once, never again. */
export const CreateWebhookResponse = z.object({ webhook: Webhook, secret: z.string() });
export type CreateWebhookResponse = z.infer<typeof CreateWebhookResponse>;

export const ListWebhooksRequest = z.strictObject({
  limit: z.number().int().min(1).max(100).default(20),
  /** `next_cursor` of the previous page: a webhook id. */
  cursor: WebhookId.optional(),
});
export type ListWebhooksRequest = z.infer<typeof ListWebhooksRequest>;

/** The business's webhooks, oldest first. */
export const ListWebhooksResponse = z.object({ items: z.array(Webhook), next_cursor: z.string().nullable() });
export type ListWebhooksResponse = z.infer<typeof ListWebhooksResponse>;

export const WebhookRef = z.strictObject({ webhook_id: WebhookId });
export type WebhookRef = z.infer<typeof WebhookRef>;

export const DeleteWebhookResponse = z.object({ webhook_id: WebhookId, deleted: z.literal(true) });
export type DeleteWebhookResponse = z.infer<typeof DeleteWebhookResponse>;

/** A delivery id: `dlv_` and 32 hex digits, the same for the same webhook and event. */
export const DeliveryId = z.string().regex(/^dlv_[0-9a-f]{32}$/, "a delivery id such as `dlv_…`");

export const TestWebhookResponse = z.object({ delivery_id: DeliveryId, event_id: z.string() });
export type TestWebhookResponse = z.infer<typeof TestWebhookResponse>;

/** One POST of a delivery: the receiver's status code, or the error when there was no answer. */
export const DeliveryAttempt = z.object({
  at: Timestamp,
  status_code: z.number().int().nullable(),
  error: z.string().nullable(),
  duration_ms: z.number().int().min(0),
});
export type DeliveryAttempt = z.infer<typeof DeliveryAttempt>;

/** `pending`: not yet answered 2xx and still within its retry window; `succeeded`: answered 2xx; `failed`: no 2xx in the window. */
export const DeliveryState = z.enum(["pending", "succeeded", "failed"]);
export type DeliveryState = z.infer<typeof DeliveryState>;

export const Delivery = z.object({
  delivery_id: DeliveryId,
  webhook_id: WebhookId,
  /** The event's id (`CJS-Event-Id`): the same on every delivery of the event, for de-duplication. */
  event_id: z.string(),
  event_type: WebhookEventType,
  created_at: Timestamp,
  state: DeliveryState,
  attempts: z.array(DeliveryAttempt),
  /** When the next POST is due; null once the delivery has ended. */
  next_attempt_at: Timestamp.nullable(),
});
export type Delivery = z.infer<typeof Delivery>;

export const ListDeliveriesRequest = z.strictObject({
  webhook_id: WebhookId,
  limit: z.number().int().min(1).max(100).default(20),
  /** `next_cursor` of the previous page: a delivery id. */
  cursor: DeliveryId.optional(),
});
export type ListDeliveriesRequest = z.infer<typeof ListDeliveriesRequest>;

/** The webhook's deliveries of the last 7 days, newest first. */
export const ListDeliveriesResponse = z.object({ items: z.array(Delivery), next_cursor: z.string().nullable() });
export type ListDeliveriesResponse = z.infer<typeof ListDeliveriesResponse>;

/** A delivery of the caller's webhook that has ended (`succeeded` or `failed`), to send again now. */
export const RetryDeliveryRequest = z.strictObject({ webhook_id: WebhookId, delivery_id: DeliveryId });
export type RetryDeliveryRequest = z.infer<typeof RetryDeliveryRequest>;

/** The delivery, `pending` again, with its next try due now. */
export const DeliveryPayload = z.object({ delivery: Delivery });
export type DeliveryPayload = z.infer<typeof DeliveryPayload>;

/** The JSON body POSTed to a webhook. */
export const WebhookEvent = z.object({
  /** `evt_…`: the same for every delivery of one event. */
  id: z.string(),
  type: WebhookEventType,
  created_at: Timestamp,
  data: z.object({ job: JobSummary.nullable() }),
});
export type WebhookEvent = z.infer<typeof WebhookEvent>;
