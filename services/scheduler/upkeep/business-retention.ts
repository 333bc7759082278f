import { RETENTION_LOOKUP_MAX_BUSINESSES } from "../../../shared/contract/index.js";
import { requestRpc } from "../../../shared/nats/index.js";
import type { SchedulerContext } from "../scheduler-context.js";

const DAY_MS = 86_400_000;

/**
 * How long each business keeps its finished jobs (ms), by `<app>.<business>`: the
 * operator's override when set, else its plan's `retention_days` as billing, the owner of
 * plans and subscriptions, tells it: one request per page of businesses, never one per job.
 */
export async function businessRetentionMs(
  ctx: SchedulerContext,
  businesses: Iterable<string>,
): Promise<Map<string, number>> {
  const retention = new Map<string, number>();
  const override = ctx.config.CJS_RETENTION_SECONDS_OVERRIDE;
  const all = [...businesses];
  if (override !== undefined) {
    for (const business of all) retention.set(business, override * 1000);
    return retention;
  }
  for (let start = 0; start < all.length; start += RETENTION_LOOKUP_MAX_BUSINESSES) {
    const page = all.slice(start, start + RETENTION_LOOKUP_MAX_BUSINESSES).map((business) => {
      const [app_id = "", business_id = ""] = business.split(".");
      return { app_id, business_id };
    });
    const reply = await requestRpc(ctx.nc, "billingRetentionLookup", { businesses: page });
    for (const each of reply.businesses)
      retention.set(`${each.app_id}.${each.business_id}`, each.retention_days * DAY_MS);
  }
  return retention;
}
