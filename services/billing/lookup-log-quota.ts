import type { LogQuota, LogQuotaCommand } from "../../shared/contract/index.js";
import type { BillingContext } from "./billing-context.js";
import { accountPlan } from "./credit/account-plan.js";

/**
 * How many log bytes a day a business's jobs may store: its plan's
 * `limits.max_log_bytes_per_day` (the plan in force now). The operator's own business has
 * no quota. Asked by the log relay, which keeps the answer for a minute.
 */
export function lookupLogQuota(ctx: BillingContext) {
  return async (account: LogQuotaCommand): Promise<LogQuota> => {
    if (await ctx.isOperatorAccount(account)) return { max_log_bytes_per_day: null };
    const { plan } = await accountPlan(ctx.store.subscriptions, ctx.catalog, ctx.logger, account, ctx.clock.now());
    return { max_log_bytes_per_day: plan.limits.max_log_bytes_per_day };
  };
}
