import type { SetCreditRequest, SetCreditResponse } from "../../../shared/contract/index.js";
import type { ServedRequest } from "../../../shared/nats/index.js";
import { AppError } from "../../../shared/errors/index.js";
import type { CreditContext } from "./credit-context.js";

/** Operator command `credit set`: a `set` entry that makes the business's balance exactly the amount. */
export function setCredit(ctx: CreditContext) {
  return async ({ business_id, amount }: SetCreditRequest, { log }: ServedRequest): Promise<SetCreditResponse> => {
    const business = await ctx.businesses.get(business_id);
    if (!business) throw new AppError("resource.not_found", `No business ${business_id}.`);
    const account = { app_id: business.value.app_id, business_id };
    const { period } = await ctx.planOf(account);
    const { entry, previous_balance } = await ctx.ledger.setBalance(account, period, amount);
    log.info(
      { app_id: account.app_id, business_id, previous_balance, balance: entry.balance_after },
      "credit set by an operator",
    );
    return {
      app_id: account.app_id,
      business_id,
      previous_balance,
      balance: entry.balance_after,
      entry_id: entry.entry_id,
    };
  };
}
