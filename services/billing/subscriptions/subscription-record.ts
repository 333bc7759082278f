import { z } from "zod";

/**
 * A business's subscription as stored in the `cjs_subscriptions` bucket under
 * `subscriptionKey(app, business)`. Absent means the default plan, with calendar-month
 * periods. It changes through a verified payment-provider webhook, an admin's cancel
 * (once the provider took it), or an operator.
 */
export const SubscriptionRecord = z.looseObject({
  app_id: z.string(),
  business_id: z.string(),
  plan_id: z.string(),
  status: z.enum(["active", "past_due", "canceled"]),
  current_period_start: z.string(),
  current_period_end: z.string(),
  /** The provider's ids, when the plan was bought through one. */
  provider: z.string().nullable(),
  provider_customer_id: z.string().nullable(),
  provider_subscription_id: z.string().nullable(),
  /** The provider event that wrote the record last, and when the provider made it: an older event never overwrites a newer one. */
  last_event_id: z.string().nullable().default(null),
  last_event_at: z.string().nullable().default(null),
  /** Set when the business cancelled: the subscription ends at `current_period_end` and is not renewed. */
  cancel_at_period_end: z.boolean().default(false),
  /** When the cancellation was asked for: a provider event made before it does not undo it. */
  cancel_requested_at: z.string().nullable().default(null),
  created_at: z.string(),
  updated_at: z.string(),
});
export type SubscriptionRecord = z.infer<typeof SubscriptionRecord>;

export function subscriptionKey(appId: string, businessId: string): string {
  return `${appId}.${businessId}`;
}

/** The calendar month (UTC) holding `now`: the period of a business on the default plan. */
export function calendarMonth(now: number): { start: string; end: string } {
  const at = new Date(now);
  const start = Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), 1);
  const end = Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1);
  return { start: new Date(start).toISOString(), end: new Date(end).toISOString() };
}

/** A business's plan and period as they apply now: its record's, or the default plan's this calendar month. */
export interface EffectiveSubscription {
  plan_id: string;
  status: SubscriptionRecord["status"];
  current_period_start: string;
  current_period_end: string;
  /** True when the subscription ends at `current_period_end` (cancelled at period end). */
  cancel_at_period_end: boolean;
  /** False when no record is in force: the business never subscribed, or its canceled subscription has ended. */
  stored: boolean;
}

/** Whether the record's subscription is over: canceled, or cancelled at period end, and its period has passed. */
function subscriptionEnded(record: SubscriptionRecord, now: number): boolean {
  return (record.status === "canceled" || record.cancel_at_period_end) && Date.parse(record.current_period_end) <= now;
}

/**
 * A subscription that has ended counts as no subscription: the business is back on the
 * default plan, in calendar months. One cancelled at period end ends at that moment by
 * this rule, whether or not the provider's event saying so has arrived.
 */
export function effectiveSubscription(
  record: SubscriptionRecord | null,
  defaultPlanId: string,
  now: number,
): EffectiveSubscription {
  if (record && !subscriptionEnded(record, now)) {
    const { plan_id, status, current_period_start, current_period_end, cancel_at_period_end } = record;
    return { plan_id, status, current_period_start, current_period_end, cancel_at_period_end, stored: true };
  }
  const month = calendarMonth(now);
  return {
    plan_id: defaultPlanId,
    status: "active",
    current_period_start: month.start,
    current_period_end: month.end,
    cancel_at_period_end: false,
    stored: false,
  };
}
