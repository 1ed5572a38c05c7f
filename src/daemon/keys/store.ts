import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { Db } from '../store/db.js';
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

/** Per-key limits, accepted on create and PATCH. */
export interface KeyLimits {
  /** Requests per UTC day; null = the `defaultDailyRequestLimit` setting; 0 = unlimited. */
  dailyRequestLimit: number | null;
  tokenLimits: TokenLimit[];
}

export interface KeyRecord extends ApiKeyRecord, KeyLimits {
  keyHash: Buffer;
  /** Whether any scope is a `path:` one (set when cached, so requests of other keys never scan scopes). */
  hasPathScopes?: boolean;
}

interface Row {
  id: string;
  name: string;
  key_hash: string;
  masked_key: string;
  scopes: string;
  is_active: number;
  created_at: string;
  last_used_at: string | null;
  daily_request_limit: number | null;
  token_limits: string;
}

function hashKey(key: string): Buffer {
  return createHash('sha256').update(key).digest();
}

function fromRow(row: Row): KeyRecord {
  return {
    id: row.id,
    name: row.name,
    maskedKey: row.masked_key,
    scopes: JSON.parse(row.scopes) as string[],
    isActive: row.is_active === 1,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    dailyRequestLimit: row.daily_request_limit,
    tokenLimits: JSON.parse(row.token_limits) as TokenLimit[],
    keyHash: Buffer.from(row.key_hash, 'hex'),
  };
}

/** The public view of a key: never the hash, never the key. */
export function publicKey(rec: KeyRecord): ApiKeyRecord & KeyLimits {
  const { keyHash: _hash, hasPathScopes: _paths, ...rest } = rec;
  return rest;
}

/**
 * API keys: stored as sha256 hashes (keys are 256-bit random, so a fast hash is enough), cached in memory
 * by hash so authenticating a request costs one hash and one map lookup. `lastUsedAt` is kept in memory and
 * flushed in batches: no disk write per request.
 */
export class KeyStore {
  private readonly byHash = new Map<string, KeyRecord>();
  private readonly byId = new Map<string, KeyRecord>();
  private readonly touched = new Set<string>();

  constructor(private readonly db: Db) {
    for (const row of db.prepare('SELECT * FROM api_keys').all() as Row[]) this.cache(fromRow(row));
  }

  private cache(rec: KeyRecord): void {
    rec.hasPathScopes = rec.scopes.some((s) => s.startsWith('path:'));
    this.byHash.set(rec.keyHash.toString('hex'), rec);
    this.byId.set(rec.id, rec);
  }

  /** Creates a key; the whole key is returned here and never again. */
  create(name: string, scopes: string[] = DEFAULT_SCOPES, limits: Partial<KeyLimits> = {}): CreatedApiKey & KeyLimits {
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
      keyHash: hashKey(key),
    };
    this.db
      .prepare(
        'INSERT INTO api_keys (id, name, key_hash, masked_key, scopes, is_active, created_at, updated_at, daily_request_limit, token_limits) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?, ?)',
      )
      .run(
        rec.id,
        name,
        rec.keyHash.toString('hex'),
        rec.maskedKey,
        JSON.stringify(rec.scopes),
        now,
        now,
        rec.dailyRequestLimit,
        JSON.stringify(rec.tokenLimits),
      );
    this.cache(rec);
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

  /** Persists batched `lastUsedAt` values in one transaction. */
  flush(): void {
    if (this.touched.size === 0) return;
    const stmt = this.db.prepare('UPDATE api_keys SET last_used_at = ? WHERE id = ?');
    const ids = [...this.touched];
    this.touched.clear();
    this.db.transaction(() => {
      for (const id of ids) {
        const rec = this.byId.get(id);
        const ms = this.lastUsedMs.get(id);
        if (!rec || ms === undefined) continue;
        rec.lastUsedAt = new Date(ms).toISOString();
        stmt.run(rec.lastUsedAt, id);
      }
    })();
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
  update(
    id: string,
    patch: { name?: string; scopes?: string[]; isActive?: boolean } & Partial<KeyLimits>,
  ): KeyRecord | undefined {
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
    };
    this.db
      .prepare(
        'UPDATE api_keys SET name = ?, scopes = ?, is_active = ?, daily_request_limit = ?, token_limits = ?, updated_at = ? WHERE id = ?',
      )
      .run(
        next.name,
        JSON.stringify(next.scopes),
        next.isActive ? 1 : 0,
        next.dailyRequestLimit,
        JSON.stringify(next.tokenLimits),
        new Date().toISOString(),
        id,
      );
    this.cache(next);
    return next;
  }

  remove(id: string): boolean {
    const rec = this.byId.get(id);
    if (!rec) return false;
    this.db.prepare('DELETE FROM api_keys WHERE id = ?').run(id);
    this.byId.delete(id);
    this.byHash.delete(rec.keyHash.toString('hex'));
    this.touched.delete(id);
    return true;
  }
}
