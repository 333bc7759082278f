import { z } from "zod";

/**
 * What each API key of an account was charged in one calendar month (UTC), in the account
 * record: the compare-and-set that appends a debit adds to it, so it counts each debit
 * exactly once. Only the month of the latest debit is kept; a debit in a new month starts over.
 */
export const KeySpendRecord = z.looseObject({
  /** `YYYY-MM`. */
  month: z.string(),
  /** Micro-credits per key id. */
  micros: z.record(z.string(), z.number().int()),
});
export type KeySpendRecord = z.infer<typeof KeySpendRecord>;

/** The calendar month (UTC) of an instant, `YYYY-MM`. */
export function monthOf(atMs: number): string {
  return new Date(atMs).toISOString().slice(0, 7);
}

/** The first instant of the month after the one `atMs` falls in, UTC: when a key's spend starts again from zero. */
export function nextMonthStart(atMs: number): string {
  const at = new Date(atMs);
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1)).toISOString();
}

/** The spend with `micros` more charged to `keyId` in `month`. */
export function addKeySpend(
  current: KeySpendRecord | null | undefined,
  month: string,
  keyId: string,
  micros: number,
): KeySpendRecord {
  const sameMonth = current?.month === month ? current.micros : {};
  return { month, micros: { ...sameMonth, [keyId]: (sameMonth[keyId] ?? 0) + micros } };
}

/** Micro-credits per key charged in `month` (none when the record holds an earlier month). */
export function keySpendIn(current: KeySpendRecord | null | undefined, month: string): Record<string, number> {
  return current?.month === month ? current.micros : {};
}
