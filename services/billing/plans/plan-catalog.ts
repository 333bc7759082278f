import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { Plan } from "../../../shared/contract/index.js";

/** The plans file shipped with the service; `CJS_BILLING_PLANS_FILE` points at another. */
export const DEFAULT_PLANS_FILE = fileURLToPath(new URL("../plans.json", import.meta.url));

const PlansFile = z
  .strictObject({
    /** The plan of a business that never subscribed. */
    default_plan: z.string(),
    plans: z.array(Plan).min(1),
  })
  .superRefine((file, ctx) => {
    const ids = new Set<string>();
    for (const plan of file.plans) {
      if (ids.has(plan.id)) ctx.addIssue({ code: "custom", message: `plan id "${plan.id}" appears twice`, path: ["plans"] });
      ids.add(plan.id);
    }
    if (!ids.has(file.default_plan)) ctx.addIssue({ code: "custom", message: `default_plan "${file.default_plan}" is not a listed plan`, path: ["default_plan"] });
  });

/** The configured plans, read once at start; the file is the only source. */
export interface PlanCatalog {
  readonly plans: readonly Plan[];
  readonly defaultPlan: Plan;
  /** The plan with this id, or undefined. */
  find(planId: string): Plan | undefined;
}

/** Reads and checks a plans file; a bad file stops the service with every problem listed. */
export async function loadPlanCatalog(path: string = DEFAULT_PLANS_FILE): Promise<PlanCatalog> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(path, "utf8"));
  } catch (error) {
    throw new Error(`cannot read the plans file ${path}: ${(error as Error).message}`, { cause: error });
  }
  const parsed = PlansFile.safeParse(raw);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => `  - ${issue.path.join(".") || "(file)"}: ${issue.message}`).join("\n");
    throw new Error(`invalid plans file ${path}:\n${problems}`);
  }
  const byId = new Map(parsed.data.plans.map((plan) => [plan.id, plan]));
  return {
    plans: parsed.data.plans,
    defaultPlan: byId.get(parsed.data.default_plan) as Plan,
    find: (planId) => byId.get(planId),
  };
}
