import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { KeyRepository, KeyUse } from './port.js';
import { LOCAL_CHANGES, type ChangeFeed } from '../store/changes.js';
import type { ApiKeyRecord, CreatedApiKey } from '../../shared/wire.js';

/**
 * Scopes a key may hold: `proxy` (client routes), `manage` (management routes), `model:<glob>` (restricts
 * models), `path:<prefix>` (restricts the routes the key may call, e.g. `path:/v1/embeddings`).
 */
export const SCOPE_RE = /^(proxy|manage|model:[A-Za-z0-9._:/*-]{1,200}|path:\/[A-Za-z0-9._~:/-]{0,200})$/;

/**
 * True when `pathname` is inside one of the key's `path:` scopes (a key without any may call every route
 * its other scopes open). A prefix matches itself and what lies below it: `path:/v1/embeddings` opens
 * `/v1/embeddings`, never `/v1/embeddings-other`.
 */
export function pathAllowed(scopes: readonly string[], pathname: string): boolean {
  let restricted = false;
  for (const scope of scopes) {
    if (!scope.startsWith('path:')) continue;
    restricted = true;
    const prefix = scope.slice(5);
    if (pathname === prefix || (pathname.startsWith(prefix) && (prefix.endsWith('/') || pathname.charAt(prefix.length) === '/'))) return true;
  }
  return !restricted;
}
export const DEFAULT_SCOPES = ['proxy'];

/**
 * `model:<glob>` and `path:<prefix>` scopes restrict what a key may call; given alone they would leave a
 * key that can call nothing (client routes need `proxy`). So restricting scopes without `proxy` or
 * `manage` imply `proxy`.
 */
export function normalizeScopes(scopes: readonly string[]): string[] {
  const unique = [...new Set(scopes)];
  const onlyModels = unique.length > 0 && unique.every((s) => s.startsWith('model:') || s.startsWith('path:'));
  return onlyModels ? ['proxy', ...unique] : unique;
}

/**
 * What a token limit counts: every request of the key (`global`), requests to one provider
 * (`provider:<id>`), or to one model (`model:<provider>/<model>`). Exact names, no wildcards.
 */
export const TOKEN_SCOPE_RE = /^(global|provider:[A-Za-z0-9._:-]{1,100}|model:[A-Za-z0-9._:-]{1,100}\/[A-Za-z0-9._:/@+-]{1,200})$/;

/** A per-key token limit over a UTC day or month. A limit of 0 means no limit. */
export interface TokenLimit {
  scope: 'global' | `provider:${string}` | `model:${string}`;
  period: 'day' | 'month';
  limit: number;
}

/** A spending limit in USD over a UTC day or month (priced by the usage module's price table). */
export interface UsdBudget {
  period: 'day' | 'month';
  usd: number;
}

/** Per-key limits, accepted on create and PATCH. */
export interface KeyLimits {
  /** Requests per UTC day; null = the `defaultDailyRequestLimit` setting; 0 = unlimited. */
  dailyRequestLimit: number | null;
  tokenLimits: TokenLimit[];
  /** USD budget; null = none. */
  budget: UsdBudget | null;
}

export interface KeyRecord extends ApiKeyRecord, KeyLimits {
  keyHash: Buffer;
  /** Whether any scope is a `path:` one (set when cached, so requests of other keys never scan scopes). */
  hasPathScopes?: boolean;
}

function hashKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

/** The public view of a key: never the hash, never the key. */
export function publicKey(rec: KeyRecord): ApiKeyRecord & KeyLimits {
  const { keyHash: _hash, hasPathScopes: _paths, ...rest } = rec;
  return rest;
}

/**
 * API keys: stored as sha256 hashes (keys are 256-bit random, so a fast hash is enough), cached in memory
 * by hash so authenticating a request costs one hash and one map lookup. `lastUsedAt` is kept in memory and
 * flushed in batches: no disk write per request. Durable storage is the `KeyRepository` port (SQLite or
 * PostgreSQL); writes reach it first and the snapshot after, so the snapshot never shows an unsaved key.
 */
export class KeyStore {
  private byHash = new Map<string, KeyRecord>();
  private byId = new Map<string, KeyRecord>();
  private readonly touched = new Set<string>();

  /**
   * `initial`: the keys as stored (`await repo.loadAll()`). `changes`: the cluster's change feed; the store
   * publishes 'keys' after each committed write and reloads when another node publishes it.
   */
  constructor(
    private readonly repo: KeyRepository,
    initial: readonly KeyRecord[],
    private readonly changes: ChangeFeed = LOCAL_CHANGES,
  ) {
    for (const rec of initial) this.cache(rec);
    changes.subscribe('keys', () => this.reload());
  }

  /**
   * Replaces the snapshot with what storage holds now (a cluster node told that another node wrote). Uses
   * noted here and not yet flushed stay, and win over an older stored time.
   */
  async reload(): Promise<void> {
    const rows = await this.repo.loadAll();
    const byHash = new Map<string, KeyRecord>();
    const byId = new Map<string, KeyRecord>();
    for (const rec of rows) {
      rec.hasPathScopes = rec.scopes.some((s) => s.startsWith('path:'));
      byHash.set(rec.keyHash.toString('hex'), rec);
      byId.set(rec.id, rec);
    }
    this.byHash = byHash;
    this.byId = byId;
    for (const id of this.touched) if (!byId.has(id)) this.touched.delete(id);
  }

  private cache(rec: KeyRecord): void {
    rec.hasPathScopes = rec.scopes.some((s) => s.startsWith('path:'));
    this.byHash.set(rec.keyHash.toString('hex'), rec);
    this.byId.set(rec.id, rec);
  }

  /** Creates a key; the whole key is returned here and never again. */
  async create(name: string, scopes: string[] = DEFAULT_SCOPES, limits: Partial<KeyLimits> = {}): Promise<CreatedApiKey & KeyLimits> {
    const key = `rk_${randomBytes(32).toString('base64url')}`;
    const now = new Date().toISOString();
    const rec: KeyRecord = {
      id: randomUUID(),
      name,
      maskedKey: `${key.slice(0, 7)}...${key.slice(-4)}`,
      scopes: normalizeScopes(scopes),
      isActive: true,
      createdAt: now,
      lastUsedAt: null,
      dailyRequestLimit: limits.dailyRequestLimit ?? null,
      tokenLimits: limits.tokenLimits ?? [],
      budget: limits.budget ?? null,
      keyHash: hashKey(key),
    };
    await this.repo.insert(rec);
    this.cache(rec);
    this.changes.publish('keys');
    return { ...publicKey(rec), key };
  }

  /** Finds the active-or-not record for a presented key. The final comparison is constant-time. */
  verify(presented: string): KeyRecord | undefined {
    if (!presented.startsWith('rk_') || presented.length > 200) return undefined;
    const hash = hashKey(presented);
    const rec = this.byHash.get(hash.toString('hex'));
    if (!rec || !timingSafeEqual(rec.keyHash, hash)) return undefined;
    return rec;
  }

  private readonly lastUsedMs = new Map<string, number>();

  /** Records use of a key, in memory (a number: no date formatting per request); `flush()` persists. */
  touch(rec: KeyRecord): void {
    this.lastUsedMs.set(rec.id, Date.now());
    this.touched.add(rec.id);
  }

  /**
   * Persists batched `lastUsedAt` values. On SQLite the write happens during the call (a closing daemon need
   * not wait); uses whose write fails are kept for the next flush.
   */
  flush(): Promise<void> {
    if (this.touched.size === 0) return Promise.resolve();
    const ids = [...this.touched];
    this.touched.clear();
    const uses: KeyUse[] = [];
    for (const id of ids) {
      const rec = this.byId.get(id);
      const ms = this.lastUsedMs.get(id);
      if (!rec || ms === undefined) continue;
      rec.lastUsedAt = new Date(ms).toISOString();
      uses.push({ id, lastUsedAt: rec.lastUsedAt });
    }
    return this.repo.touchMany(uses).catch((err: unknown) => {
      for (const use of uses) if (this.byId.has(use.id)) this.touched.add(use.id);
      throw err;
    });
  }

  /** Brings `lastUsedAt` up to date from the in-memory use time (reads only; the request path never formats). */
  private fresh(rec: KeyRecord): KeyRecord {
    const ms = this.lastUsedMs.get(rec.id);
    if (ms !== undefined) rec.lastUsedAt = new Date(ms).toISOString();
    return rec;
  }

  list(): KeyRecord[] {
    return [...this.byId.values()].map((r) => this.fresh(r)).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  get(id: string): KeyRecord | undefined {
    const rec = this.byId.get(id);
    return rec && this.fresh(rec);
  }

  /** Applies a partial update (name, scopes, isActive, limits) together, in one statement. */
  async update(
    id: string,
    patch: { name?: string; scopes?: string[]; isActive?: boolean } & Partial<KeyLimits>,
  ): Promise<KeyRecord | undefined> {
    const rec = this.byId.get(id);
    if (!rec) return undefined;
    const next: KeyRecord = {
      ...rec,
      name: patch.name ?? rec.name,
      scopes: patch.scopes ? normalizeScopes(patch.scopes) : rec.scopes,
      isActive: patch.isActive ?? rec.isActive,
      // null is a value here (back to the default setting), so only an absent field keeps the old one.
      dailyRequestLimit: patch.dailyRequestLimit !== undefined ? patch.dailyRequestLimit : rec.dailyRequestLimit,
      tokenLimits: patch.tokenLimits ?? rec.tokenLimits,
      budget: patch.budget !== undefined ? patch.budget : rec.budget,
    };
    if (!(await this.repo.update(next, new Date().toISOString()))) return undefined;
    this.cache(next);
    this.changes.publish('keys');
    return next;
  }

  async remove(id: string): Promise<boolean> {
    const rec = this.byId.get(id);
    if (!rec) return false;
    await this.repo.remove(id);
    this.byId.delete(id);
    this.byHash.delete(rec.keyHash.toString('hex'));
    this.touched.delete(id);
    this.changes.publish('keys');
    return true;
  }
}
