import type { z } from "zod";
import {
  publicPlan,
  type BillingCallerCommand,
  type SubscriptionResponse,
  type UserContext,
} from "../../shared/contract/index.js";
import type { BillingContext } from "./billing-context.js";
import { accountPlan } from "./credit/account-plan.js";

/** The caller's business's subscription, with the ledger's balance and usage for the period now running. */
export function getSubscription(ctx: BillingContext) {
  return async ({ caller }: z.infer<typeof BillingCallerCommand>): Promise<SubscriptionResponse> =>
    subscriptionView(ctx, caller);
}

/** The subscription as callers see it (the answer of `subscription` and of `subscription/cancel`). */
export async function subscriptionView(ctx: BillingContext, caller: UserContext): Promise<SubscriptionResponse> {
  const account = { app_id: caller.app_id, business_id: caller.business_id };
  const { plan, period, subscription, record } = await accountPlan(
    ctx.store.subscriptions,
    ctx.catalog,
    ctx.logger,
    account,
    ctx.clock.now(),
  );
  const summary = await ctx.ledger.summary(account, period);
  return {
    business_id: account.business_id,
    plan: publicPlan(plan),
    status: subscription.status,
    current_period_start: subscription.current_period_start,
    current_period_end: subscription.current_period_end,
    credit_balance: summary.balance,
    usage_this_period: summary.used_this_period,
    provider: subscription.stored ? (record?.provider ?? null) : null,
    cancel_at_period_end: subscription.cancel_at_period_end,
    ends_at:
      subscription.cancel_at_period_end || (subscription.stored && subscription.status === "canceled")
        ? subscription.current_period_end
        : null,
    operator: await ctx.isOperatorAccount(account),
  };
}
