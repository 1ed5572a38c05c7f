import type { SqlDriver, SqlValue } from '../store/driver.js';
import { ftsQuery, tsQuery } from './fts.js';
import type { ListFilter, ListPage, MemoryFields, MemoryRepository, NewMemory, StoredMemory } from './port.js';
import type { KeySettings } from './settings.js';
import type { MemoryType, Scope } from './types.js';
import { chunks, inList, META_GET, META_UPSERT, SharedVectorStorage, SqliteVecStorage, type VectorStorage } from './vector-storage.js';

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

/** The row columns (PostgreSQL's table has its tsvector besides: never read). */
const COLUMNS =
  'm.seq, m.id, m.api_key_id, m.session_id, m.type, m.key, m.content, m.metadata, m.expires_at, m.tokens, m.hit_count, m.last_hit_at, m.embedding_sig, m.external_sig, m.archived, m.created_at, m.updated_at';
const SELECT = `SELECT ${COLUMNS} FROM memories m`;
const LIVE = '(m.expires_at IS NULL OR m.expires_at > ?)';

interface KeyRow {
  api_key_id: string;
  inject: number;
  extract: number;
  inject_max_tokens: number;
  inject_limit: number;
  strategy: KeySettings['strategy'];
  scope: KeySettings['scope'];
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

function escapeLike(s: string): string {
  return s.replace(/[\\%_]/g, (c) => `\\${c}`);
}

/** `(m.api_key_id IS NULL OR m.api_key_id IN (...))` for a list of scopes. */
function scopeClause(scopes: readonly Scope[]): { sql: string; args: string[] } {
  const keys = [...new Set(scopes.filter((s): s is string => s !== null))];
  const parts: string[] = [];
  if (scopes.includes(null)) parts.push('m.api_key_id IS NULL');
  if (keys.length) parts.push(`m.api_key_id IN ${inList(keys.length)}`);
  return { sql: parts.length ? `(${parts.join(' OR ')})` : '1 = 0', args: keys };
}

/**
 * The memory port over the driver seam. Rows, meta and settings are one SQL text for both dialects; the
 * keyword index and the vectors differ by nature: FTS5 (bm25, key weight 2) and sqlite-vec in the file on
 * SQLite; a generated tsvector column with a GIN index (ts_rank, key weight A = 1, content B = 0.5) and
 * `SharedVectorStorage` on PostgreSQL.
 */
export class SqlMemoryRepository implements MemoryRepository {
  readonly keywordBackend: 'FTS5' | 'tsvector';
  private readonly vectors: VectorStorage;

  constructor(private readonly db: SqlDriver) {
    this.keywordBackend = db.dialect === 'sqlite' ? 'FTS5' : 'tsvector';
    this.vectors = db.dialect === 'sqlite' ? new SqliteVecStorage(db) : new SharedVectorStorage(db);
  }

  get vectorBackend(): string {
    return this.vectors.backend;
  }

  private async rows(sql: string, args: readonly SqlValue[]): Promise<StoredMemory[]> {
    return (await this.db.query<Row>(sql, args)).map(toEntry);
  }

  async insert(input: NewMemory, now: Date): Promise<void> {
    const ts = now.toISOString();
    await this.db.run(
      `INSERT INTO memories (id, api_key_id, session_id, type, key, content, metadata, expires_at, tokens, archived, created_at, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      [input.id, input.apiKeyId, input.sessionId, input.type, input.key, input.content, JSON.stringify(input.metadata), input.expiresAt, input.tokens, input.archived ? 1 : 0, ts, ts],
    );
  }

  async getAny(id: string): Promise<StoredMemory | undefined> {
    return (await this.rows(`${SELECT} WHERE m.id = ?`, [id]))[0];
  }

  async get(id: string, now: Date): Promise<StoredMemory | undefined> {
    return (await this.rows(`${SELECT} WHERE m.id = ? AND ${LIVE}`, [id, now.toISOString()]))[0];
  }

  private async liveIn<K extends 'seq' | 'id'>(column: K, values: ReadonlyArray<K extends 'seq' ? number : string>, now: Date): Promise<StoredMemory[]> {
    const out: StoredMemory[] = [];
    for (const part of chunks(values)) {
      out.push(...(await this.rows(`${SELECT} WHERE m.${column} IN ${inList(part.length)} AND m.archived = 0 AND ${LIVE}`, [...part, now.toISOString()])));
    }
    return out;
  }

  async bySeqs(seqs: readonly number[], now: Date): Promise<Map<number, StoredMemory>> {
    return new Map((await this.liveIn('seq', seqs, now)).map((r) => [r.seq, r]));
  }

  async byIds(ids: readonly string[], now: Date): Promise<Map<string, StoredMemory>> {
    return new Map((await this.liveIn('id', ids, now)).map((r) => [r.id, r]));
  }

  async update(id: string, f: MemoryFields, textChanged: boolean, now: Date): Promise<boolean> {
    const drop = textChanged ? 1 : 0;
    const { changes } = await this.db.run(
      `UPDATE memories SET type = ?, key = ?, content = ?, metadata = ?, tokens = ?, updated_at = ?,
         embedding_sig = CASE WHEN ? = 1 THEN NULL ELSE embedding_sig END,
         external_sig = CASE WHEN ? = 1 THEN NULL ELSE external_sig END
       WHERE id = ?`,
      [f.type, f.key, f.content, JSON.stringify(f.metadata), f.tokens, now.toISOString(), drop, drop, id],
    );
    return changes > 0;
  }

  deleteMany(seqs: readonly number[]): Promise<void> {
    return this.vectors.deleteRows(seqs);
  }

  expired(now: Date): Promise<StoredMemory[]> {
    return this.rows(`${SELECT} WHERE m.expires_at IS NOT NULL AND m.expires_at <= ?`, [now.toISOString()]);
  }

  private where(f: Omit<ListFilter, 'limit' | 'offset'>, now: Date): { sql: string; args: SqlValue[] } {
    const parts = [LIVE];
    const args: SqlValue[] = [now.toISOString()];
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
      // lower() on both sides: SQLite's LIKE ignores ASCII case, PostgreSQL's does not.
      parts.push("(lower(m.key) LIKE lower(?) ESCAPE '\\' OR lower(m.content) LIKE lower(?) ESCAPE '\\')");
      const like = `%${escapeLike(f.q)}%`;
      args.push(like, like);
    }
    return { sql: parts.join(' AND '), args };
  }

  async list(f: ListFilter, now: Date): Promise<ListPage> {
    const w = this.where(f, now);
    const agg = (
      await this.db.query<{ total: number; tokens: number; hit: number }>(
        `SELECT count(*) AS total, coalesce(sum(m.tokens), 0) AS tokens, coalesce(sum(CASE WHEN m.hit_count > 0 THEN 1 ELSE 0 END), 0) AS hit
         FROM memories m WHERE ${w.sql}`,
        w.args,
      )
    )[0]!;
    const data = await this.rows(`${SELECT} WHERE ${w.sql} ORDER BY m.created_at DESC, m.seq DESC LIMIT ? OFFSET ?`, [...w.args, f.limit, f.offset]);
    return { data, total: agg.total, tokensUsed: agg.tokens, hit: agg.hit };
  }

  async touchHits(seqs: readonly number[], now: Date): Promise<void> {
    for (const part of chunks(seqs)) {
      await this.db.run(`UPDATE memories SET hit_count = hit_count + 1, last_hit_at = ? WHERE seq IN ${inList(part.length)}`, [now.toISOString(), ...part]);
    }
  }

  async findByKey(scope: Scope, key: string, now: Date): Promise<StoredMemory | undefined> {
    return (
      await this.rows(`${SELECT} WHERE m.api_key_id IS NOT DISTINCT FROM ? AND lower(m.key) = lower(?) AND m.archived = 0 AND ${LIVE} ORDER BY m.seq DESC LIMIT 1`, [
        scope,
        key,
        now.toISOString(),
      ])
    )[0];
  }

  episodicBefore(scope: Scope, before: Date, sessionId: string | undefined, now: Date): Promise<StoredMemory[]> {
    const args: SqlValue[] = [scope, before.toISOString(), now.toISOString()];
    let extra = '';
    if (sessionId !== undefined) {
      extra = ' AND m.session_id = ?';
      args.push(sessionId);
    }
    return this.rows(
      `${SELECT} WHERE m.api_key_id IS NOT DISTINCT FROM ? AND m.type = 'episodic' AND m.archived = 0 AND m.created_at < ? AND ${LIVE}${extra} ORDER BY m.seq LIMIT 2000`,
      args,
    );
  }

  async episodicScopes(): Promise<Scope[]> {
    return (await this.db.query<{ k: string | null }>("SELECT DISTINCT api_key_id AS k FROM memories WHERE type = 'episodic' AND archived = 0")).map((r) => r.k);
  }

  async archive(seqs: readonly number[], now: Date): Promise<void> {
    for (const part of chunks(seqs)) {
      await this.db.run(`UPDATE memories SET archived = 1, updated_at = ? WHERE seq IN ${inList(part.length)}`, [now.toISOString(), ...part]);
    }
  }

  // ---- keyword search

  async ftsSearch(text: string, scopes: readonly Scope[], limit: number, now: Date): Promise<Array<{ seq: number; score: number }>> {
    const sc = scopeClause(scopes);
    const filter = `${sc.sql} AND m.archived = 0 AND ${LIVE}`;
    if (this.db.dialect === 'sqlite') {
      const match = ftsQuery(text);
      if (!match) return [];
      const rows = await this.db.query<{ seq: number; rank: number }>(
        `SELECT m.seq AS seq, bm25(memories_fts, 2.0, 1.0) AS rank FROM memories_fts JOIN memories m ON m.seq = memories_fts.rowid
         WHERE memories_fts MATCH ? AND ${filter} ORDER BY rank LIMIT ?`,
        [match, ...sc.args, now.toISOString(), limit],
      );
      // bm25() is lower-is-better and negative; the score reported is its negation (higher is better).
      return rows.map((r) => ({ seq: r.seq, score: -r.rank }));
    }
    const query = tsQuery(text);
    if (!query) return [];
    // Weights are {D, C, B, A}: the key (A) counts twice the content (B), as in the FTS5 ranking.
    return this.db.query<{ seq: number; score: number }>(
      `SELECT m.seq AS seq, ts_rank('{0, 0, 0.5, 1}'::float4[], m.fts, q.q, 1) AS score FROM memories m, to_tsquery('english', ?) AS q(q)
       WHERE m.fts @@ q.q AND ${filter} ORDER BY score DESC, m.seq LIMIT ?`,
      [query, ...sc.args, now.toISOString(), limit],
    );
  }

  async ftsAvailable(): Promise<boolean> {
    try {
      if (this.db.dialect === 'sqlite') await this.db.query("SELECT 1 FROM memories_fts WHERE memories_fts MATCH '\"x\"' LIMIT 1");
      else await this.db.query("SELECT 1 FROM memories WHERE fts @@ to_tsquery('english', 'x') LIMIT 1");
      return true;
    } catch {
      return false;
    }
  }

  // ---- meta

  async meta(key: string): Promise<string | undefined> {
    return (await this.db.query<{ value: string }>(META_GET, [key]))[0]?.value;
  }

  async setMeta(key: string, value: string | null, now: Date): Promise<void> {
    if (value === null) await this.db.run('DELETE FROM memory_meta WHERE key = ?', [key]);
    else await this.db.run(META_UPSERT, [key, value, now.toISOString()]);
  }

  // ---- vectors

  adoptSignature(signature: string, dimensions: number): Promise<boolean> {
    return this.vectors.adoptSignature(signature, dimensions);
  }

  hasVectorIndex(): Promise<boolean> {
    return this.vectors.hasIndex();
  }

  upsertVector(seq: number, scope: Scope, vector: Float32Array, signature: string): Promise<void> {
    return this.vectors.upsert(seq, scope, vector, signature);
  }

  markEmbedded(seq: number, signature: string): Promise<void> {
    return this.vectors.markEmbedded(seq, signature);
  }

  vector(seq: number): Promise<Float32Array | undefined> {
    return this.vectors.vector(seq);
  }

  knn(vector: Float32Array, scopes: readonly Scope[], k: number): Promise<Array<{ seq: number; similarity: number }>> {
    return this.vectors.knn(vector, scopes, k);
  }

  vecRowCount(): Promise<number> {
    return this.vectors.count();
  }

  syncVectors(): Promise<void> {
    return this.vectors.sync();
  }

  async needsReindex(signature: string | null, now: Date): Promise<number> {
    return (await this.db.query<{ n: number }>(`SELECT count(*) AS n FROM memories m WHERE m.embedding_sig IS DISTINCT FROM ? AND ${LIVE}`, [signature, now.toISOString()]))[0]!.n;
  }

  pendingEmbedding(signature: string, limit: number, now: Date): Promise<StoredMemory[]> {
    return this.rows(`${SELECT} WHERE m.embedding_sig IS DISTINCT FROM ? AND ${LIVE} ORDER BY m.seq LIMIT ?`, [signature, now.toISOString(), limit]);
  }

  pendingExternal(signature: string, limit: number, now: Date): Promise<StoredMemory[]> {
    return this.rows(`${SELECT} WHERE m.embedding_sig = ? AND m.external_sig IS DISTINCT FROM ? AND ${LIVE} ORDER BY m.seq LIMIT ?`, [
      signature,
      signature,
      now.toISOString(),
      limit,
    ]);
  }

  async setExternalSig(seqs: readonly number[], signature: string | null): Promise<void> {
    for (const part of chunks(seqs)) await this.db.run(`UPDATE memories SET external_sig = ? WHERE seq IN ${inList(part.length)}`, [signature, ...part]);
  }

  async clearExternalSigs(): Promise<void> {
    await this.db.run('UPDATE memories SET external_sig = NULL WHERE external_sig IS NOT NULL');
  }

  async clearEmbeddingSigs(): Promise<void> {
    await this.db.run('UPDATE memories SET embedding_sig = NULL, external_sig = NULL');
  }

  // ---- settings

  async loadSettings(): Promise<string | undefined> {
    return (await this.db.query<{ value: string }>('SELECT value FROM memory_settings WHERE id = 1'))[0]?.value;
  }

  async saveSettings(doc: string, now: Date): Promise<void> {
    await this.db.run(
      'INSERT INTO memory_settings (id, value, updated_at) VALUES (1, ?, ?) ON CONFLICT (id) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at',
      [doc, now.toISOString()],
    );
  }

  async loadKeySettings(): Promise<Array<{ apiKeyId: string; settings: KeySettings }>> {
    return (await this.db.query<KeyRow>('SELECT api_key_id, inject, extract, inject_max_tokens, inject_limit, strategy, scope FROM memory_key_settings')).map((r) => ({
      apiKeyId: r.api_key_id,
      settings: {
        inject: r.inject === 1,
        extract: r.extract === 1,
        injectMaxTokens: r.inject_max_tokens,
        injectLimit: r.inject_limit,
        strategy: r.strategy,
        scope: r.scope,
      },
    }));
  }

  async saveKeySettings(apiKeyId: string, s: KeySettings, now: Date): Promise<void> {
    await this.db.run(
      `INSERT INTO memory_key_settings (api_key_id, inject, extract, inject_max_tokens, inject_limit, strategy, scope, updated_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (api_key_id) DO UPDATE SET inject = excluded.inject, extract = excluded.extract,
         inject_max_tokens = excluded.inject_max_tokens, inject_limit = excluded.inject_limit,
         strategy = excluded.strategy, scope = excluded.scope, updated_at = excluded.updated_at`,
      [apiKeyId, s.inject ? 1 : 0, s.extract ? 1 : 0, s.injectMaxTokens, s.injectLimit, s.strategy, s.scope, now.toISOString()],
    );
  }

  close(): void {
    if (this.vectors instanceof SharedVectorStorage) this.vectors.index.close();
  }
}
