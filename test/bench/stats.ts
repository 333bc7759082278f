/** p50, p95 and p99 of a sample, in its unit; null when the sample is empty. */
export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

/** The nearest-rank percentile: the smallest value with at least `p` percent of the sample at or below it. */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) throw new Error("percentile of an empty sample");
  const rank = Math.max(1, Math.ceil((p / 100) * sorted.length));
  return sorted[Math.min(rank, sorted.length) - 1]!;
}

export function percentiles(sample: readonly number[]): Percentiles | null {
  if (sample.length === 0) return null;
  const sorted = [...sample].sort((a, b) => a - b);
  return {
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
  };
}

/** Events per second over `elapsedMs`; 0 for an empty interval. */
export function perSecond(count: number, elapsedMs: number): number {
  return elapsedMs > 0 ? (count * 1000) / elapsedMs : 0;
}
