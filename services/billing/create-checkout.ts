import type { z } from "zod";
import type { ServedRequest } from "../../shared/nats/index.js";
import type { CreateCheckoutCommand, CreateCheckoutResponse } from "../../shared/contract/index.js";
import { AppError } from "../../shared/errors/index.js";
import type { BillingContext } from "./billing-context.js";
import { effectiveSubscription, subscriptionKey } from "./subscriptions/subscription-record.js";

/**
 * Starts a checkout of a paid plan with the payment provider. Only an admin of the
 * business may; nothing changes until the provider's signed webhook says it was paid.
 */
export function createCheckout(ctx: BillingContext) {
  return async (
    { caller, body, origin }: z.infer<typeof CreateCheckoutCommand>,
    { log }: ServedRequest,
  ): Promise<CreateCheckoutResponse> => {
    if (caller.role !== "admin")
      throw new AppError("permission.denied", "Only an admin of the business can buy a plan.");
    const plan = ctx.catalog.find(body.plan_id);
    if (!plan)
      throw new AppError("resource.not_found", `No plan ${body.plan_id}.`, { details: { plan_id: body.plan_id } });
    if (plan.price === 0) {
      throw new AppError("request.invalid", "A free plan needs no checkout.", {
        details: { issues: [{ path: "plan_id", message: "a free plan needs no checkout" }] },
      });
    }
    const account = { app_id: caller.app_id, business_id: caller.business_id };
    const record =
      (await ctx.store.subscriptions.get(subscriptionKey(account.app_id, account.business_id)))?.value ?? null;
    const current = effectiveSubscription(record, ctx.catalog.defaultPlan.id, ctx.clock.now());
    if (current.plan_id === plan.id && current.status === "active") {
      throw new AppError("state.conflict", `The business is already on the ${plan.name} plan.`, {
        details: { state: current.status, plan_id: plan.id },
      });
    }
    const session = await ctx.provider.createCheckout({
      account,
      plan,
      success_url: body.success_url,
      cancel_url: body.cancel_url,
      origin,
      customer_id: record?.provider === ctx.provider.name ? record.provider_customer_id : null,
    });
    log.info({ business_id: account.business_id, plan_id: plan.id, provider: ctx.provider.name }, "checkout created");
    return {
      checkout_url: session.checkout_url,
      session_id: session.session_id,
      provider: ctx.provider.name,
      expires_at: new Date(session.expires_at_ms).toISOString(),
    };
  };
}
