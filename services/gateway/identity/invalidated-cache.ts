/**
 * A bounded cache whose entries live until something says they changed. A fill that
 * raced with an eviction of the same key is dropped, so a stale read can never be
 * cached after the change that made it stale.
 */
export class InvalidatedCache<V> {
  private readonly entries = new Map<string, V>();
  private readonly evictions = new Map<string, number>();
  private generation = 0;

  constructor(private readonly maxEntries = 10_000) {}

  async get(key: string, load: () => Promise<V | null>): Promise<V | null> {
    const cached = this.entries.get(key);
    if (cached !== undefined) return cached;
    const generationAtStart = this.generation;
    const evictionsAtStart = this.evictions.get(key) ?? 0;
    const loaded = await load();
    const raced = this.generation !== generationAtStart || (this.evictions.get(key) ?? 0) !== evictionsAtStart;
    if (loaded !== null && !raced) {
      if (this.entries.size >= this.maxEntries) {
        const oldest = this.entries.keys().next().value;
        if (oldest !== undefined) this.entries.delete(oldest);
      }
      this.entries.set(key, loaded);
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
