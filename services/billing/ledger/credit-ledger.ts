/** One business's billing account. */
export interface Account {
  app_id: string;
  business_id: string;
}

/** The current period of an account's subscription, whose included credit the ledger grants once. */
export interface BillingPeriod {
  start: string;
  end: string;
  /** Granted once per period, at its first use. */
  included_credit: number;
}

export interface CreditSummary {
  /** Credits left (may be negative after a long job). */
  balance: number;
  /** Credits debited for jobs in the period. */
  used_this_period: number;
}

/** The compute-credit ledger: the one owner of balances and ledger entries. */
export interface CreditLedger {
  summary(account: Account, period: BillingPeriod): Promise<CreditSummary>;
}
