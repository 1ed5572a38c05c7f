import { RouterError } from '../http/errors.js';
import type { HotState } from '../hot/port.js';
import type { Logger } from '../logger.js';
import type { SettingsStore } from '../settings/store.js';
import { decryptSecret, encryptSecret } from '../store/secrets.js';
import type { IrResponse } from '../translate/ir.js';
import type { ResponseCache } from './store.js';

/** The bounded store's name on the hot state (Redis keys `router:lru:cache:...`). */
export const CACHE_SPACE = 'cache';
/** Cross-node channel: a purge on one node drops every node's own copies too. */
const PURGE_CHANNEL = 'cache.purge';
/** The largest sealed entry kept in Redis; a bigger reply stays in the storing node's own cache only. */
export const SHARED_ENTRY_MAX_BYTES = 2 * 1024 * 1024;

/** What one Redis entry holds, sealed: the reply and when it was stored. */
interface SharedEntry {
  createdAt: number;
  provider: string;
  model: string;
  body: string;
}

/**
 * The response cache of a cluster (`--redis-url`): entries live in Redis, so a reply stored by one node is
 * served by every node, under the one-machine cache's keys, TTL and bounds (the `cacheTtlSeconds`,
 * `cacheMaxEntries` and `cacheMaxBytes` settings, enforced cluster-wide in least-recently-used order by one
 * script per store). Values are sealed with the cluster's key (AES-256-GCM, bound to their cache key), so
 * Redis holds no readable prompt or reply.
 *
 * A lookup is one Redis round trip (get and mark used, one script); a store is one more, after the reply,
 * off its path. Every reply is also kept in this node's own cache (`ResponseCache`), which answers while
 * Redis is unreachable: never an error, only a node-local cache until Redis is back.
 */
export class SharedResponseCache {
  private readonly now: () => number;

  constructor(
    private readonly opts: { hot: HotState; local: ResponseCache; settings: SettingsStore; keyFile: string; log: Logger; now?: () => number },
  ) {
    this.now = opts.now ?? Date.now;
    opts.hot.subscribe(PURGE_CHANNEL, () => opts.local.purge());
  }

  /** The cached reply under `key` (see ResponseCache.get); from Redis, else from this node's own cache. */
  async get(key: string, maxAgeMs?: number): Promise<IrResponse | undefined> {
    const { hot, local } = this.opts;
    if (!hot.health().healthy) return local.get(key, maxAgeMs);
    let stored: string | null;
    try {
      stored = await hot.lruGet(CACHE_SPACE, key);
    } catch {
      return local.get(key, maxAgeMs);
    }
    const entry = stored === null ? undefined : this.open(key, stored);
    const now = this.now();
    const ttlMs = this.opts.settings.get().cacheTtlSeconds * 1000;
    if (!entry || now >= entry.createdAt + ttlMs || (maxAgeMs !== undefined && now - entry.createdAt > maxAgeMs)) return local.counted(undefined);
    return local.counted(JSON.parse(entry.body) as IrResponse);
  }

  /** Stores a reply here and, unless Redis is down or the sealed entry too big, in Redis (not awaited). */
  set(key: string, provider: string, model: string, reply: IrResponse): boolean {
    const { hot, local, settings } = this.opts;
    if (!local.set(key, provider, model, reply)) return false;
    if (!hot.health().healthy) return true;
    const s = settings.get();
    const entry: SharedEntry = { createdAt: this.now(), provider, model, body: JSON.stringify(reply) };
    const sealed = encryptSecret(JSON.stringify(entry), this.opts.keyFile, `cache:${key}`);
    if (Buffer.byteLength(sealed) > Math.min(SHARED_ENTRY_MAX_BYTES, s.cacheMaxBytes)) return true;
    hot
      .lruSet(CACHE_SPACE, key, sealed, { ttlMs: s.cacheTtlSeconds * 1000, maxEntries: s.cacheMaxEntries, maxBytes: s.cacheMaxBytes })
      .then((evicted) => {
        local.counters.evictions += evicted;
      })
      .catch(() => undefined); // Redis down: the adapter says so (health, log); the reply is in the local cache
    return true;
  }

  /**
   * Purges the cluster's cache: this node's own, Redis's, and (by a message) every other node's own copies.
   * Resolves to the entries dropped in Redis. With Redis unreachable only this node's cache is purged and
   * the call fails with 503, so the caller knows the shared entries are still there.
   */
  async purge(): Promise<number> {
    const { hot, local } = this.opts;
    local.purge();
    let purged: number;
    try {
      purged = await hot.lruClear(CACHE_SPACE);
    } catch {
      throw new RouterError(503, "Redis is unreachable: this node's cache was purged, the cluster's shared cache was not; try again shortly.", {
        code: 'hot_state_unavailable',
      });
    }
    hot.publish(PURGE_CHANNEL, {});
    return purged;
  }

  /** Entries and bytes held in Redis (the sealed values), or this node's own while Redis is unreachable. */
  async size(): Promise<{ entries: number; bytes: number }> {
    if (!this.opts.hot.health().healthy) return this.opts.local.size();
    return this.opts.hot.lruSize(CACHE_SPACE).catch(() => this.opts.local.size());
  }

  /** An entry opened with the cluster key; undefined (a miss) when it does not open (another key, damage). */
  private open(key: string, stored: string): SharedEntry | undefined {
    try {
      return JSON.parse(decryptSecret(stored, this.opts.keyFile, `cache:${key}`)) as SharedEntry;
    } catch {
      this.opts.log.warn('a shared cache entry could not be opened (another sealing key?); treated as a miss');
      return undefined;
    }
  }
}
