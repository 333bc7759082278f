import type { z } from "zod";
import type { BillingCallerCommand, SubscriptionResponse } from "../../../shared/contract/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { ServedRequest } from "../../../shared/nats/index.js";
import type { BillingContext } from "../billing-context.js";
import { subscriptionView } from "../get-subscription.js";
import { effectiveSubscription, subscriptionKey, type SubscriptionRecord } from "./subscription-record.js";

/** Why the subscription cannot be cancelled now (`details.state`), or null when it can. */
function refusalState(ctx: BillingContext, record: SubscriptionRecord | null, now: number): string | null {
  const current = effectiveSubscription(record, ctx.catalog.defaultPlan.id, now);
  if (!current.stored || current.plan_id === ctx.catalog.defaultPlan.id) return "default_plan";
  if (current.status === "canceled") return "canceled";
  if (current.cancel_at_period_end) return "canceling";
  return null;
}

/**
 * `billing subscription cancel`: the subscription is not renewed and ends at the end of the
 * current period, after which the business is on the default plan. Only an admin of the
 * business may. The provider is told first; the record is marked once it took it.
 */
export function cancelSubscription(ctx: BillingContext) {
  return async (
    { caller }: z.infer<typeof BillingCallerCommand>,
    { log }: ServedRequest,
  ): Promise<SubscriptionResponse> => {
    if (caller.role !== "admin")
      throw new AppError("permission.denied", "Only an admin of the business can cancel its subscription.");
    const key = subscriptionKey(caller.app_id, caller.business_id);
    const record = (await ctx.store.subscriptions.get(key))?.value ?? null;
    const refused = refusalState(ctx, record, ctx.clock.now());
    if (refused !== null || !record) {
      throw new AppError("state.conflict", `There is no renewing subscription to cancel (${refused}).`, {
        details: { state: refused },
      });
    }
    const subscriptionId = record.provider_subscription_id;
    if (record.provider !== ctx.provider.name || subscriptionId === null) {
      throw new AppError(
        "state.conflict",
        "This subscription was not bought through the payment provider now in use; cancel it with the operator.",
        {
          details: { state: record.status, provider: record.provider },
        },
      );
    }
    await ctx.provider.cancelAtPeriodEnd({
      account: { app_id: caller.app_id, business_id: caller.business_id },
      subscription_id: subscriptionId,
    });
    const now = new Date(ctx.clock.now()).toISOString();
    // The same subscription only: one bought meanwhile is not the one the provider was told about.
    await ctx.store.subscriptions.mutate(key, (current) =>
      current.provider_subscription_id === subscriptionId && !current.cancel_at_period_end
        ? { ...current, cancel_at_period_end: true, cancel_requested_at: now, updated_at: now }
        : undefined,
    );
    log.info(
      { business_id: caller.business_id, subscription_id: subscriptionId, provider: ctx.provider.name },
      "subscription set to end at period end",
    );
    return subscriptionView(ctx, caller);
  };
}
