import { LruMap } from '../../routing/lru.js';
import type { CacheStats } from '../types.js';

/** LRU of embeddings keyed by signature and text, with hit/miss counters for the engine status. */
export class EmbeddingCache {
  private lru: LruMap<string, Float32Array> | undefined;
  hits = 0;
  misses = 0;

  constructor(size: number) {
    this.resize(size);
  }

  resize(size: number): void {
    this.lru = size > 0 ? new LruMap(size) : undefined;
  }

  get(signature: string, text: string): Float32Array | undefined {
    const v = this.lru?.get(`${signature}\u0000${text}`);
    if (v) this.hits++;
    else this.misses++;
    return v;
  }

  set(signature: string, text: string, v: Float32Array): void {
    this.lru?.set(`${signature}\u0000${text}`, v);
  }

  stats(): CacheStats {
    return { hits: this.hits, misses: this.misses, size: this.lru?.size ?? 0 };
  }
}
