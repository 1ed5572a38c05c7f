import { randomUUID } from 'node:crypto';
import type { Db } from '../store/db.js';
import type { SqlDriver, SqlExecutor, SqlValue } from '../store/driver.js';
import { LocalVecIndex } from './local-vec-index.js';
import type { Scope } from './types.js';

/** The vec0 table of the embedded vector store. Its width is the active signature's dimension count. */
export const VEC_TABLE = 'memories_vec';

/** A vector partition: the API key id, '' for the global pool. */
export function partitionOf(scope: Scope): string {
  return scope ?? '';
}

/** Statements that take a list of values bind at most this many at once (well under both dialects' limits). */
export const CHUNK = 500;

/** `(?, ?, ?)` for n values. */
export function inList(n: number): string {
  return `(${Array.from({ length: n }, () => '?').join(', ')})`;
}

/** Splits values into chunks of at most CHUNK. */
export function chunks<T>(values: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < values.length; i += CHUNK) out.push(values.slice(i, i + CHUNK));
  return out;
}

export const META_GET = 'SELECT value FROM memory_meta WHERE key = ?';
export const META_UPSERT =
  'INSERT INTO memory_meta (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at';
export const SIGNATURE_KEY = 'embedding_signature';

/** A vector's float32 bytes (what sqlite-vec reads, and what a BYTEA column keeps). */
export function vectorBytes(v: Float32Array): Buffer {
  return Buffer.from(v.buffer, v.byteOffset, v.byteLength);
}

export function bytesVector(b: Buffer): Float32Array {
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/** The width a signature (`source:model:dimensions`) names. */
export function dimensionsOf(signature: string): number {
  return Number(signature.slice(signature.lastIndexOf(':') + 1)) || 0;
}

async function storedSignature(db: SqlExecutor): Promise<string | undefined> {
  return (await db.query<{ value: string }>(META_GET, [SIGNATURE_KEY]))[0]?.value;
}

/** Drops every row's embedding signature and records the new one (inside a reset's transaction). */
async function recordReset(tx: SqlExecutor, signature: string): Promise<void> {
  await tx.run('UPDATE memories SET embedding_sig = NULL WHERE embedding_sig IS NOT NULL');
  await tx.run(META_UPSERT, [SIGNATURE_KEY, signature, new Date().toISOString()]);
}

/** Where a dialect keeps vectors and searches them (the vector half of `MemoryRepository`). */
export interface VectorStorage {
  readonly backend: string;
  adoptSignature(signature: string, dimensions: number): Promise<boolean>;
  hasIndex(): Promise<boolean>;
  upsert(seq: number, scope: Scope, vector: Float32Array, signature: string): Promise<void>;
  markEmbedded(seq: number, signature: string): Promise<void>;
  /** Deletes the rows and their vectors. */
  deleteRows(seqs: readonly number[]): Promise<void>;
  vector(seq: number): Promise<Float32Array | undefined>;
  knn(vector: Float32Array, scopes: readonly Scope[], k: number): Promise<Array<{ seq: number; similarity: number }>>;
  count(): Promise<number>;
  sync(): Promise<void>;
}

/**
 * One machine: the vec0 table in the router database file itself (rowid = memories.seq, BigInt as
 * sqlite-vec requires), written in the same transactions as the rows. Storage is the index: nothing to sync.
 */
export class SqliteVecStorage implements VectorStorage {
  readonly backend = 'sqlite-vec (vec0) in the router database';
  constructor(private readonly db: SqlDriver) {}

  async hasIndex(): Promise<boolean> {
    return (await this.db.query("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", [VEC_TABLE])).length > 0;
  }

  async adoptSignature(signature: string, dimensions: number): Promise<boolean> {
    if ((await storedSignature(this.db)) === signature && (await this.hasIndex())) return false;
    // The dropped table held every vector: no row keeps one, whatever signature it recorded (a row embedded
    // under this same signature before an A -> B -> A switch must be embedded again too).
    await this.db.transaction(async (tx) => {
      await tx.run(`DROP TABLE IF EXISTS ${VEC_TABLE}`);
      await tx.run(`CREATE VIRTUAL TABLE ${VEC_TABLE} USING vec0(scope text partition key, embedding float[${Math.trunc(dimensions)}] distance_metric=cosine)`);
      await recordReset(tx, signature);
    });
    return true;
  }

  async upsert(seq: number, scope: Scope, vector: Float32Array, signature: string): Promise<void> {
    if (!(await this.hasIndex())) return;
    await this.db.transaction(async (tx) => {
      await tx.run(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`, [BigInt(seq)]);
      await tx.run(`INSERT INTO ${VEC_TABLE} (rowid, scope, embedding) VALUES (?, ?, ?)`, [BigInt(seq), partitionOf(scope), vectorBytes(vector)]);
      await tx.run('UPDATE memories SET embedding_sig = ? WHERE seq = ?', [signature, seq]);
    });
  }

  async markEmbedded(seq: number, signature: string): Promise<void> {
    const vec = await this.hasIndex();
    await this.db.transaction(async (tx) => {
      if (vec) await tx.run(`DELETE FROM ${VEC_TABLE} WHERE rowid = ?`, [BigInt(seq)]);
      await tx.run('UPDATE memories SET embedding_sig = ? WHERE seq = ?', [signature, seq]);
    });
  }

  async deleteRows(seqs: readonly number[]): Promise<void> {
    if (seqs.length === 0) return;
    const vec = await this.hasIndex();
    await this.db.transaction(async (tx) => {
      for (const part of chunks(seqs)) {
        await tx.run(`DELETE FROM memories WHERE seq IN ${inList(part.length)}`, part);
        if (vec) await tx.run(`DELETE FROM ${VEC_TABLE} WHERE rowid IN ${inList(part.length)}`, part.map((s) => BigInt(s)));
      }
    });
  }

  async vector(seq: number): Promise<Float32Array | undefined> {
    if (!(await this.hasIndex())) return undefined;
    const r = (await this.db.query<{ embedding: Buffer }>(`SELECT embedding FROM ${VEC_TABLE} WHERE rowid = ?`, [BigInt(seq)]))[0];
    return r ? bytesVector(r.embedding) : undefined;
  }

  async knn(vector: Float32Array, scopes: readonly Scope[], k: number): Promise<Array<{ seq: number; similarity: number }>> {
    if (!(await this.hasIndex())) return [];
    const out: Array<{ seq: number; similarity: number }> = [];
    for (const scope of new Set(scopes.map(partitionOf))) {
      const rows = await this.db.query<{ rowid: number | bigint; distance: number }>(
        `SELECT rowid, distance FROM ${VEC_TABLE} WHERE embedding MATCH ? AND k = ? AND scope = ? ORDER BY distance`,
        [vectorBytes(vector), k, scope],
      );
      for (const r of rows) out.push({ seq: Number(r.rowid), similarity: 1 - r.distance });
    }
    return out.sort((a, b) => b.similarity - a.similarity).slice(0, k);
  }

  async count(): Promise<number> {
    if (!(await this.hasIndex())) return 0;
    return (await this.db.query<{ n: number }>(`SELECT count(*) AS n FROM ${VEC_TABLE}`))[0]!.n;
  }

  async sync(): Promise<void> {}
}

interface VectorRow {
  seq: number;
  scope: string;
  embedding: Buffer;
  rev: string;
}

/**
 * Cluster mode (PostgreSQL, no pgvector): vectors are rows of `memory_vectors` (float32 bytes in a BYTEA,
 * with the signature they were made under and a revision id per write), shared by every node; each node
 * searches its own `LocalVecIndex`, built from those rows at start and brought up to date by `sync()` when
 * another node announces a change (topic 'memory'). A node's own writes reach its index at once.
 */
export class SharedVectorStorage implements VectorStorage {
  readonly backend = 'vectors as PostgreSQL rows, searched in this node\'s sqlite-vec index';
  readonly index = new LocalVecIndex();
  private syncing?: Promise<void>;
  private again = false;

  constructor(private readonly db: SqlDriver) {}

  async hasIndex(): Promise<boolean> {
    return this.index.signature !== null && this.index.signature === (await storedSignature(this.db));
  }

  async adoptSignature(signature: string, dimensions: number): Promise<boolean> {
    if ((await storedSignature(this.db)) === signature) {
      await this.sync();
      return false;
    }
    await this.db.transaction(async (tx) => {
      await tx.run('DELETE FROM memory_vectors');
      await recordReset(tx, signature);
    });
    this.index.reset(signature, dimensions);
    return true;
  }

  async upsert(seq: number, scope: Scope, vector: Float32Array, signature: string): Promise<void> {
    const rev = randomUUID();
    const part = partitionOf(scope);
    await this.db.transaction(async (tx) => {
      // Only for a row that still exists (a delete may have won the race): the vector goes with its row.
      await tx.run(
        `INSERT INTO memory_vectors (seq, scope, signature, embedding, rev) SELECT seq, ?, ?, ?, ? FROM memories WHERE seq = ?
         ON CONFLICT (seq) DO UPDATE SET scope = excluded.scope, signature = excluded.signature, embedding = excluded.embedding, rev = excluded.rev`,
        [part, signature, vectorBytes(vector), rev, seq],
      );
      await tx.run('UPDATE memories SET embedding_sig = ? WHERE seq = ?', [signature, seq]);
    });
    if (this.index.signature === signature) this.index.put(seq, part, vector, rev);
  }

  async markEmbedded(seq: number, signature: string): Promise<void> {
    await this.db.transaction(async (tx) => {
      await tx.run('DELETE FROM memory_vectors WHERE seq = ?', [seq]);
      await tx.run('UPDATE memories SET embedding_sig = ? WHERE seq = ?', [signature, seq]);
    });
    this.index.remove(seq);
  }

  async deleteRows(seqs: readonly number[]): Promise<void> {
    if (seqs.length === 0) return;
    // memory_vectors rows go with their memory (ON DELETE CASCADE).
    await this.db.transaction(async (tx) => {
      for (const part of chunks(seqs)) await tx.run(`DELETE FROM memories WHERE seq IN ${inList(part.length)}`, part);
    });
    for (const seq of seqs) this.index.remove(seq);
  }

  async vector(seq: number): Promise<Float32Array | undefined> {
    const r = (await this.db.query<{ embedding: Buffer }>('SELECT embedding FROM memory_vectors WHERE seq = ?', [seq]))[0];
    return r ? bytesVector(r.embedding) : undefined;
  }

  knn(vector: Float32Array, scopes: readonly Scope[], k: number): Promise<Array<{ seq: number; similarity: number }>> {
    return Promise.resolve(this.index.knn(vector, scopes.map(partitionOf), k));
  }

  count(): Promise<number> {
    return Promise.resolve(this.index.size);
  }

  /** Single flight: a request during a sync makes it go round once more. */
  sync(): Promise<void> {
    if (this.syncing) {
      this.again = true;
      return this.syncing;
    }
    const run = (async () => {
      do {
        this.again = false;
        await this.syncOnce();
      } while (this.again);
    })().finally(() => {
      this.syncing = undefined;
    });
    this.syncing = run;
    return run;
  }

  /**
   * Compares the revisions storage holds with the index's and fetches only the vectors that differ; a new
   * signature (another node switched models) rebuilds the index from nothing.
   */
  private async syncOnce(): Promise<void> {
    const signature = await storedSignature(this.db);
    if (!signature) {
      this.index.clear();
      return;
    }
    if (this.index.signature !== signature) this.index.reset(signature, dimensionsOf(signature));
    const stored = await this.db.query<{ seq: number; rev: string }>('SELECT seq, rev FROM memory_vectors WHERE signature = ?', [signature]);
    const wanted = new Map(stored.map((r) => [r.seq, r.rev]));
    const gone = [...this.index.revisions.keys()].filter((seq) => !wanted.has(seq));
    const changed = stored.filter((r) => this.index.revisions.get(r.seq) !== r.rev).map((r) => r.seq);
    this.index.batch(() => {
      for (const seq of gone) this.index.remove(seq);
    });
    for (const part of chunks(changed)) {
      const rows = await this.db.query<VectorRow>(
        `SELECT seq, scope, embedding, rev FROM memory_vectors WHERE signature = ? AND seq IN ${inList(part.length)}`,
        [signature, ...part] as SqlValue[],
      );
      if (this.index.signature !== signature) return; // reset meanwhile by this node: the next sync starts over
      this.index.batch(() => {
        for (const r of rows) this.index.put(r.seq, r.scope, bytesVector(r.embedding), r.rev);
      });
    }
  }
}

/**
 * `router cluster migrate`: the vectors of a single machine's file (its vec0 table) become shared
 * `memory_vectors` rows, so the entries the copy marks as embedded keep their vectors and no node has to
 * embed them again. Run after the rows were copied (same seq numbers); vectors of missing rows are left out.
 * Returns how many were copied.
 */
export async function copyFileVectors(file: Db, pg: SqlExecutor): Promise<number> {
  const signature = (file.prepare(META_GET).get(SIGNATURE_KEY) as { value: string } | undefined)?.value;
  if (!signature || !file.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(VEC_TABLE)) return 0;
  const rows = new Set((file.prepare('SELECT seq FROM memories').all() as Array<{ seq: number }>).map((r) => r.seq));
  let batch: SqlValue[][] = [];
  let copied = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await pg.run(`INSERT INTO memory_vectors (seq, scope, signature, embedding, rev) VALUES ${batch.map(() => '(?, ?, ?, ?, ?)').join(', ')}`, batch.flat());
    copied += batch.length;
    batch = [];
  };
  for (const r of file.prepare(`SELECT rowid, scope, embedding FROM ${VEC_TABLE}`).iterate() as Iterable<{ rowid: number | bigint; scope: string; embedding: Buffer }>) {
    const seq = Number(r.rowid);
    if (!rows.has(seq)) continue;
    batch.push([seq, r.scope, signature, r.embedding, randomUUID()]);
    if (batch.length >= 200) await flush();
  }
  await flush();
  return copied;
}
