import type { Business } from "../../../shared/contract/index.js";
import type { JsonBucket } from "../../../shared/nats/index.js";
import type { Account } from "../ledger/index.js";

/** Past this many businesses the memo starts over: it only saves reads, it decides nothing. */
const MEMO_LIMIT = 10_000;

/**
 * Whether an account is the operator's own business, which is not billed: its jobs on
 * operator pools (its own machines) are never refused for credit or plan limits, nor
 * charged. A business's `operator` flag is set at creation and never changes, so the
 * answer is kept, and the submit's credit check reads the business record once per process.
 */
export function operatorAccounts(businesses: JsonBucket<typeof Business>): (account: Account) => Promise<boolean> {
  const known = new Map<string, boolean>();
  return async ({ app_id, business_id }) => {
    const key = `${app_id}/${business_id}`;
    const remembered = known.get(key);
    if (remembered !== undefined) return remembered;
    const stored = await businesses.get(business_id);
    // A business not (yet) readable is billed; it is looked up again next time.
    if (!stored) return false;
    const operator = stored.value.operator && stored.value.app_id === app_id;
    if (known.size >= MEMO_LIMIT) known.clear();
    known.set(key, operator);
    return operator;
  };
}
