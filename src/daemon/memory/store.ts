import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.js';
import { ftsQuery } from './fts.js';
import type { MemoryEntry, MemoryType, Scope } from './types.js';

interface Row {
  seq: number;
  id: string;
  api_key_id: string | null;
  session_id: string | null;
  type: MemoryType;
  key: string;
  content: string;
  metadata: string;
  expires_at: string | null;
  tokens: number;
  hit_count: number;
  last_hit_at: string | null;
  embedding_sig: string | null;
  external_sig: string | null;
  archived: number;
  created_at: string;
  updated_at: string;
}

/** A stored row with the internal fields the engine needs. */
export interface StoredMemory extends MemoryEntry {
  seq: number;
  embeddingSig: string | null;
  externalSig: string | null;
}

export interface NewMemory {
  type: MemoryType;
  key: string;
  content: string;
  sessionId: string | null;
  apiKeyId: string | null;
  metadata: Record<string, unknown>;
  expiresAt: string | null;
  tokens: number;
  archived?: boolean;
}

export interface MemoryPatch {
  type?: MemoryType;
  key?: string;
  content?: string;
  metadata?: Record<string, unknown>;
  tokens?: number;
}

export interface ListFilter {
  apiKeyId: Scope;
  type?: MemoryType;
  sessionId?: string;
  q?: string;
  limit: number;
  offset: number;
}

/** The vec0 table of the embedded vector store. Its width is the active signature's dimension count. */
export const VEC_TABLE = 'memories_vec';

/** A vector partition: the API key id, '' for the global pool. */
export function partitionOf(scope: Scope): string {
  return scope ?? '';
}

function toEntry(r: Row): StoredMemory {
  return {
    id: r.id,
    type: r.type,
    key: r.key,
    content: r.content,
    sessionId: r.session_id,
    apiKeyId: r.api_key_id,
    metadata: JSON.parse(r.metadata) as Record<string, unknown>,
    expiresAt: r.expires_at,
    tokens: r.tokens,
    hitCount: r.hit_count,
    lastHitAt: r.last_hit_at,
    archived: r.archived === 1,
    createdAt: r.created_at,
    updatedAt: r.updated_at,
    seq: r.seq,
    embeddingSig: r.embedding_sig,
    externalSig: r.external_sig,
  };
}

/** The API view of a stored memory (internal columns removed). */
export function publicMemory(m: StoredMemory): MemoryEntry {
  const { seq: _seq, embeddingSig: _e, externalSig: _x, ...rest } = m;
  return rest;
}

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** `(m.api_key_id IS NULL OR m.api_key_id IN (...))` for a list of scopes. */
function scopeClause(scopes: readonly Scope[], alias = 'm'): { sql: string; args: string[] } {
  const keys = [...new Set(scopes.filter((s): s is string => s !== null))];
  const parts: string[] = [];
  if (scopes.includes(null)) parts.push(`${alias}.api_key_id IS NULL`);
  if (keys.length) parts.push(`${alias}.api_key_id IN (${keys.map(() => '?').join(', ')})`);
  return { sql: parts.length ? `(${parts.join(' OR ')})` : '0', args: keys };
}

/**
 * The memories table, its FTS5 index (triggers keep it in sync) and the sqlite-vec table. All rowids and
 * primary keys handed to sqlite-vec are BigInt.
 */
export class MemoryStore {
  constructor(private readonly db: Db) {}

  // ---- rows ----

  insert(input: NewMemory, now = new Date()): StoredMemory {
    const ts = now.toISOString();
    const id = randomUUID();
    this.db
      .prepare(
        `INSERT INTO memories (id, api_key_id, session_id, type, key, content, metadata, expires_at, tokens, archived, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(
        id,
        input.apiKeyId,
        input.sessionId,
        input.type,
        input.key,
        input.content,
        JSON.stringify(input.metadata),
        input.expiresAt,
        input.tokens,
        input.archived ? 1 : 0,
        ts,
        ts,
      );
    return this.getAny(id)!;
  }

  /** A row by id, expired or not. */
  getAny(id: string): StoredMemory | undefined {
    const r = this.db.prepare('SELECT * FROM memories WHERE id = ?').get(id) as Row | undefined;
    return r ? toEntry(r) : undefined;
  }

  /** A live row by id: expired entries are never returned. */
  get(id: string, now = new Date()): StoredMemory | undefined {
    const r = this.db
      .prepare('SELECT * FROM memories WHERE id = ? AND (expires_at IS NULL OR expires_at > ?)')
      .get(id, now.toISOString()) as Row | undefined;
    return r ? toEntry(r) : undefined;
  }

  bySeqs(seqs: readonly number[], now = new Date()): Map<number, StoredMemory> {
    const out = new Map<number, StoredMemory>();
    if (seqs.length === 0) return out;
    const rows = this.db
      .prepare(
        `SELECT * FROM memories WHERE seq IN (SELECT value FROM json_each(?)) AND archived = 0
         AND (expires_at IS NULL OR expires_at > ?)`,
      )
      .all(JSON.stringify(seqs), now.toISOString()) as Row[];
    for (const r of rows) out.set(r.seq, toEntry(r));
    return out;
  }

  byIds(ids: readonly string[], now = new Date()): Map<string, StoredMemory> {
    const out = new Map<string, StoredMemory>();
    if (ids.length === 0) return out;
    const rows = this.db
      .prepare(
        `SELECT * FROM memories WHERE id IN (SELECT value FROM json_each(?)) AND archived = 0
         AND (expires_at IS NULL OR expires_at > ?)`,
      )
      .all(JSON.stringify(ids), now.toISOString()) as Row[];
    for (const r of rows) out.set(r.id, toEntry(r));
    return out;
  }

  /** Applies a patch; key or content changes drop the stored vector signatures (the vector is regenerated). */
  update(id: string, patch: MemoryPatch, now = new Date()): StoredMemory | undefined {
    const cur = this.getAny(id);
    if (!cur) return undefined;
    const next = {
      type: patch.type ?? cur.type,
      key: patch.key ?? cur.key,
      content: patch.content ?? cur.content,
      metadata: patch.metadata ?? cur.metadata,
      tokens: patch.tokens ?? cur.tokens,
    };
    const textChanged = next.key !== cur.key || next.content !== cur.content;
    this.db
      .prepare(
        `UPDATE memories SET type = ?, key = ?, content = ?, metadata = ?, tokens = ?, updated_at = ?,
           embedding_sig = CASE WHEN ? THEN NULL ELSE embedding_sig END,
           external_sig = CASE WHEN ? THEN NULL ELSE external_sig END
         WHERE id = ?`,
      )
      .run(next.type, next.key, next.content, JSON.stringify(next.metadata), next.tokens, now.toISOString(), textChanged ? 1 : 0, textChanged ? 1 : 0, id);
    return this.getAny(id);
  }

  /** Deletes a row and its embedded vector; returns the deleted row. */
  delete(id: string): StoredMemory | undefined {
    const cur = this.getAny(id);
    if (!cur) return undefined;
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM memories WHERE seq = ?').run(cur.seq);
      this.deleteVector(cur.seq);
    })();
    return cur;
  }

  /** Deletes expired rows and their vectors; returns what was removed (for the external store). */
  pruneExpired(now = new Date()): StoredMemory[] {
    const rows = (
      this.db.prepare('SELECT * FROM memories WHERE expires_at IS NOT NULL AND expires_at <= ?').all(now.toISOString()) as Row[]
    ).map(toEntry);
    if (rows.length === 0) return rows;
    this.db.transaction(() => {
      const del = this.db.prepare('DELETE FROM memories WHERE seq = ?');
      for (const r of rows) {
        del.run(r.seq);
        this.deleteVector(r.seq);
      }
    })();
    return rows;
  }

  private where(f: Omit<ListFilter, 'limit' | 'offset'>, now: Date): { sql: string; args: unknown[] } {
    const parts = ['(m.expires_at IS NULL OR m.expires_at > ?)'];
    const args: unknown[] = [now.toISOString()];
    if (f.apiKeyId === null) parts.push('m.api_key_id IS NULL');
    else {
      parts.push('m.api_key_id = ?');
      args.push(f.apiKeyId);
    }
    if (f.type) {
      parts.push('m.type = ?');
      args.push(f.type);
    }
    if (f.sessionId !== undefined) {
      parts.push('m.session_id = ?');
      args.push(f.sessionId);
    }
    if (f.q) {
      parts.push("(m.key LIKE ? ESCAPE '\\' OR m.content LIKE ? ESCAPE '\\')");
      const like = `%${escapeLike(f.q)}%`;
      args.push(like, like);
    }
    return { sql: parts.join(' AND '), args };
  }

  /** Newest first, filtered and paged; expired entries never appear. */
  list(f: ListFilter, now = new Date()): { data: StoredMemory[]; total: number; tokensUsed: number; hit: number } {
    const w = this.where(f, now);
    const agg = this.db
      .prepare(
        `SELECT count(*) AS total, coalesce(sum(m.tokens), 0) AS tokens, coalesce(sum(m.hit_count > 0), 0) AS hit FROM memories m WHERE ${w.sql}`,
      )
      .get(...w.args) as { total: number; tokens: number; hit: number };
    const rows = this.db
      .prepare(`SELECT * FROM memories m WHERE ${w.sql} ORDER BY m.created_at DESC, m.seq DESC LIMIT ? OFFSET ?`)
      .all(...w.args, f.limit, f.offset) as Row[];
    return { data: rows.map(toEntry), total: agg.total, tokensUsed: agg.tokens, hit: agg.hit };
  }

  /** Marks memories as returned by a real retrieval (previews never call this). */
  touchHits(seqs: readonly number[], now = new Date()): void {
    if (seqs.length === 0) return;
    this.db
      .prepare('UPDATE memories SET hit_count = hit_count + 1, last_hit_at = ? WHERE seq IN (SELECT value FROM json_each(?))')
      .run(now.toISOString(), JSON.stringify(seqs));
  }

  /** Finds a live memory of a scope by key (extraction updates facts it already knows). */
  findByKey(scope: Scope, key: string, now = new Date()): StoredMemory | undefined {
    const r = this.db
      .prepare(
        `SELECT * FROM memories WHERE api_key_id IS ? AND lower(key) = lower(?) AND archived = 0
         AND (expires_at IS NULL OR expires_at > ?) ORDER BY seq DESC LIMIT 1`,
      )
      .get(scope, key, now.toISOString()) as Row | undefined;
    return r ? toEntry(r) : undefined;
  }

  /** Live, unarchived episodic memories of one scope created before `before`, oldest first. */
  episodicBefore(scope: Scope, before: Date, sessionId?: string, now = new Date()): StoredMemory[] {
    const args: unknown[] = [scope, before.toISOString(), now.toISOString()];
    let extra = '';
    if (sessionId !== undefined) {
      extra = ' AND session_id = ?';
      args.push(sessionId);
    }
    return (
      this.db
        .prepare(
          `SELECT * FROM memories WHERE api_key_id IS ? AND type = 'episodic' AND archived = 0 AND created_at < ?
           AND (expires_at IS NULL OR expires_at > ?)${extra} ORDER BY seq LIMIT 2000`,
        )
        .all(...args) as Row[]
    ).map(toEntry);
  }

  /** Scopes that hold episodic memories (auto-summarization walks them). */
  episodicScopes(): Scope[] {
    return (this.db.prepare("SELECT DISTINCT api_key_id AS k FROM memories WHERE type = 'episodic' AND archived = 0").all() as Array<{ k: string | null }>).map(
      (r) => r.k,
    );
  }

  archive(seqs: readonly number[], now = new Date()): void {
    this.db
      .prepare('UPDATE memories SET archived = 1, updated_at = ? WHERE seq IN (SELECT value FROM json_each(?))')
      .run(now.toISOString(), JSON.stringify(seqs));
  }

  // ---- keyword search ----

  /**
   * FTS5 search (bm25, key weighted twice the content) over live, unarchived memories of the scopes. The
   * user's text is sanitized into quoted terms, so it can never produce an FTS syntax error.
   */
  ftsSearch(text: string, scopes: readonly Scope[], limit: number, now = new Date()): Array<{ seq: number; score: number }> {
    const match = ftsQuery(text);
    if (!match) return [];
    const sc = scopeClause(scopes);
    const rows = this.db
      .prepare(
        `SELECT m.seq AS seq, bm25(memories_fts, 2.0, 1.0) AS rank FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
         WHERE memories_fts MATCH ? AND ${sc.sql} AND m.archived = 0 AND (m.expires_at IS NULL OR m.expires_at > ?)
         ORDER BY rank LIMIT ?`,
      )
      .all(match, ...sc.args, now.toISOString(), limit) as Array<{ seq: number; rank: number }>;
    // bm25() is lower-is-better and negative; the score reported is its negation (higher is better).
    return rows.map((r) => ({ seq: r.seq, score: -r.rank }));
  }

  // ---- embedded vectors (sqlite-vec) ----

  meta(key: string): string | undefined {
    return (this.db.prepare('SELECT value FROM memory_meta WHERE key = ?').get(key) as { value: string } | undefined)?.value;
  }

  setMeta(key: string, value: string | null): void {
    if (value === null) {
      this.db.prepare('DELETE FROM memory_meta WHERE key = ?').run(key);
      return;
    }
    this.db
      .prepare(
        'INSERT INTO memory_meta (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      )
      .run(key, value, new Date().toISOString());
  }

  hasVecTable(): boolean {
    return !!this.db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(VEC_TABLE);
  }

  /**
   * Makes the vec0 table match a new embedding signature: the old vectors (another model or width) are
   * dropped, a table of the new width is created and the signature recorded. Every row then differs from
   * the active signature, which is what `needsReindex` counts.
   */
  resetVectors(signature: string, dimensions: number): void {
    this.db.transaction(() => {
      this.db.exec(`DROP TABLE IF EXISTS ${VEC_TABLE}`);
      this.db.exec(
        `CREATE VIRTUAL TABLE ${VEC_TABLE} USING vec0(scope text partition key, embedding float[${Math.trunc(dimensions)}] distance_metric=cosine)`,
      );
      // The dropped table held every vector: no row keeps one, whatever signature it recorded (a row
      // embedded under this same signature before an A -> B -> A switch must be embedded again too).
      this.db.prepare('UPDATE memories SET embedding_sig = NULL WHERE embedding_sig IS NOT NULL').run();
      this.setMeta('embedding_signature', signature);
    })();
  }

  upsertVector(seq: number, scope: Scope, vector: Float32Array, signature: string): void {
    if (!this.hasVecTable()) return;
    this.db.transaction(() => {
      this.db.prepare(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`).run(BigInt(seq));
      this.db.prepare(`INSERT INTO ${VEC_TABLE} (rowid, scope, embedding) VALUES (?, ?, ?)`).run(BigInt(seq), partitionOf(scope), vector);
      this.db.prepare('UPDATE memories SET embedding_sig = ? WHERE seq = ?').run(signature, seq);
    })();
  }

  /** Records that a row has been embedded without a storable vector (e.g. no known word): not pending. */
  markEmbedded(seq: number, signature: string): void {
    this.db.transaction(() => {
      this.deleteVector(seq);
      this.db.prepare('UPDATE memories SET embedding_sig = ? WHERE seq = ?').run(signature, seq);
    })();
  }

  deleteVector(seq: number): void {
    if (!this.hasVecTable()) return;
    this.db.prepare(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`).run(BigInt(seq));
  }

  vector(seq: number): Float32Array | undefined {
    if (!this.hasVecTable()) return undefined;
    const r = this.db.prepare(`SELECT embedding FROM ${VEC_TABLE} WHERE rowid = ?`).get(BigInt(seq)) as { embedding: Buffer } | undefined;
    if (!r) return undefined;
    const b = r.embedding;
    return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
  }

  /**
   * K nearest neighbours among the partitions of the scopes (cosine). Returns similarity (1 - distance);
   * expired and archived rows are filtered afterwards, so the search over-fetches.
   */
  knn(vector: Float32Array, scopes: readonly Scope[], k: number): Array<{ seq: number; similarity: number }> {
    if (!this.hasVecTable()) return [];
    const stmt = this.db.prepare(
      `SELECT rowid, distance FROM ${VEC_TABLE} WHERE embedding MATCH ? AND k = ? AND scope = ? ORDER BY distance`,
    );
    const out: Array<{ seq: number; similarity: number }> = [];
    for (const scope of new Set(scopes.map(partitionOf))) {
      for (const r of stmt.all(vector, k, scope) as Array<{ rowid: number | bigint; distance: number }>) {
        out.push({ seq: Number(r.rowid), similarity: 1 - r.distance });
      }
    }
    return out.sort((a, b) => b.similarity - a.similarity).slice(0, k);
  }

  vecRowCount(): number {
    if (!this.hasVecTable()) return 0;
    return (this.db.prepare(`SELECT count(*) AS n FROM ${VEC_TABLE}`).get() as { n: number }).n;
  }

  /** Live rows whose vector does not carry the signature (pending (re)indexing). */
  needsReindex(signature: string | null, now = new Date()): number {
    return (
      this.db
        .prepare('SELECT count(*) AS n FROM memories WHERE embedding_sig IS NOT ? AND (expires_at IS NULL OR expires_at > ?)')
        .get(signature, now.toISOString()) as { n: number }
    ).n;
  }

  pendingEmbedding(signature: string, limit: number, now = new Date()): StoredMemory[] {
    return (
      this.db
        .prepare('SELECT * FROM memories WHERE embedding_sig IS NOT ? AND (expires_at IS NULL OR expires_at > ?) ORDER BY seq LIMIT ?')
        .all(signature, now.toISOString(), limit) as Row[]
    ).map(toEntry);
  }

  /** Rows embedded with the signature but not yet in the external store. */
  pendingExternal(signature: string, limit: number, now = new Date()): StoredMemory[] {
    return (
      this.db
        .prepare(
          `SELECT * FROM memories WHERE embedding_sig = ? AND external_sig IS NOT ? AND (expires_at IS NULL OR expires_at > ?)
           ORDER BY seq LIMIT ?`,
        )
        .all(signature, signature, now.toISOString(), limit) as Row[]
    ).map(toEntry);
  }

  setExternalSig(seqs: readonly number[], signature: string | null): void {
    if (seqs.length === 0) return;
    this.db.prepare('UPDATE memories SET external_sig = ? WHERE seq IN (SELECT value FROM json_each(?))').run(signature, JSON.stringify(seqs));
  }

  clearExternalSigs(): void {
    this.db.prepare('UPDATE memories SET external_sig = NULL WHERE external_sig IS NOT NULL').run();
  }

  /** Forces every row to be re-embedded (POST /api/memory/reindex with full). */
  clearEmbeddingSigs(): void {
    this.db.prepare('UPDATE memories SET embedding_sig = NULL, external_sig = NULL').run();
  }
}
