import { LOCAL_CHANGES, type ChangeFeed } from '../store/changes.js';
import type { CacheKeyModeRepository, KeyCacheMode } from './key-modes-port.js';

/**
 * How an API key uses the response cache:
 * - `off`: never (whatever the request asks);
 * - `request`: only requests that opt in (`x-router-cache: use|refresh`, `Cache-Control: max-age=N`); the default;
 * - `always`: every eligible request, unless it opts out (`x-router-cache: bypass`, `Cache-Control: no-store|no-cache`).
 */
export type CacheKeyMode = 'off' | 'request' | 'always';
export const CACHE_KEY_MODES: readonly CacheKeyMode[] = ['off', 'request', 'always'];
export const DEFAULT_KEY_MODE: CacheKeyMode = 'request';

/** The change-feed topic of the key modes (docs/storage.md). */
export const CACHE_KEY_MODES_TOPIC = 'cache-key-modes';

/**
 * Per-key cache modes (`cache_key_settings`), held in memory: the request path never reads storage. Writes
 * reach storage through the port first; in a cluster a mode set on one node is published on the change feed
 * and the other nodes `reload()`.
 */
export class CacheKeyModes {
  private modes = new Map<string, CacheKeyMode>();

  /** `initial`: the modes as stored (`repo.loadAll()`); `create` loads them itself. */
  constructor(
    private readonly repo: CacheKeyModeRepository,
    initial: readonly KeyCacheMode[],
    private readonly changes: ChangeFeed = LOCAL_CHANGES,
    onReloadError: (error: unknown) => void = () => {},
  ) {
    this.modes = byKey(initial);
    // The reload's promise is returned for feeds that wait for their subscribers (tests); it never rejects.
    this.changes.subscribe(CACHE_KEY_MODES_TOPIC, () => this.reload().catch(onReloadError));
  }

  static async create(repo: CacheKeyModeRepository, changes?: ChangeFeed, onReloadError?: (error: unknown) => void): Promise<CacheKeyModes> {
    return new CacheKeyModes(repo, await repo.loadAll(), changes, onReloadError);
  }

  /** Replaces the snapshot with what storage holds now. */
  async reload(): Promise<void> {
    this.modes = byKey(await this.repo.loadAll());
  }

  /** The mode of a key; dashboard-session callers (no key) get the default. */
  get(keyId: string | undefined): CacheKeyMode {
    return (keyId && this.modes.get(keyId)) || DEFAULT_KEY_MODE;
  }

  /** Sets a key's mode (stored first: a management call, not the request path). False when the key is gone. */
  async set(keyId: string, mode: CacheKeyMode): Promise<boolean> {
    if ((await this.repo.set({ keyId, mode }, new Date().toISOString())) === 'missing-key') return false;
    this.modes.set(keyId, mode);
    this.changes.publish(CACHE_KEY_MODES_TOPIC);
    return true;
  }
}

function byKey(entries: readonly KeyCacheMode[]): Map<string, CacheKeyMode> {
  return new Map(entries.map((e) => [e.keyId, e.mode]));
}
