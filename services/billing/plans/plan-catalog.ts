import { readFile } from "node:fs/promises";
import { z } from "zod";
import { Plan } from "../../../shared/contract/index.js";
// Imported rather than read from disk, so `npm run build` carries the shipped plans into dist/.
import shippedPlans from "../plans.json" with { type: "json" };

const PlansFile = z
  .strictObject({
    /** The plan of a business that never subscribed. */
    default_plan: z.string(),
    plans: z.array(Plan).min(1),
  })
  .superRefine((file, ctx) => {
    const ids = new Set<string>();
    for (const plan of file.plans) {
      if (ids.has(plan.id))
        ctx.addIssue({ code: "custom", message: `plan id "${plan.id}" appears twice`, path: ["plans"] });
      ids.add(plan.id);
    }
    if (!ids.has(file.default_plan))
      ctx.addIssue({
        code: "custom",
        message: `default_plan "${file.default_plan}" is not a listed plan`,
        path: ["default_plan"],
      });
  });

/** The configured plans, read once at start; the file is the only source. */
export interface PlanCatalog {
  readonly plans: readonly Plan[];
  readonly defaultPlan: Plan;
  /** The plan with this id, or undefined. */
  find(planId: string): Plan | undefined;
  /** The plan sold under this Stripe price id, or undefined. */
  findByStripePrice(priceId: string): Plan | undefined;
}

/**
 * Reads and checks a plans file (`CJS_BILLING_PLANS_FILE`), or the plans shipped with the
 * service (`services/billing/plans.json`) when no path is given. A bad file stops the
 * service with every problem listed.
 */
export async function loadPlanCatalog(path?: string): Promise<PlanCatalog> {
  const source = path ?? "services/billing/plans.json (shipped)";
  let raw: unknown = shippedPlans;
  if (path !== undefined) {
    try {
      raw = JSON.parse(await readFile(path, "utf8"));
    } catch (error) {
      throw new Error(`cannot read the plans file ${path}: ${(error as Error).message}`, { cause: error });
    }
  }
  const parsed = PlansFile.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues
      .map((issue) => `  - ${issue.path.join(".") || "(file)"}: ${issue.message}`)
      .join("\n");
    throw new Error(`invalid plans file ${source}:\n${problems}`);
  }
  const byId = new Map(parsed.data.plans.map((plan) => [plan.id, plan]));
  const byPrice = new Map(
    parsed.data.plans.flatMap((plan) => (plan.stripe_price_id ? [[plan.stripe_price_id, plan] as const] : [])),
  );
  return {
    plans: parsed.data.plans,
    defaultPlan: byId.get(parsed.data.default_plan) as Plan,
    find: (planId) => byId.get(planId),
    findByStripePrice: (priceId) => byPrice.get(priceId),
  };
}
