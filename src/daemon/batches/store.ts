import { randomBytes } from 'node:crypto';
import type { Db } from '../store/db.js';

/**
 * The batch tables' one owner (migrations/0017_batches.sql): file metadata, batches and the per-line
 * progress. Every other batch module calls these methods; none writes SQL of its own.
 */

/** A stored file's metadata (the content is a file under the state folder's `files/`). */
export interface FileRow {
  id: string;
  key_id: string | null;
  purpose: string;
  filename: string;
  bytes: number;
  lines: number;
  created_at: number;
  /** Unix seconds after which the file is deleted (OpenAI's `expires_after`); null: never. */
  expires_at?: number | null;
}

export type BatchStatus = 'validating' | 'in_progress' | 'finalizing' | 'completed' | 'failed' | 'expired' | 'cancelling' | 'cancelled';

/** Statuses a batch never leaves. */
export const FINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'expired', 'cancelled']);

/** A batch's native-mode state: the provider batch it was submitted as. */
export interface NativeState {
  provider: 'openai' | 'anthropic';
  /** The router model every line named (`openai/gpt-4o-mini`). */
  model: string;
  /** The account holding the provider batch (saved when the submission is sent to it; batches/native.ts). */
  connectionId?: string;
  remoteId?: string;
  remoteInputFileId?: string;
  /** Set once the provider was asked to cancel. */
  cancelRequested?: boolean;
  /** Set when that cancel was router's completion window closing: its unfinished lines are `batch_expired`. */
  expired?: boolean;
  /**
   * Unix seconds when router began submitting the provider batch, saved before the provider hears of it.
   * Set without `remoteId` after a restart, it means the last run may have been killed between the
   * provider accepting the batch and router saving its id: the provider's batches are searched first.
   */
  submitting?: number;
}

export interface BatchRow {
  id: string;
  key_id: string | null;
  endpoint: string;
  input_file_id: string;
  completion_window: string;
  mode: 'local' | 'native';
  status: BatchStatus;
  metadata: string | null;
  total: number;
  completed: number;
  failed: number;
  output_file_id: string | null;
  error_file_id: string | null;
  errors: string | null;
  native: string | null;
  created_at: number;
  in_progress_at: number | null;
  expires_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
}

/** A page of a list in OpenAI's cursor shape. */
export interface Page<T> {
  data: T[];
  has_more: boolean;
}

/** Unix seconds now. */
export function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

/** A new id with OpenAI's prefix style (`file-...`, `batch_...`, `batch_req_...`). */
export function newId(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

const TIMESTAMP_OF: Partial<Record<BatchStatus, keyof BatchRow>> = {
  in_progress: 'in_progress_at',
  finalizing: 'finalizing_at',
  completed: 'completed_at',
  failed: 'failed_at',
  expired: 'expired_at',
  cancelling: 'cancelling_at',
  cancelled: 'cancelled_at',
};

/** WHERE clauses and their arguments, collected in order. */
function conditions() {
  const where: string[] = [];
  const args: unknown[] = [];
  const add = (clause: string, ...values: unknown[]) => {
    where.push(clause);
    args.push(...values);
  };
  return { where, args, add };
}

export class BatchStore {
  constructor(private readonly db: Db) {}

  // ---- files

  addFile(row: FileRow): void {
    this.db
      .prepare('INSERT INTO batch_files (id, key_id, purpose, filename, bytes, lines, created_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)')
      .run(row.id, row.key_id, row.purpose, row.filename, row.bytes, row.lines, row.created_at, row.expires_at ?? null);
  }

  /** Bytes of uploaded files (not router's outputs) one owner stores (NULL: the dashboard and CLI's pool). */
  storedBytes(keyId: string | null): number {
    const row = this.db
      .prepare("SELECT COALESCE(SUM(bytes), 0) AS n FROM batch_files WHERE key_id IS ? AND purpose <> 'batch_output'")
      .get(keyId) as { n: number };
    return row.n;
  }

  /**
   * Files past their expiry, except the input of a batch still running (it is deleted once that batch
   * ends and the next sweep runs).
   */
  expiredFiles(nowSec: number): string[] {
    const rows = this.db
      .prepare(
        `SELECT id FROM batch_files WHERE expires_at IS NOT NULL AND expires_at <= ?
           AND id NOT IN (SELECT input_file_id FROM batches WHERE status IN ('validating', 'in_progress', 'finalizing', 'cancelling'))`,
      )
      .all(nowSec) as { id: string }[];
    return rows.map((r) => r.id);
  }

  file(id: string): FileRow | undefined {
    return this.db.prepare('SELECT * FROM batch_files WHERE id = ?').get(id) as FileRow | undefined;
  }

  removeFile(id: string): boolean {
    return this.db.prepare('DELETE FROM batch_files WHERE id = ?').run(id).changes > 0;
  }

  /** Files newest first (or oldest first), after the cursor `after`, of one owner when `keyId` is given. */
  listFiles(opts: { keyId?: string; purpose?: string; after?: string; limit: number; order: 'asc' | 'desc' }): Page<FileRow> {
    const { where, args, add } = conditions();
    if (opts.keyId !== undefined) add('key_id = ?', opts.keyId);
    if (opts.purpose) add('purpose = ?', opts.purpose);
    const cmp = opts.order === 'asc' ? '>' : '<';
    if (opts.after) add(`rowid ${cmp} COALESCE((SELECT rowid FROM batch_files WHERE id = ?), ${opts.order === 'asc' ? 0 : 'rowid + 1'})`, opts.after);
    const sql = `SELECT * FROM batch_files ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY rowid ${opts.order.toUpperCase()} LIMIT ?`;
    const rows = this.db.prepare(sql).all(...args, opts.limit + 1) as FileRow[];
    return { data: rows.slice(0, opts.limit), has_more: rows.length > opts.limit };
  }

  // ---- batches

  addBatch(row: BatchRow): void {
    const cols = Object.keys(row);
    this.db.prepare(`INSERT INTO batches (${cols.join(', ')}) VALUES (${cols.map(() => '?').join(', ')})`).run(...Object.values(row));
  }

  batch(id: string): BatchRow | undefined {
    return this.db.prepare('SELECT * FROM batches WHERE id = ?').get(id) as BatchRow | undefined;
  }

  /** Batches newest first after the cursor; filtered by owner and statuses when given. */
  listBatches(opts: { keyId?: string; statuses?: readonly string[]; after?: string; limit: number }): Page<BatchRow> {
    const { where, args, add } = conditions();
    if (opts.keyId !== undefined) add('key_id = ?', opts.keyId);
    if (opts.statuses?.length) add(`status IN (${opts.statuses.map(() => '?').join(', ')})`, ...opts.statuses);
    if (opts.after) add('rowid < COALESCE((SELECT rowid FROM batches WHERE id = ?), rowid + 1)', opts.after);
    const sql = `SELECT * FROM batches ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY rowid DESC LIMIT ?`;
    const rows = this.db.prepare(sql).all(...args, opts.limit + 1) as BatchRow[];
    return { data: rows.slice(0, opts.limit), has_more: rows.length > opts.limit };
  }

  /** Batches a restart must pick up again. */
  unfinished(): BatchRow[] {
    return this.db.prepare("SELECT * FROM batches WHERE status IN ('validating', 'in_progress', 'finalizing', 'cancelling') ORDER BY rowid").all() as BatchRow[];
  }

  /** Moves a batch to `status`, stamping its time; `extra` columns are set in the same statement. */
  setStatus(id: string, status: BatchStatus, extra: Partial<BatchRow> = {}): void {
    const set: Record<string, unknown> = { status, ...extra };
    const stamp = TIMESTAMP_OF[status];
    if (stamp && set[stamp] === undefined) set[stamp] = nowSeconds();
    const cols = Object.keys(set);
    this.db.prepare(`UPDATE batches SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`).run(...Object.values(set), id);
  }

  setNative(id: string, native: NativeState): void {
    this.db.prepare('UPDATE batches SET native = ? WHERE id = ?').run(JSON.stringify(native), id);
  }

  /** Counts reported by a provider batch (native mode). */
  setCounts(id: string, completed: number, failed: number): void {
    this.db.prepare('UPDATE batches SET completed = ?, failed = ? WHERE id = ?').run(completed, failed, id);
  }

  removeBatch(id: string): void {
    this.db.transaction(() => {
      this.db.prepare('DELETE FROM batch_lines WHERE batch_id = ?').run(id);
      this.db.prepare('DELETE FROM batches WHERE id = ?').run(id);
    })();
  }

  // ---- progress

  /** Records one finished line and its count in one transaction (the restart's source of truth). */
  finishLine(batchId: string, line: number, ok: boolean, result: string): void {
    // A line that ends after shutdown closed the database is sent again at the next start.
    if (!this.db.open) return;
    this.db.transaction(() => {
      const inserted = this.db.prepare('INSERT OR IGNORE INTO batch_lines (batch_id, line, ok, result) VALUES (?, ?, ?, ?)').run(batchId, line, ok ? 1 : 0, result);
      const column = ok ? 'completed' : 'failed';
      if (inserted.changes > 0) this.db.prepare(`UPDATE batches SET ${column} = ${column} + 1 WHERE id = ?`).run(batchId);
    })();
  }

  /** Runs `fn` in one transaction. */
  transaction(fn: () => void): void {
    this.db.transaction(fn)();
  }

  /** Forgets a batch's recorded lines (native mode rewrites them all from the provider's results). */
  clearLines(batchId: string): void {
    this.db.prepare('DELETE FROM batch_lines WHERE batch_id = ?').run(batchId);
  }

  /** Lines of a batch that already have a result. */
  doneLines(batchId: string): Set<number> {
    const rows = this.db.prepare('SELECT line FROM batch_lines WHERE batch_id = ?').pluck().all(batchId) as number[];
    return new Set(rows);
  }

  /** Result lines in input order, one kind at a time (output file: ok; error file: not ok). */
  results(batchId: string, ok: boolean): IterableIterator<string> {
    return this.db.prepare('SELECT result FROM batch_lines WHERE batch_id = ? AND ok = ? ORDER BY line').pluck().iterate(batchId, ok ? 1 : 0) as IterableIterator<string>;
  }
}
