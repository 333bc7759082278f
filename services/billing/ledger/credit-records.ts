import { z } from "zod";
import { DebitUsage, LedgerEntryKind, type LedgerEntry } from "../../../shared/contract/index.js";
import { toCredits } from "./credit-units.js";
import { KeySpendRecord } from "./key-spend.js";

/** A ledger entry as stored, amounts in micro-credits. `seq` orders an account's entries (1, 2, …). */
export const StoredEntry = z.looseObject({
  seq: z.number().int().positive(),
  entry_id: z.string(),
  kind: LedgerEntryKind,
  amount_micros: z.number().int(),
  balance_after_micros: z.number().int(),
  job_id: z.string().nullable(),
  attempt: z.number().int().nullable(),
  usage: DebitUsage.loose().nullable(),
  /** The API key a debit's job was submitted with; null or absent: none. */
  key_id: z.string().nullable().optional(),
  created_at: z.string(),
});
export type StoredEntry = z.infer<typeof StoredEntry>;

/**
 * A business's credit account in `cjs_credit_accounts` under `<app>.<business>`. Every change
 * of the balance is one compare-and-set of this record that also appends the entry to
 * `unwritten`; the entry is copied to `cjs_credit_entries` afterwards and only then dropped
 * from `unwritten`. So an entry id that was applied is always in `unwritten` or indexed in
 * `cjs_credit_entries`, which is how a repeat finds it.
 */
export const CreditAccountRecord = z.looseObject({
  app_id: z.string(),
  business_id: z.string(),
  balance_micros: z.number().int(),
  /** Start of the period whose included credit was granted last; null before the first grant. */
  period_start: z.string().nullable(),
  /** Debited for jobs since `period_start`. */
  period_used_micros: z.number().int(),
  /** Seq of the newest entry (0: none yet). */
  last_seq: z.number().int().min(0),
  unwritten: z.array(StoredEntry),
  /** What each API key was charged this month; absent before the first debit of a key. */
  key_spend: KeySpendRecord.nullable().optional(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type CreditAccountRecord = z.infer<typeof CreditAccountRecord>;

/** `cjs_credit_entries` under `<app>.<business>.i.<entry id>`: the entry id was applied as this seq. */
export const EntryIndexRecord = z.object({ seq: z.number().int().positive() });
export type EntryIndexRecord = z.infer<typeof EntryIndexRecord>;

export function accountKey(appId: string, businessId: string): string {
  return `${appId}.${businessId}`;
}

/** Entries sort by key, so the seq is zero-padded. */
export function entryKey(appId: string, businessId: string, seq: number): string {
  return `${accountKey(appId, businessId)}.n.${String(seq).padStart(12, "0")}`;
}

export function entriesFilter(appId: string, businessId: string): string {
  return `${accountKey(appId, businessId)}.n.*`;
}

export function entryIndexKey(appId: string, businessId: string, entryId: string): string {
  return `${accountKey(appId, businessId)}.i.${entryId}`;
}

export function publicEntry(entry: StoredEntry): LedgerEntry {
  return {
    entry_id: entry.entry_id,
    kind: entry.kind,
    amount: toCredits(entry.amount_micros),
    balance_after: toCredits(entry.balance_after_micros),
    job_id: entry.job_id,
    attempt: entry.attempt,
    usage: entry.usage,
    created_at: entry.created_at,
  };
}
