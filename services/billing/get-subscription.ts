import type { z } from "zod";
import { publicPlan, type BillingCallerCommand, type SubscriptionResponse } from "../../shared/contract/index.js";
import type { BillingContext } from "./billing-context.js";
import { effectiveSubscription, subscriptionKey } from "./subscriptions/subscription-record.js";

/** The caller's business's subscription, with the ledger's balance and usage for the period now running. */
export function getSubscription(ctx: BillingContext) {
  return async ({ caller }: z.infer<typeof BillingCallerCommand>): Promise<SubscriptionResponse> => {
    const account = { app_id: caller.app_id, business_id: caller.business_id };
    const record = (await ctx.store.subscriptions.get(subscriptionKey(account.app_id, account.business_id)))?.value ?? null;
    const effective = effectiveSubscription(record, ctx.catalog.defaultPlan.id, ctx.clock.now());
    let plan = ctx.catalog.find(effective.plan_id);
    if (!plan) {
      // The plans file no longer lists the business's plan: it is treated as the default plan.
      ctx.logger.warn({ plan_id: effective.plan_id, business_id: account.business_id }, "subscription names a plan the plans file no longer lists");
      plan = ctx.catalog.defaultPlan;
    }
    const summary = await ctx.ledger.summary(account, {
      start: effective.current_period_start,
      end: effective.current_period_end,
      included_credit: plan.included_credit,
    });
    return {
      business_id: account.business_id,
      plan: publicPlan(plan),
      status: effective.status,
      current_period_start: effective.current_period_start,
      current_period_end: effective.current_period_end,
      credit_balance: summary.balance,
      usage_this_period: summary.used_this_period,
      provider: effective.stored ? (record?.provider ?? null) : null,
    };
  };
}
