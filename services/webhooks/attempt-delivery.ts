import type { DeliveryAttempt } from "../../shared/contract/index.js";
import type { DeliveryDue, DeliveryRecord } from "./records.js";
import { postEvent } from "./post-event.js";
import { pauseAfterSeconds } from "./retry-schedule.js";
import { signatureHeader, webhookSecret } from "./secrets.js";
import { deliveryAttempts, deliverySeconds } from "./webhook-metrics.js";
import { deliveryKey, type WebhooksContext, webhookKey } from "./webhooks-context.js";

/** What to do with the work-queue message after a try: done (ack), or back on the queue after a pause. */
export type Disposition = { done: true } | { done: false; retryInMs: number };

function isSuccess(attempt: DeliveryAttempt): boolean {
  return attempt.status_code !== null && attempt.status_code >= 200 && attempt.status_code < 300;
}

/** The record after one more try: succeeded on a 2xx; failed when the next try would fall past the retry window; else pending until then. */
export function afterAttempt(
  record: DeliveryRecord,
  attempt: DeliveryAttempt,
  schedule: readonly number[],
  windowSeconds: number,
  now: number,
): DeliveryRecord {
  const attempts = [...record.attempts, attempt];
  if (record.state === "succeeded" || isSuccess(attempt))
    return { ...record, attempts, state: "succeeded", next_attempt_at: null };
  const nextAt = now + pauseAfterSeconds(schedule, attempts.length) * 1000;
  if (nextAt > Date.parse(record.created_at) + windowSeconds * 1000)
    return { ...record, attempts, state: "failed", next_attempt_at: null };
  return { ...record, attempts, state: "pending", next_attempt_at: new Date(nextAt).toISOString() };
}

/**
 * Tries one due delivery: reads its record (one that has ended, or whose webhook was
 * deleted, is dropped), POSTs the event signed with the webhook's secret, and records the
 * try. The secret and signature are never logged.
 */
export async function attemptDelivery(ctx: WebhooksContext, due: DeliveryDue): Promise<Disposition> {
  const key = deliveryKey(due.app_id, due.business_id, due.webhook_id, due.delivery_id);
  const found = await ctx.deliveries.get(key);
  if (!found || found.value.state !== "pending") return { done: true };
  const webhook = (await ctx.webhooks.get(webhookKey(due.app_id, due.business_id, due.webhook_id)))?.value;
  if (!webhook) return { done: true };
  const now = () => ctx.clock.now();
  // Early (a message redelivered after a crash): back until the time the record names.
  const waitMs = found.value.next_attempt_at === null ? 0 : Date.parse(found.value.next_attempt_at) - now();
  if (waitMs > 1000) return { done: false, retryInMs: waitMs };

  const body = JSON.stringify(found.value.event);
  const secret = webhookSecret(ctx.key, webhook.webhook_id, webhook.secret_salt);
  const attempt = await postEvent(
    {
      url: webhook.url,
      body,
      headers: {
        "cjs-signature": signatureHeader(secret, Math.floor(now() / 1000), body),
        "cjs-event-id": found.value.event_id,
        "cjs-event-type": found.value.event_type,
        "cjs-delivery-id": found.value.delivery_id,
      },
      timeoutMs: ctx.config.CJS_WEBHOOK_TIMEOUT_MS,
      allowPrivate: ctx.config.CJS_WEBHOOKS_ALLOW_PRIVATE_URLS,
    },
    now,
  );
  deliverySeconds.observe(attempt.duration_ms / 1000);
  const schedule = ctx.config.CJS_WEBHOOK_RETRY_SCHEDULE_SECONDS;
  const stored = await ctx.deliveries.mutate(key, (current) =>
    afterAttempt(current, attempt, schedule, ctx.config.CJS_WEBHOOK_RETRY_WINDOW_SECONDS, now()),
  );
  const record = stored?.value;
  if (!record || record.state !== "pending" || record.next_attempt_at === null) {
    deliveryAttempts.inc({ outcome: record?.state === "succeeded" ? "succeeded" : "failed" });
    if (record?.state === "failed")
      ctx.logger.warn(
        { webhook_id: due.webhook_id, delivery_id: due.delivery_id, attempts: record.attempts.length },
        "webhook delivery failed for good",
      );
    return { done: true };
  }
  deliveryAttempts.inc({ outcome: "retried" });
  return { done: false, retryInMs: Math.max(0, Date.parse(record.next_attempt_at) - now()) };
}
