import type { ListLedgerCommand, ListLedgerResponse } from "../../../shared/contract/index.js";
import type { CreditContext } from "./credit-context.js";

/** The caller's business's balance and entries, newest first; tenancy is the account key. */
export function listLedger(ctx: CreditContext) {
  return async ({ caller, body }: ListLedgerCommand): Promise<ListLedgerResponse> => {
    const account = { app_id: caller.app_id, business_id: caller.business_id };
    const { period } = await ctx.planOf(account);
    return ctx.ledger.list(account, period, body);
  };
}
