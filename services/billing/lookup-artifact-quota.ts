import type { ArtifactQuota, ArtifactQuotaCommand } from "../../shared/contract/index.js";
import type { BillingContext } from "./billing-context.js";
import { accountPlan } from "./credit/account-plan.js";

/**
 * How many bytes of artifacts a business may keep stored: its plan's
 * `limits.max_artifact_bytes` (the plan in force now). The operator's own business has no
 * budget. Asked by the gateway before an upload, which keeps the answer for a minute.
 */
export function lookupArtifactQuota(ctx: BillingContext) {
  return async (account: ArtifactQuotaCommand): Promise<ArtifactQuota> => {
    if (await ctx.isOperatorAccount(account)) return { max_artifact_bytes: null };
    const { plan } = await accountPlan(ctx.store.subscriptions, ctx.catalog, ctx.logger, account, ctx.clock.now());
    return { max_artifact_bytes: plan.limits.max_artifact_bytes };
  };
}
