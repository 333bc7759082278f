import { z } from "zod";
import { AppError } from "../../../shared/errors/index.js";
import type { JsonBucket } from "../../../shared/nats/index.js";
import { nextMonthStart } from "../ledger/key-spend.js";
import type { Account } from "../ledger/index.js";

/**
 * The part of the gateway's API key record (`cjs_api_keys`, read only here) that billing
 * needs: the key's monthly budget and whose key it is. Loose: billing never writes it.
 */
export const KeyBudgetView = z.looseObject({
  app_id: z.string(),
  business_id: z.string(),
  budget_credits_per_month: z.number().nullable().default(null),
});
export type KeyBudgetView = z.infer<typeof KeyBudgetView>;

/** A key's budget in credits, or null when it has none (or is not the account's). */
export async function budgetOf(
  keys: JsonBucket<typeof KeyBudgetView>,
  account: Account,
  keyId: string,
): Promise<number | null> {
  const stored = await keys.get(keyId);
  if (!stored || stored.value.app_id !== account.app_id || stored.value.business_id !== account.business_id)
    return null;
  return stored.value.budget_credits_per_month;
}

/**
 * The refusal (402 `quota.key_budget_exhausted`) of a new attempt charged to a key whose
 * charges this month reached its budget; null when it may go ahead. `spent` is in credits.
 */
export function keyBudgetRefusal(keyId: string, budget: number | null, spent: number, nowMs: number): AppError | null {
  if (budget === null || spent < budget) return null;
  const resetsAt = nextMonthStart(nowMs);
  return new AppError(
    "quota.key_budget_exhausted",
    `This API key's jobs were charged ${spent} credits this month, its budget of ${budget}: jobs on operator pools with it are refused until ${resetsAt}. Other keys and sessions still work.`,
    { details: { key_id: keyId, budget, spent, resets_at: resetsAt } },
  );
}
