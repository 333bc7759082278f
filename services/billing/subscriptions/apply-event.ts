import type { Plan } from "../../../shared/contract/index.js";
import { periodEnd, type ProviderEvent } from "../checkout/payment-provider.js";
import type { SubscriptionRecord } from "./subscription-record.js";

/** An event that names a business and changes its subscription. */
export type SubscriptionEvent = Extract<ProviderEvent, { account: unknown }>;

const iso = (ms: number) => new Date(ms).toISOString();

/**
 * The subscription record after a verified provider event, or `undefined` when the event
 * changes nothing: one already applied, one older than the event that wrote the record,
 * one about another subscription than the business's, or one naming an unknown plan.
 * Pure, so that a compare-and-set loop can call it again on a fresher record.
 */
export function applyEvent(
  record: SubscriptionRecord | null,
  event: SubscriptionEvent,
  findPlan: (planId: string) => Plan | undefined,
  now: number,
): SubscriptionRecord | undefined {
  if (record?.last_event_id === event.event_id) return undefined;
  if (record?.last_event_at && event.created_at_ms < Date.parse(record.last_event_at)) return undefined;
  // Starts from the stored record: fields a newer replica wrote stay.
  const stamp = {
    ...record,
    app_id: event.account.app_id,
    business_id: event.account.business_id,
    provider: event.provider,
    last_event_id: event.event_id,
    last_event_at: iso(event.created_at_ms),
    created_at: record?.created_at ?? iso(now),
    updated_at: iso(now),
  };
  switch (event.kind) {
    case "checkout_completed": {
      const plan = findPlan(event.plan_id);
      if (!plan) return undefined;
      // Stripe's session says no period; its subscription's own event may have brought the exact one first.
      const known =
        record &&
        record.provider_subscription_id !== null &&
        record.provider_subscription_id === event.subscription_id &&
        record.plan_id === plan.id;
      const start = event.period?.start_ms ?? (known ? Date.parse(record.current_period_start) : event.created_at_ms);
      const end =
        event.period?.end_ms ?? (known ? Date.parse(record.current_period_end) : periodEnd(start, plan.interval));
      return {
        ...stamp,
        plan_id: plan.id,
        status: "active",
        current_period_start: iso(start),
        current_period_end: iso(end),
        provider_customer_id: event.customer_id,
        provider_subscription_id: event.subscription_id,
        // A new purchase renews.
        cancel_at_period_end: known ? record.cancel_at_period_end : false,
        cancel_requested_at: known ? record.cancel_requested_at : null,
      };
    }
    case "subscription_updated": {
      const plan = findPlan(event.plan_id);
      // An event of another subscription (an old one, replaced by a newer checkout) changes nothing.
      const otherSubscription =
        record?.provider_subscription_id != null && record.provider_subscription_id !== event.subscription_id;
      if (!plan || otherSubscription || (record && record.provider !== null && record.provider !== event.provider))
        return undefined;
      const start = event.period?.start_ms ?? (record ? Date.parse(record.current_period_start) : event.created_at_ms);
      const end =
        event.period?.end_ms ?? (record ? Date.parse(record.current_period_end) : periodEnd(start, plan.interval));
      return {
        ...stamp,
        plan_id: plan.id,
        status: event.status,
        current_period_start: iso(start),
        current_period_end: iso(end),
        provider_customer_id: event.customer_id ?? record?.provider_customer_id ?? null,
        provider_subscription_id: event.subscription_id,
        cancel_at_period_end: cancelAtPeriodEnd(record, event),
        cancel_requested_at: record?.cancel_requested_at ?? null,
      };
    }
    case "subscription_canceled": {
      if (!record || record.provider_subscription_id !== event.subscription_id || record.provider !== event.provider)
        return undefined;
      return {
        ...record,
        ...stamp,
        status: "canceled",
        current_period_end: iso(Math.max(event.ended_at_ms, Date.parse(record.current_period_start))),
      };
    }
  }
}

/**
 * Whether the subscription ends at its period's end after an update: as the event says,
 * except that an event made before the business cancelled does not undo the cancellation.
 */
function cancelAtPeriodEnd(
  record: SubscriptionRecord | null,
  event: Extract<SubscriptionEvent, { kind: "subscription_updated" }>,
): boolean {
  const kept = record?.cancel_at_period_end ?? false;
  if (event.cancel_at_period_end === null) return kept;
  const beforeCancel =
    record?.cancel_requested_at != null && event.created_at_ms < Date.parse(record.cancel_requested_at);
  return beforeCancel ? kept : event.cancel_at_period_end;
}
