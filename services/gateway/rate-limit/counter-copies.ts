import type { Versioned } from "../../../shared/nats/index.js";

/**
 * The counter record this replica last wrote for each user, to count the user's next batch
 * from without reading it first: one round trip instead of two while the user's requests
 * come to this replica. A copy another replica has moved past costs one refused
 * compare-and-set and the read that follows, so a key whose copy lost is read first again
 * for `sharedForMs` (its user's requests are being spread over replicas). Copies save
 * reads; the compare-and-set decides, so a stale copy never admits a request too many.
 */
export class CounterCopies<T> {
  readonly #copies = new Map<string, Versioned<T>>();
  readonly #sharedUntil = new Map<string, number>();

  constructor(
    private readonly options: {
      /** Keys remembered at most; past it the memory starts over. */
      max: number;
      sharedForMs: number;
    },
  ) {}

  /** Where to start counting `key` at `nowMs`: the last copy, unless another replica counts it too. */
  startFrom(key: string, nowMs: number): Versioned<T> | undefined {
    const shared = this.#sharedUntil.get(key);
    if (shared !== undefined) {
      if (nowMs < shared) return undefined;
      this.#sharedUntil.delete(key);
    }
    return this.#copies.get(key);
  }

  /** The record as stored after counting `key`; `lost`: a try of it was refused (another replica wrote between). */
  stored(key: string, entry: Versioned<T>, lost: boolean, nowMs: number): void {
    for (const memo of [this.#copies, this.#sharedUntil]) if (memo.size >= this.options.max) memo.clear();
    this.#copies.set(key, entry);
    if (lost) this.#sharedUntil.set(key, nowMs + this.options.sharedForMs);
  }
}
