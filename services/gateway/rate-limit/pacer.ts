/** A key's tokens: what may go now, as of `atMs` (negative: owed by takes already placed). */
export interface TokenBucket {
  tokens: number;
  atMs: number;
}

export interface PacePolicy {
  perSecond: number;
  /** What a bucket holds when full: what may go at once after a quiet spell. */
  burst: number;
}

/**
 * Takes `amount` tokens from a bucket that refills at `perSecond` up to `burst`. Pure. A
 * take larger than what is there is allowed and leaves the bucket owing; `waitMs` is how
 * long the taker waits before going on, so each take is placed after the ones before it
 * (one larger than the burst still goes, once the bucket has refilled for it).
 */
export function takeTokens(
  bucket: TokenBucket | undefined,
  nowMs: number,
  amount: number,
  policy: PacePolicy,
): { bucket: TokenBucket; waitMs: number } {
  const refilled =
    bucket === undefined
      ? policy.burst
      : Math.min(policy.burst, bucket.tokens + ((nowMs - bucket.atMs) * policy.perSecond) / 1000);
  const left = refilled - amount;
  const waitMs = left >= 0 ? 0 : Math.ceil((-left * 1000) / policy.perSecond);
  return { bucket: { tokens: left, atMs: nowMs }, waitMs };
}

/** Buckets kept before the full ones are dropped (a full bucket is the same as none). */
const PRUNE_ABOVE = 10_000;

/**
 * Paces work per key on this replica: each take waits until its key's bucket has the
 * tokens, in the order the takes came. It shapes, never refuses: what refuses is a
 * limit in front of it. Timed by the real clock, whatever clock the caller counts with.
 */
export class KeyedPacer {
  private readonly buckets = new Map<string, TokenBucket>();
  /** Per key, the end of the last turn handed out (`inTurn`). */
  private readonly turns = new Map<string, Promise<void>>();

  constructor(
    private readonly policy: PacePolicy,
    private readonly now: () => number = Date.now,
  ) {}

  /** Resolves once `amount` of `key`'s tokens are the caller's, or when `cancelled` settles first; the milliseconds it waited for. */
  async take(key: string, amount: number, cancelled?: Promise<void>): Promise<number> {
    const nowMs = this.now();
    const { bucket, waitMs } = takeTokens(this.buckets.get(key), nowMs, amount, this.policy);
    if (!this.buckets.has(key) && this.buckets.size >= PRUNE_ABOVE) this.prune(nowMs);
    this.buckets.set(key, bucket);
    if (waitMs === 0) return 0;
    let timer: NodeJS.Timeout | undefined;
    const elapsed = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, waitMs);
    });
    await (cancelled ? Promise.race([elapsed, cancelled]) : elapsed);
    clearTimeout(timer);
    return waitMs;
  }

  /**
   * Runs `work` once the key's earlier turns are done: work that learns what it costs only
   * as it runs (a read of unknown size) takes its tokens inside its turn, so takers of one
   * key go one at a time, never all at once before any has paid.
   */
  async inTurn<T>(key: string, work: () => Promise<T>): Promise<T> {
    const previous = this.turns.get(key) ?? Promise.resolve();
    let release: () => void = () => undefined;
    const mine = previous.then(() => new Promise<void>((resolve) => (release = resolve)));
    this.turns.set(key, mine);
    await previous;
    try {
      return await work();
    } finally {
      release();
      if (this.turns.get(key) === mine) this.turns.delete(key);
    }
  }

  /** Keys held now (tests, and a bound on memory). */
  get size(): number {
    return this.buckets.size;
  }

  private prune(nowMs: number): void {
    for (const [key, bucket] of this.buckets)
      if (takeTokens(bucket, nowMs, 0, this.policy).bucket.tokens >= this.policy.burst) this.buckets.delete(key);
  }
}
