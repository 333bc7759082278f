import type { Plan } from "../../../shared/contract/index.js";
import type { JsonBucket } from "../../../shared/nats/index.js";
import type { Logger } from "../../../shared/runtime/index.js";
import type { Account, BillingPeriod } from "../ledger/index.js";
import type { PlanCatalog } from "../plans/plan-catalog.js";
import {
  effectiveSubscription,
  subscriptionKey,
  type EffectiveSubscription,
  type SubscriptionRecord,
} from "../subscriptions/subscription-record.js";

export interface AccountPlan {
  plan: Plan;
  period: BillingPeriod;
  subscription: EffectiveSubscription;
  /** The stored record, when there is one (in force or not). */
  record: SubscriptionRecord | null;
}

/**
 * The plan and period that apply to a business now: its subscription's, or the default
 * plan's this calendar month. A plan id the catalogue no longer lists falls back to the
 * default plan (and is logged), so a removed plan never blocks metering.
 */
export async function accountPlan(
  subscriptions: JsonBucket<typeof SubscriptionRecord>,
  catalog: PlanCatalog,
  logger: Logger,
  account: Account,
  now: number,
): Promise<AccountPlan> {
  const stored = await subscriptions.get(subscriptionKey(account.app_id, account.business_id));
  const record = stored?.value ?? null;
  const subscription = effectiveSubscription(record, catalog.defaultPlan.id, now);
  let plan = catalog.find(subscription.plan_id);
  if (!plan) {
    logger.warn(
      { plan_id: subscription.plan_id, business_id: account.business_id },
      "subscription names a plan the plans file no longer lists",
    );
    plan = catalog.defaultPlan;
  }
  return {
    plan,
    period: {
      start: subscription.current_period_start,
      end: subscription.current_period_end,
      included_credit: plan.included_credit,
    },
    subscription,
    record,
  };
}
