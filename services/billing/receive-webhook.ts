import type { z } from "zod";
import type { ServedRequest } from "../../shared/nats/index.js";
import type { WebhookCommand, WebhookReply } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import type { BillingContext } from "./billing-context.js";
import { webhookEventKey } from "./checkout/webhook-event-record.js";
import { applyEvent } from "./subscriptions/apply-event.js";
import { subscriptionKey } from "./subscriptions/subscription-record.js";

/**
 * A payment provider's webhook: verified first (a bad signature changes nothing), then
 * applied at most once. The event's KV create marks it received; a delivery of an event
 * already applied answers `duplicate` and changes nothing. An event whose earlier
 * delivery died half-way is applied again, which is safe: the subscription record keeps
 * the id and time of the event that wrote it, so the same or an older event is a no-op.
 */
export function receiveWebhook(ctx: BillingContext) {
  return async (
    { provider: providerName, body_base64, headers }: z.infer<typeof WebhookCommand>,
    { log }: ServedRequest,
  ): Promise<WebhookReply> => {
    const provider = ctx.provider;
    if (providerName !== provider.name)
      throw new AppError("resource.not_found", `No payment provider "${providerName}" is enabled.`);
    const event = await provider.verifyWebhook(Buffer.from(body_base64, "base64"), headers);
    const now = () => new Date(ctx.clock.now()).toISOString();
    const key = webhookEventKey(provider.name, event.event_id);

    let duplicate = false;
    try {
      await ctx.store.webhookEvents.create(key, {
        provider: provider.name,
        event_id: event.event_id,
        type: event.type,
        status: "received",
        received_at: now(),
        updated_at: now(),
      });
    } catch (error) {
      if (!(error instanceof AppError && error.code === "resource.already_exists")) throw error;
      duplicate = true;
      const earlier = await ctx.store.webhookEvents.get(key);
      if (earlier && earlier.value.status !== "received")
        return { event_id: event.event_id, duplicate, outcome: earlier.value.status };
    }

    let outcome: WebhookReply["outcome"] = "ignored";
    if (event.kind !== "ignored") {
      const recordKey = subscriptionKey(event.account.app_id, event.account.business_id);
      const existing = await ctx.store.subscriptions.get(recordKey);
      if (existing) {
        await ctx.store.subscriptions.mutate(recordKey, (record) => {
          const next = applyEvent(record, event, ctx.catalog.find, ctx.clock.now());
          outcome = next || record.last_event_id === event.event_id ? "applied" : "ignored";
          return next;
        });
      } else {
        const next = applyEvent(null, event, ctx.catalog.find, ctx.clock.now());
        if (next) {
          try {
            await ctx.store.subscriptions.create(recordKey, next);
            outcome = "applied";
          } catch (error) {
            if (!(error instanceof AppError && error.code === "resource.already_exists")) throw error;
            // Another delivery made the record first: apply on top of it.
            await ctx.store.subscriptions.mutate(recordKey, (record) => {
              const again = applyEvent(record, event, ctx.catalog.find, ctx.clock.now());
              outcome = again || record.last_event_id === event.event_id ? "applied" : "ignored";
              return again;
            });
          }
        }
      }
      if (event.kind === "checkout_completed" && event.session_ref && ctx.sandbox)
        await ctx.sandbox.completeSession(event.session_ref);
    }
    await ctx.store.webhookEvents.mutate(key, (record) =>
      record.status === "received" ? { ...record, status: outcome, updated_at: now() } : undefined,
    );
    log.info(
      { provider: provider.name, event_id: event.event_id, type: event.type, outcome, duplicate },
      "payment provider event received",
    );
    return { event_id: event.event_id, duplicate, outcome };
  };
}
