import type { KeySpendCommand, KeySpendReply } from "../../../shared/contract/index.js";
import { monthOf, nextMonthStart } from "../ledger/key-spend.js";
import type { CreditContext } from "./credit-context.js";

/** What each API key of the caller's business was charged this calendar month (UTC); tenancy is the account key. */
export function listKeySpend(ctx: CreditContext) {
  return async ({ caller }: KeySpendCommand): Promise<KeySpendReply> => {
    const account = { app_id: caller.app_id, business_id: caller.business_id };
    const { period } = await ctx.planOf(account);
    const { spent_by_key } = await ctx.ledger.summary(account, period);
    const now = ctx.clock.now();
    return { month: monthOf(now), resets_at: nextMonthStart(now), spent: spent_by_key };
  };
}
