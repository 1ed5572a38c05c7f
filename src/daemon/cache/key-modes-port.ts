import type { CacheKeyMode } from './key-modes.js';

/** One key's stored cache mode. */
export interface KeyCacheMode {
  keyId: string;
  mode: CacheKeyMode;
}

/**
 * The cache key modes' storage port: `cache_key_settings` (a row per API key that left the default). The
 * `CacheKeyModes` snapshot is what the cache stage reads per request; the port is touched at start, by
 * PUT /api/cache/keys/{id} and by `reload()` (a cluster node told that another node changed a mode).
 * Implemented over SQLite and PostgreSQL by `SqlCacheKeyModeRepository` (test/cache/key-modes-port.test.ts).
 */
export interface CacheKeyModeRepository {
  /** Every stored mode, in no particular order. */
  loadAll(): Promise<KeyCacheMode[]>;
  /** Inserts or replaces a key's mode; 'missing-key' when the key is gone (deleted meanwhile, maybe on another node). */
  set(entry: KeyCacheMode, updatedAt: string): Promise<'stored' | 'missing-key'>;
}
