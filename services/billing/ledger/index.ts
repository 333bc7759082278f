import type { NatsConnection } from "@nats-io/transport-node";
import { BUCKETS, ensureBuckets, JsonBucket } from "../../../shared/nats/index.js";
import type { Clock, Logger } from "../../../shared/runtime/index.js";
import type { CreditLedger } from "./credit-ledger.js";
import { CreditAccountRecord, EntryIndexRecord, StoredEntry } from "./credit-records.js";
import { LedgerStore } from "./ledger-store.js";

export type { Account, BillingPeriod, CreditLedger, CreditSummary, JobDebit, RecordedEntry } from "./credit-ledger.js";
export { toCredits, toMicros } from "./credit-units.js";

/** Opens (creating if needed) the ledger's buckets: `cjs_credit_accounts` and `cjs_credit_entries`. */
export async function openCreditLedger(
  nc: NatsConnection,
  options: { replicas: number; clock: Clock; logger: Logger },
): Promise<CreditLedger> {
  const kv = await ensureBuckets(nc, [BUCKETS.creditAccounts, BUCKETS.creditEntries], {
    replicas: options.replicas,
    logger: options.logger,
  });
  return new LedgerStore(
    {
      accounts: new JsonBucket(kv[BUCKETS.creditAccounts], CreditAccountRecord),
      entries: new JsonBucket(kv[BUCKETS.creditEntries], StoredEntry),
      index: new JsonBucket(kv[BUCKETS.creditEntries], EntryIndexRecord),
    },
    options.clock,
    options.logger,
  );
}
