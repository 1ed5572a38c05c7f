/**
 * A size-bounded map with least-recently-used eviction, built on `Map` insertion order so every operation
 * is O(1). The routing modules use it wherever keys come from callers (API keys, IPs, session ids) and
 * memory must stay bounded no matter how many distinct keys show up.
 */
export class LruMap<K, V> {
  private readonly map = new Map<K, V>();

  /** @param maxEntries the most entries kept; inserting beyond it evicts the least recently used one. */
  constructor(readonly maxEntries: number) {
    if (!Number.isInteger(maxEntries) || maxEntries < 1) throw new RangeError('maxEntries must be a positive integer');
  }

  /** Number of entries held. */
  get size(): number {
    return this.map.size;
  }

  /** Returns the value and marks the key as most recently used. */
  get(key: K): V | undefined {
    const value = this.map.get(key);
    if (value === undefined) return undefined;
    // Re-inserting moves the key to the end of the iteration order, which is what "recent" means here.
    this.map.delete(key);
    this.map.set(key, value);
    return value;
  }

  /** Returns the value without touching recency. */
  peek(key: K): V | undefined {
    return this.map.get(key);
  }

  /** Stores the value as most recently used, evicting the oldest entry when full. */
  set(key: K, value: V): void {
    if (this.map.has(key)) this.map.delete(key);
    else if (this.map.size >= this.maxEntries) this.evictOldest();
    this.map.set(key, value);
  }

  /** Removes a key; returns whether it was present. */
  delete(key: K): boolean {
    return this.map.delete(key);
  }

  /** Removes every entry. */
  clear(): void {
    this.map.clear();
  }

  /** Entries from least to most recently used. */
  entries(): IterableIterator<[K, V]> {
    return this.map.entries();
  }

  private evictOldest(): void {
    const oldest = this.map.keys().next();
    if (!oldest.done) this.map.delete(oldest.value);
  }
}
