import type { RetentionLookupCommand, RetentionLookupReply } from "../../shared/contract/index.js";
import type { BillingContext } from "./billing-context.js";
import { accountPlan } from "./credit/account-plan.js";

/**
 * How long each named business keeps its finished jobs: its plan's `retention_days` (the
 * plan in force now, as for metering). Asked by the scheduler's retention sweep, a page of
 * businesses at a time.
 */
export function lookupRetention(ctx: BillingContext) {
  return async ({ businesses }: RetentionLookupCommand): Promise<RetentionLookupReply> => {
    const nowMs = ctx.clock.now();
    const answers = await Promise.all(
      businesses.map(async (account) => {
        const { plan } = await accountPlan(ctx.store.subscriptions, ctx.catalog, ctx.logger, account, nowMs);
        return { ...account, retention_days: plan.retention_days };
      }),
    );
    return { businesses: answers };
  };
}
