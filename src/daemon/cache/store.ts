import type { Logger } from '../logger.js';
import type { Settings, SettingsStore } from '../settings/store.js';
import type { Db } from '../store/db.js';
import type { IrResponse } from '../translate/ir.js';

/** One cached reply. `body` is the IR reply as JSON text (parsed again on each hit, so hits never share objects). */
interface Entry {
  key: string;
  provider: string;
  model: string;
  body: string;
  bytes: number;
  createdAt: number;
  lastUsedAt: number;
  hits: number;
}

interface Row {
  key: string;
  provider: string;
  model: string;
  response: string;
  bytes: number;
  created_at: number;
  last_used_at: number;
  hits: number;
}

/** Counters since the daemon started (GET /api/cache). */
export interface CacheCounters {
  hits: number;
  misses: number;
  stores: number;
  evictions: number;
  expirations: number;
  /** Replies too big for the byte bound, never stored. */
  tooLarge: number;
  /** Input plus output tokens of the replies served from the cache (upstream tokens not spent). */
  savedTokens: number;
}

export interface ResponseCacheOptions {
  db: Db;
  settings: SettingsStore;
  log: Logger;
  /** Clock (unix ms); tests move it. */
  now?: () => number;
  /** How often changes are written to SQLite, ms. */
  flushIntervalMs?: number;
  /** How often expired entries are swept, ms. */
  sweepIntervalMs?: number;
}

/**
 * The response cache: entries live in memory in LRU order (a Map, oldest first) and are bounded by the
 * `cacheMaxEntries` and `cacheMaxBytes` settings; an entry expires `cacheTtlSeconds` after it was stored.
 * SQLite keeps them across restarts, written behind: `get` and `set` only mark keys, and a background tick
 * writes the marked rows in one transaction, so neither a hit nor a store touches the disk.
 */
export class ResponseCache {
  readonly counters: CacheCounters = { hits: 0, misses: 0, stores: 0, evictions: 0, expirations: 0, tooLarge: 0, savedTokens: 0 };
  readonly since: number;
  private readonly entries = new Map<string, Entry>();
  private bytes = 0;
  /** Keys whose row must be written (stored or touched) / deleted at the next flush. */
  private readonly dirty = new Set<string>();
  private readonly deleted = new Set<string>();
  private purgeAll = false;
  private readonly timers: NodeJS.Timeout[] = [];
  private closed = false;
  private readonly now: () => number;

  constructor(private readonly opts: ResponseCacheOptions) {
    this.now = opts.now ?? Date.now;
    this.since = this.now();
    this.load();
    const flush = setInterval(() => this.flush(), opts.flushIntervalMs ?? 2_000);
    const sweep = setInterval(() => this.sweep(), opts.sweepIntervalMs ?? 60_000);
    flush.unref();
    sweep.unref();
    this.timers.push(flush, sweep);
    opts.settings.onChange((_next, changed) => {
      if (!this.closed && changed.some((k) => k === 'cacheMaxEntries' || k === 'cacheMaxBytes' || k === 'cacheTtlSeconds')) {
        this.sweep();
        this.enforceBounds();
      }
    });
  }

  private get limits(): Pick<Settings, 'cacheTtlSeconds' | 'cacheMaxEntries' | 'cacheMaxBytes'> {
    return this.opts.settings.get();
  }

  private expired(e: Entry, now: number): boolean {
    return now >= e.createdAt + this.limits.cacheTtlSeconds * 1000;
  }

  /**
   * The cached reply under `key`, or undefined (counted as a miss). `maxAgeMs` (from a request's
   * `Cache-Control: max-age`) also refuses entries older than that, without dropping them.
   */
  get(key: string, maxAgeMs?: number): IrResponse | undefined {
    const now = this.now();
    const e = this.entries.get(key);
    if (e && this.expired(e, now)) {
      this.drop(e);
      this.counters.expirations++;
    } else if (e && (maxAgeMs === undefined || now - e.createdAt <= maxAgeMs)) {
      // Most recently used goes last; the row's last_used_at follows on the next flush.
      this.entries.delete(key);
      this.entries.set(key, e);
      e.lastUsedAt = now;
      e.hits++;
      this.dirty.add(key);
      return this.counted(JSON.parse(e.body) as IrResponse);
    }
    return this.counted(undefined);
  }

  /** Counts one lookup (a hit when `reply` is given); the shared cache (cache/shared.ts) counts here too. */
  counted(reply: IrResponse | undefined): IrResponse | undefined {
    if (!reply) {
      this.counters.misses++;
      return undefined;
    }
    this.counters.hits++;
    this.counters.savedTokens += (reply.usage?.inputTokens ?? 0) + (reply.usage?.outputTokens ?? 0);
    return reply;
  }

  /** Stores a reply, evicting least recently used entries to stay within bounds. False when it is too big. */
  set(key: string, provider: string, model: string, reply: IrResponse): boolean {
    const body = JSON.stringify(reply);
    const bytes = Buffer.byteLength(body) + key.length;
    if (bytes > this.limits.cacheMaxBytes) {
      this.counters.tooLarge++;
      return false;
    }
    const old = this.entries.get(key);
    if (old) this.drop(old);
    const now = this.now();
    this.entries.set(key, { key, provider, model, body, bytes, createdAt: now, lastUsedAt: now, hits: 0 });
    this.bytes += bytes;
    this.deleted.delete(key);
    this.dirty.add(key);
    this.counters.stores++;
    this.enforceBounds();
    return true;
  }

  /** Drops every entry; the table is emptied on the next flush. Returns how many were dropped. */
  purge(): number {
    const n = this.entries.size;
    this.entries.clear();
    this.bytes = 0;
    this.dirty.clear();
    this.deleted.clear();
    this.purgeAll = true;
    return n;
  }

  /** Entries and bytes held now. */
  size(): { entries: number; bytes: number } {
    return { entries: this.entries.size, bytes: this.bytes };
  }

  /** Writes pending changes in one transaction (the background tick; also at close). */
  flush(): void {
    if ((!this.purgeAll && this.dirty.size === 0 && this.deleted.size === 0) || !this.opts.db.open) return;
    const { db } = this.opts;
    const upsert = db.prepare(
      `INSERT INTO response_cache (key, provider, model, response, bytes, created_at, last_used_at, hits) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT(key) DO UPDATE SET provider = excluded.provider, model = excluded.model, response = excluded.response,
         bytes = excluded.bytes, created_at = excluded.created_at, last_used_at = excluded.last_used_at, hits = excluded.hits`,
    );
    const del = db.prepare('DELETE FROM response_cache WHERE key = ?');
    const purgeAll = this.purgeAll;
    const deleted = [...this.deleted];
    const dirty = [...this.dirty].map((k) => this.entries.get(k)).filter((e): e is Entry => e !== undefined);
    this.purgeAll = false;
    this.deleted.clear();
    this.dirty.clear();
    try {
      db.transaction(() => {
        if (purgeAll) db.prepare('DELETE FROM response_cache').run();
        for (const k of deleted) del.run(k);
        for (const e of dirty) upsert.run(e.key, e.provider, e.model, e.body, e.bytes, e.createdAt, e.lastUsedAt, e.hits);
      })();
    } catch (err) {
      this.opts.log.error('response cache could not be written', { error: err instanceof Error ? err.message : String(err) });
    }
  }

  /** Stops the timers and writes what is pending (before the database closes). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const t of this.timers) clearInterval(t);
    this.flush();
  }

  /** Drops expired entries (every minute, and when the TTL setting changes). */
  sweep(): void {
    const now = this.now();
    for (const e of this.entries.values()) {
      if (!this.expired(e, now)) continue;
      this.drop(e);
      this.counters.expirations++;
    }
  }

  private drop(e: Entry): void {
    this.entries.delete(e.key);
    this.bytes -= e.bytes;
    this.dirty.delete(e.key);
    this.deleted.add(e.key);
  }

  /** Evicts least recently used entries until both bounds hold. */
  private enforceBounds(): void {
    const { cacheMaxEntries, cacheMaxBytes } = this.limits;
    for (const e of this.entries.values()) {
      if (this.entries.size <= cacheMaxEntries && this.bytes <= cacheMaxBytes) break;
      this.drop(e);
      this.counters.evictions++;
    }
  }

  /** Reads the unexpired rows back in LRU order at start; bounds are applied as for new entries. */
  private load(): void {
    const now = this.now();
    const cutoff = now - this.limits.cacheTtlSeconds * 1000;
    const { db } = this.opts;
    db.prepare('DELETE FROM response_cache WHERE created_at <= ?').run(cutoff);
    const rows = db.prepare('SELECT * FROM response_cache ORDER BY last_used_at ASC').all() as Row[];
    for (const r of rows) {
      this.entries.set(r.key, {
        key: r.key,
        provider: r.provider,
        model: r.model,
        body: r.response,
        bytes: r.bytes,
        createdAt: r.created_at,
        lastUsedAt: r.last_used_at,
        hits: r.hits,
      });
      this.bytes += r.bytes;
    }
    this.enforceBounds();
    const evicted = this.counters.evictions;
    this.counters.evictions = 0;
    if (evicted) this.flush();
  }
}
