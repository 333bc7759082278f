import { publicPlan, type ListPlansResponse } from "../../shared/contract/index.js";
import type { BillingContext } from "./billing-context.js";

/** Every configured plan, as callers see them. */
export function listPlans(ctx: BillingContext) {
  return async (): Promise<ListPlansResponse> => ({
    plans: ctx.catalog.plans.map(publicPlan),
    default_plan_id: ctx.catalog.defaultPlan.id,
  });
}
