import type { Statement } from 'better-sqlite3';
import { closeDatabase, openDatabase, type Db } from '../store/db.js';

/** The vec0 table of a node-local index (its own in-memory database: never the shared one). */
const TABLE = 'local_vec';

/**
 * A node's own sqlite-vec index over vectors stored elsewhere (PostgreSQL rows in cluster mode): an
 * in-memory SQLite database holding one vec0 table of the signature's width, partitioned by scope like the
 * embedded store. It remembers each vector's revision so a sync fetches only what changed. Searches are
 * local and synchronous, as fast as on one machine; the index is rebuilt from the rows at start.
 */
export class LocalVecIndex {
  private readonly db: Db = openDatabase(':memory:');
  /** The signature whose vectors the index holds; null = no index. */
  signature: string | null = null;
  private dimensions = 0;
  private statements?: { del: Statement; ins: Statement; knn: Statement };
  /** seq -> revision of the vector held. */
  readonly revisions = new Map<number, string>();

  /** Empties the index and sets it up for a signature's width. */
  reset(signature: string, dimensions: number): void {
    this.db.exec(`DROP TABLE IF EXISTS ${TABLE}`);
    this.db.exec(`CREATE VIRTUAL TABLE ${TABLE} USING vec0(scope text partition key, embedding float[${Math.trunc(dimensions)}] distance_metric=cosine)`);
    this.revisions.clear();
    this.signature = signature;
    this.dimensions = Math.trunc(dimensions);
    this.statements = {
      del: this.db.prepare(`DELETE FROM ${TABLE} WHERE rowid = ?`),
      ins: this.db.prepare(`INSERT INTO ${TABLE} (rowid, scope, embedding) VALUES (?, ?, ?)`),
      knn: this.db.prepare(`SELECT rowid, distance FROM ${TABLE} WHERE embedding MATCH ? AND k = ? AND scope = ? ORDER BY distance`),
    };
  }

  /** Runs many puts and removes in one transaction (a rebuild or a sync). */
  batch(fn: () => void): void {
    this.db.transaction(fn)();
  }

  /** Drops the index (no signature recorded any more). */
  clear(): void {
    this.db.exec(`DROP TABLE IF EXISTS ${TABLE}`);
    this.revisions.clear();
    this.signature = null;
    this.dimensions = 0;
    this.statements = undefined;
  }

  /** Adds or replaces a vector; one of another width (a signature change racing a sync) is ignored. */
  put(seq: number, scope: string, vector: Float32Array, revision: string): void {
    const st = this.statements;
    if (!st || vector.length !== this.dimensions) return;
    const rowid = BigInt(seq);
    if (this.revisions.has(seq)) st.del.run(rowid);
    st.ins.run(rowid, scope, vector);
    this.revisions.set(seq, revision);
  }

  remove(seq: number): void {
    if (!this.statements || !this.revisions.delete(seq)) return;
    this.statements.del.run(BigInt(seq));
  }

  /** K nearest neighbours in the partitions, by cosine similarity, best first. */
  knn(vector: Float32Array, partitions: readonly string[], k: number): Array<{ seq: number; similarity: number }> {
    const st = this.statements;
    if (!st || vector.length !== this.dimensions || this.revisions.size === 0) return [];
    const stmt = st.knn;
    const out: Array<{ seq: number; similarity: number }> = [];
    for (const scope of new Set(partitions)) {
      for (const r of stmt.all(vector, k, scope) as Array<{ rowid: number | bigint; distance: number }>) out.push({ seq: Number(r.rowid), similarity: 1 - r.distance });
    }
    return out.sort((a, b) => b.similarity - a.similarity).slice(0, k);
  }

  get size(): number {
    return this.revisions.size;
  }

  close(): void {
    closeDatabase(this.db);
  }
}
