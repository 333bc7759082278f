import type { NatsConnection } from "@nats-io/transport-node";
import type { Business } from "../../../shared/contract/index.js";
import type { JsonBucket } from "../../../shared/nats/index.js";
import type { JobRecord } from "../../../shared/records/index.js";
import type { Clock, Logger } from "../../../shared/runtime/index.js";
import type { Account, CreditLedger } from "../ledger/index.js";
import type { AccountPlan } from "./account-plan.js";
import type { KeyBudgetView } from "./key-budget.js";

/** What the credit handlers and the metering consumer share. */
export interface CreditContext {
  nc: NatsConnection;
  logger: Logger;
  clock: Clock;
  ledger: CreditLedger;
  /** `cjs_jobs`, read only: the scheduler writes it. */
  jobs: JsonBucket<typeof JobRecord>;
  /** `cjs_businesses`, read only: the gateway writes it. */
  businesses: JsonBucket<typeof Business>;
  /** `cjs_api_keys`, read only (the gateway writes it): a key's monthly budget. */
  apiKeys: JsonBucket<typeof KeyBudgetView>;
  /** Whether the account is the operator's own business, which is not billed (`operatorAccounts`). */
  isOperatorAccount(account: Account): Promise<boolean>;
  /** The plan and period of an account now. */
  planOf(account: Account): Promise<AccountPlan>;
}
