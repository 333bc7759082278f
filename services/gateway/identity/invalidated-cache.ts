export interface InvalidatedCacheOptions {
  maxEntries?: number;
  /**
   * An entry older than this is loaded again even if nothing said it changed: the bound on
   * a change whose eviction never came (a watch that is silent while its consumer is made
   * again elsewhere). Infinity: entries live until evicted.
   */
  maxAgeMs?: number;
  now?: () => number;
}

/**
 * A bounded cache whose entries live until something says they changed, or at most
 * `maxAgeMs`. A fill that raced with an eviction of the same key is dropped, so a stale
 * read can never be cached after the change that made it stale.
 */
export class InvalidatedCache<V> {
  private readonly entries = new Map<string, { value: V; loadedAt: number }>();
  private readonly evictions = new Map<string, number>();
  private generation = 0;
  private readonly maxEntries: number;
  private readonly maxAgeMs: number;
  private readonly now: () => number;

  constructor({
    maxEntries = 10_000,
    maxAgeMs = Number.POSITIVE_INFINITY,
    now = Date.now,
  }: InvalidatedCacheOptions = {}) {
    this.maxEntries = maxEntries;
    this.maxAgeMs = maxAgeMs;
    this.now = now;
  }

  async get(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const cached = this.entries.get(key);
    if (cached !== undefined && this.now() - cached.loadedAt < this.maxAgeMs) return cached.value;
    const loadedAt = this.now();
    const generationAtStart = this.generation;
    const evictionsAtStart = this.evictions.get(key) ?? 0;
    const loaded = await load();
    const raced = this.generation !== generationAtStart || (this.evictions.get(key) ?? 0) !== evictionsAtStart;
    if (loaded !== null && !raced) {
      // Set again below, so the refreshed entry moves to the end of the eviction order.
      this.entries.delete(key);
      if (this.entries.size >= this.maxEntries) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.entries.delete(oldest);
      }
      this.entries.set(key, { value: loaded, loadedAt });
    }
    return loaded;
  }

  evict(key: string): void {
    this.entries.delete(key);
    this.evictions.set(key, (this.evictions.get(key) ?? 0) + 1);
    if (this.evictions.size > this.maxEntries) {
      // Forgetting eviction counts could hide a race, so every fill in flight is dropped instead.
      this.evictions.clear();
      this.generation += 1;
    }
  }

  clear(): void {
    this.entries.clear();
    this.evictions.clear();
    this.generation += 1;
  }

  get size(): number {
    return this.entries.size;
  }
}
