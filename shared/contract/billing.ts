import { z } from "zod";

/**
 * Credit is counted in credits; amounts on the wire are decimal numbers with at most six
 * places (the ledger stores whole micro-credits, so sums never drift).
 */
export const CreditAmount = z.number().finite();

/** What one hour of each resource costs on an operator pool, in credits. */
export const PlanRates = z.strictObject({
  cpu_core_hour: CreditAmount.nonnegative(),
  memory_gb_hour: CreditAmount.nonnegative(),
  gpu_hour: CreditAmount.nonnegative(),
});
export type PlanRates = z.infer<typeof PlanRates>;

/** Limits of a plan, applied to jobs on operator pools (a business's own pools are never limited by its plan). */
export const PlanLimits = z.strictObject({
  /** Longest `timeout_seconds` a job on an operator pool may ask for. */
  max_job_timeout_seconds: z.number().int().positive(),
  /** Most CPU cores one job on an operator pool may ask for. */
  max_job_cpu: z.number().positive(),
});
export type PlanLimits = z.infer<typeof PlanLimits>;

/** A subscription plan, as configured (`services/billing/plans.json`, or `CJS_BILLING_PLANS_FILE`). */
export const Plan = z.strictObject({
  id: z.string().regex(/^[a-z][a-z0-9_-]{0,62}$/),
  name: z.string().min(1),
  /** Price per interval in the currency's major unit (49 means 49.00). */
  price: z.number().nonnegative(),
  /** ISO 4217, lower case (`usd`). */
  currency: z.string().regex(/^[a-z]{3}$/),
  interval: z.enum(["month", "year"]),
  /** Credit granted once per period, at the account's first use in it; unused credit carries over. */
  included_credit: CreditAmount.nonnegative(),
  rates: PlanRates,
  limits: PlanLimits,
  /** Whether jobs on operator pools are refused (402) once credit is spent. */
  billed: z.boolean(),
});
export type Plan = z.infer<typeof Plan>;
