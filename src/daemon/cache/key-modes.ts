import type { Db } from '../store/db.js';

/**
 * How an API key uses the response cache:
 * - `off`: never (whatever the request asks);
 * - `request`: only requests that opt in (`x-router-cache: use|refresh`, `Cache-Control: max-age=N`); the default;
 * - `always`: every eligible request, unless it opts out (`x-router-cache: bypass`, `Cache-Control: no-store|no-cache`).
 */
export type CacheKeyMode = 'off' | 'request' | 'always';
export const CACHE_KEY_MODES: readonly CacheKeyMode[] = ['off', 'request', 'always'];
export const DEFAULT_KEY_MODE: CacheKeyMode = 'request';

/** Per-key cache modes (`cache_key_settings`), held in memory: the request path never reads the disk. */
export class CacheKeyModes {
  private readonly modes = new Map<string, CacheKeyMode>();

  constructor(private readonly db: Db) {
    const rows = db.prepare('SELECT api_key_id, mode FROM cache_key_settings').all() as Array<{ api_key_id: string; mode: CacheKeyMode }>;
    for (const r of rows) this.modes.set(r.api_key_id, r.mode);
  }

  /** The mode of a key; dashboard-session callers (no key) get the default. */
  get(keyId: string | undefined): CacheKeyMode {
    return (keyId && this.modes.get(keyId)) || DEFAULT_KEY_MODE;
  }

  /** Sets a key's mode (written through: a management call, not the request path). */
  set(keyId: string, mode: CacheKeyMode): void {
    this.db
      .prepare(
        `INSERT INTO cache_key_settings (api_key_id, mode, updated_at) VALUES (?, ?, ?)
         ON CONFLICT(api_key_id) DO UPDATE SET mode = excluded.mode, updated_at = excluded.updated_at`,
      )
      .run(keyId, mode, new Date().toISOString());
    this.modes.set(keyId, mode);
  }
}
