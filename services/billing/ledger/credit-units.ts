/** Credits on the wire are decimals; the ledger counts whole micro-credits so that sums never drift. */
export const MICROS_PER_CREDIT = 1_000_000;

export function toMicros(credits: number): number {
  return Math.round(credits * MICROS_PER_CREDIT);
}

export function toCredits(micros: number): number {
  return micros / MICROS_PER_CREDIT;
}
