import type { KeyRecord } from './store.js';

/** A key's last use, persisted in batches (the request path only notes it in memory). */
export interface KeyUse {
  id: string;
  /** ISO-8601 time of the last use. */
  lastUsedAt: string;
}

/**
 * The keys module's storage port: what the in-memory `KeyStore` needs from durable storage. The store keeps
 * the snapshot the request path reads; the port is touched by management writes, the batched last-use
 * flush, and `reload()` (a cluster node refreshing after another node wrote). Implemented over SQLite and
 * PostgreSQL by `SqlKeyRepository`; test/keys/port.test.ts runs the same checks against both.
 */
export interface KeyRepository {
  /** Every key, in no particular order. */
  loadAll(): Promise<KeyRecord[]>;
  insert(rec: KeyRecord): Promise<void>;
  /** Writes name, scopes, active flag and limits; false when the key is gone. */
  update(rec: KeyRecord, updatedAt: string): Promise<boolean>;
  /** False when there was no such key. */
  remove(id: string): Promise<boolean>;
  /** Records last uses; a use older than the stored one (another node's) never moves it back. */
  touchMany(uses: readonly KeyUse[]): Promise<void>;
}
