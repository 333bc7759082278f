import type { DebitUsage, LedgerEntry, ListLedgerResponse } from "../../../shared/contract/index.js";

/** One business's billing account. */
export interface Account {
  app_id: string;
  business_id: string;
}

/** The current period of an account's subscription, whose included credit the ledger grants once. */
export interface BillingPeriod {
  start: string;
  end: string;
  /** Granted once per period, at its first use; unused credit carries over. */
  included_credit: number;
}

export interface CreditSummary {
  /** Credits left (may be negative after a long job), with the charges applied so far: those still in CJS_METERING are not in it. */
  balance: number;
  /** Credits debited for jobs in the period. */
  used_this_period: number;
  /** Credits debited per API key in the current calendar month (UTC); a key charged nothing is absent. */
  spent_by_key: Record<string, number>;
}

/** The charge of one ended attempt, computed by billing's metering from the job record. */
export interface JobDebit {
  job_id: string;
  attempt: number;
  /** What the attempt costs, in whole micro-credits (≥ 0). */
  charge_micros: number;
  usage: DebitUsage;
  /** The API key the job was submitted with, whose monthly spend the debit adds to; null or absent: none. */
  key_id?: string | null;
}

export interface RecordedEntry {
  entry: LedgerEntry;
  /** True when this entry id had already been applied: nothing changed. */
  duplicate: boolean;
  /** The balance right before the entry. */
  previous_balance: number;
}

/**
 * The compute-credit ledger: the one owner of balances and ledger entries. Every method
 * that takes a period first grants that period's included credit if it is the first use
 * of the account in the period (a `grant` entry, once).
 */
export interface CreditLedger {
  summary(account: Account, period: BillingPeriod): Promise<CreditSummary>;
  /** Debits an attempt once: a second call for the same job and attempt changes nothing. */
  debitJob(account: Account, period: BillingPeriod, debit: JobDebit): Promise<RecordedEntry>;
  /** `debitJob` for many attempts of one account in one write of its record; the entries in order. */
  debitJobs(account: Account, period: BillingPeriod, debits: readonly JobDebit[]): Promise<RecordedEntry[]>;
  /** Whether the attempt's debit was applied. Only reads: grants nothing, changes nothing. */
  hasJobDebit(account: Account, jobId: string, attempt: number): Promise<boolean>;
  /** An operator's adjustment: a `set` entry that makes the balance exactly `credits`. */
  setBalance(account: Account, period: BillingPeriod, credits: number): Promise<RecordedEntry>;
  /** Entries newest first; `cursor` is the previous page's `next_cursor`. */
  list(
    account: Account,
    period: BillingPeriod,
    page: { limit: number; cursor?: string | undefined },
  ): Promise<ListLedgerResponse>;
}
