import { isForeignKeyViolation, type SqlDriver } from '../store/driver.js';
import type { CacheKeyMode } from './key-modes.js';
import type { CacheKeyModeRepository, KeyCacheMode } from './key-modes-port.js';

/** The cache key modes port over the driver seam: one SQL text for SQLite and PostgreSQL (table cache_key_settings). */
export class SqlCacheKeyModeRepository implements CacheKeyModeRepository {
  constructor(private readonly driver: SqlDriver) {}

  async loadAll(): Promise<KeyCacheMode[]> {
    const rows = await this.driver.query<{ api_key_id: string; mode: CacheKeyMode }>('SELECT api_key_id, mode FROM cache_key_settings');
    return rows.map((r) => ({ keyId: r.api_key_id, mode: r.mode }));
  }

  async set({ keyId, mode }: KeyCacheMode, updatedAt: string): Promise<'stored' | 'missing-key'> {
    try {
      await this.driver.run(
        `INSERT INTO cache_key_settings (api_key_id, mode, updated_at) VALUES (?, ?, ?)
         ON CONFLICT (api_key_id) DO UPDATE SET mode = excluded.mode, updated_at = excluded.updated_at`,
        [keyId, mode, updatedAt],
      );
      return 'stored';
    } catch (err) {
      if (isForeignKeyViolation(err)) return 'missing-key';
      throw err;
    }
  }
}
