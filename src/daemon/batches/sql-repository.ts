import type { SqlDriver, SqlValue } from '../store/driver.js';
import { valuesList } from '../store/driver.js';
import type { BatchListOptions, BatchRepository, FileListOptions, LineResult } from './port.js';
import { nowSeconds, TIMESTAMP_OF, UNFINISHED_STATUSES, type BatchRow, type BatchStatus, type FileRow, type NativeState, type Page } from './store.js';

/**
 * The batch tables over the driver seam: one SQL text for SQLite (migrations/0017, 0025) and PostgreSQL
 * (migrations/pg/0030). Lists page in upload order: SQLite's implicit `rowid`, which the PostgreSQL tables
 * carry as an identity column of the same name, so the cursor SQL is the same on both.
 */

const FILE_COLS = 'id, key_id, purpose, filename, bytes, lines, created_at, expires_at';
const BATCH_COLUMNS = [
  'id', 'key_id', 'endpoint', 'input_file_id', 'completion_window', 'mode', 'status', 'metadata', 'total', 'completed', 'failed',
  'output_file_id', 'error_file_id', 'errors', 'native', 'created_at', 'in_progress_at', 'expires_at', 'finalizing_at', 'completed_at',
  'failed_at', 'expired_at', 'cancelling_at', 'cancelled_at',
] as const satisfies readonly (keyof BatchRow)[];
const BATCH_COLS = BATCH_COLUMNS.join(', ');
const KNOWN_COLUMNS: ReadonlySet<string> = new Set(BATCH_COLUMNS);
const UNFINISHED_IN = `status IN (${UNFINISHED_STATUSES.map((s) => `'${s}'`).join(', ')})`;

/** Rows per multi-row insert of lines (4 values each: well under both dialects' placeholder limits). */
const LINE_CHUNK = 500;
/** Result lines read per page when writing a batch's output. */
const RESULT_PAGE = 1000;

/** WHERE clauses and their arguments, collected in order. */
function conditions() {
  const where: string[] = [];
  const args: SqlValue[] = [];
  const add = (clause: string, ...values: SqlValue[]) => {
    where.push(clause);
    args.push(...values);
  };
  const sql = () => (where.length ? `WHERE ${where.join(' AND ')}` : '');
  return { args, add, sql };
}

function page<T>(rows: T[], limit: number): Page<T> {
  return { data: rows.slice(0, limit), has_more: rows.length > limit };
}

/** Column names of a batch update, checked against the table's (they are written into the SQL text). */
function columnsOf(set: Record<string, unknown>): string[] {
  const cols = Object.keys(set);
  for (const c of cols) if (!KNOWN_COLUMNS.has(c)) throw new Error(`unknown batch column ${c}`);
  return cols;
}

export class SqlBatchRepository implements BatchRepository {
  constructor(private readonly driver: SqlDriver) {}

  // ---- files

  async addFile(row: FileRow): Promise<void> {
    await this.driver.run(`INSERT INTO batch_files (${FILE_COLS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, [
      row.id,
      row.key_id,
      row.purpose,
      row.filename,
      row.bytes,
      row.lines,
      row.created_at,
      row.expires_at ?? null,
    ]);
  }

  async storedBytes(keyId: string | null): Promise<number> {
    const rows = await this.driver.query<{ n: number }>(
      "SELECT COALESCE(SUM(bytes), 0) AS n FROM batch_files WHERE key_id IS NOT DISTINCT FROM ? AND purpose <> 'batch_output'",
      [keyId],
    );
    return Number(rows[0]?.n ?? 0);
  }

  async expiredFiles(nowSec: number): Promise<string[]> {
    const rows = await this.driver.query<{ id: string }>(
      `SELECT id FROM batch_files WHERE expires_at IS NOT NULL AND expires_at <= ?
         AND id NOT IN (SELECT input_file_id FROM batches WHERE ${UNFINISHED_IN})`,
      [nowSec],
    );
    return rows.map((r) => r.id);
  }

  async file(id: string): Promise<FileRow | undefined> {
    return (await this.driver.query<FileRow>(`SELECT ${FILE_COLS} FROM batch_files WHERE id = ?`, [id]))[0];
  }

  async removeFile(id: string): Promise<boolean> {
    return (await this.driver.run('DELETE FROM batch_files WHERE id = ?', [id])).changes > 0;
  }

  async listFiles(opts: FileListOptions): Promise<Page<FileRow>> {
    const { args, add, sql } = conditions();
    if (opts.keyId !== undefined) add('key_id = ?', opts.keyId);
    if (opts.purpose) add('purpose = ?', opts.purpose);
    const asc = opts.order === 'asc';
    if (opts.after) add(`rowid ${asc ? '>' : '<'} COALESCE((SELECT rowid FROM batch_files WHERE id = ?), ${asc ? '0' : 'rowid + 1'})`, opts.after);
    const rows = await this.driver.query<FileRow>(`SELECT ${FILE_COLS} FROM batch_files ${sql()} ORDER BY rowid ${asc ? 'ASC' : 'DESC'} LIMIT ?`, [
      ...args,
      opts.limit + 1,
    ]);
    return page(rows, opts.limit);
  }

  async fileInUse(fileId: string): Promise<boolean> {
    return (await this.driver.query(`SELECT 1 AS x FROM batches WHERE input_file_id = ? AND ${UNFINISHED_IN} LIMIT 1`, [fileId])).length > 0;
  }

  // ---- batches

  async addBatch(row: BatchRow): Promise<void> {
    await this.driver.run(
      `INSERT INTO batches (${BATCH_COLS}) VALUES (${BATCH_COLUMNS.map(() => '?').join(', ')})`,
      BATCH_COLUMNS.map((c) => row[c] as SqlValue),
    );
  }

  async batch(id: string): Promise<BatchRow | undefined> {
    return (await this.driver.query<BatchRow>(`SELECT ${BATCH_COLS} FROM batches WHERE id = ?`, [id]))[0];
  }

  async listBatches(opts: BatchListOptions): Promise<Page<BatchRow>> {
    const { args, add, sql } = conditions();
    if (opts.keyId !== undefined) add('key_id = ?', opts.keyId);
    if (opts.statuses?.length) add(`status IN (${opts.statuses.map(() => '?').join(', ')})`, ...opts.statuses);
    if (opts.after) add('rowid < COALESCE((SELECT rowid FROM batches WHERE id = ?), rowid + 1)', opts.after);
    const rows = await this.driver.query<BatchRow>(`SELECT ${BATCH_COLS} FROM batches ${sql()} ORDER BY rowid DESC LIMIT ?`, [...args, opts.limit + 1]);
    return page(rows, opts.limit);
  }

  unfinished(): Promise<BatchRow[]> {
    return this.driver.query<BatchRow>(`SELECT ${BATCH_COLS} FROM batches WHERE ${UNFINISHED_IN} ORDER BY rowid`);
  }

  async setStatus(id: string, status: BatchStatus, extra: Partial<BatchRow> = {}): Promise<void> {
    const set: Record<string, unknown> = { status, ...extra };
    const stamp = TIMESTAMP_OF[status];
    if (stamp && set[stamp] === undefined) set[stamp] = nowSeconds();
    const cols = columnsOf(set);
    await this.driver.run(`UPDATE batches SET ${cols.map((c) => `${c} = ?`).join(', ')} WHERE id = ?`, [...cols.map((c) => set[c] as SqlValue), id]);
  }

  async setNative(id: string, native: NativeState): Promise<void> {
    await this.driver.run('UPDATE batches SET native = ? WHERE id = ?', [JSON.stringify(native), id]);
  }

  async setCounts(id: string, completed: number, failed: number): Promise<void> {
    await this.driver.run('UPDATE batches SET completed = ?, failed = ? WHERE id = ?', [completed, failed, id]);
  }

  removeBatch(id: string): Promise<void> {
    return this.driver.transaction(async (tx) => {
      await tx.run('DELETE FROM batch_lines WHERE batch_id = ?', [id]);
      await tx.run('DELETE FROM batches WHERE id = ?', [id]);
    });
  }

  // ---- progress

  finishLine(batchId: string, line: LineResult): Promise<void> {
    return this.driver.transaction(async (tx) => {
      const inserted = await tx.run('INSERT INTO batch_lines (batch_id, line, ok, result) VALUES (?, ?, ?, ?) ON CONFLICT (batch_id, line) DO NOTHING', [
        batchId,
        line.line,
        line.ok ? 1 : 0,
        line.result,
      ]);
      const column = line.ok ? 'completed' : 'failed';
      if (inserted.changes > 0) await tx.run(`UPDATE batches SET ${column} = ${column} + 1 WHERE id = ?`, [batchId]);
    });
  }

  recordLines(batchId: string, lines: readonly LineResult[], replace: boolean): Promise<void> {
    return this.driver.transaction(async (tx) => {
      if (replace) await tx.run('DELETE FROM batch_lines WHERE batch_id = ?', [batchId]);
      for (let i = 0; i < lines.length; i += LINE_CHUNK) {
        const chunk = lines.slice(i, i + LINE_CHUNK);
        await tx.run(
          `INSERT INTO batch_lines (batch_id, line, ok, result) VALUES ${valuesList(chunk.length, 4)} ON CONFLICT (batch_id, line) DO NOTHING`,
          chunk.flatMap((l) => [batchId, l.line, l.ok ? 1 : 0, l.result]),
        );
      }
      await tx.run(
        `UPDATE batches SET completed = (SELECT COUNT(*) FROM batch_lines WHERE batch_id = ? AND ok = 1),
           failed = (SELECT COUNT(*) FROM batch_lines WHERE batch_id = ? AND ok = 0) WHERE id = ?`,
        [batchId, batchId, batchId],
      );
    });
  }

  async doneLines(batchId: string): Promise<Set<number>> {
    const rows = await this.driver.query<{ line: number }>('SELECT line FROM batch_lines WHERE batch_id = ?', [batchId]);
    return new Set(rows.map((r) => r.line));
  }

  async *results(batchId: string, ok: boolean): AsyncIterable<string> {
    let after = -1;
    for (;;) {
      const rows = await this.driver.query<{ line: number; result: string }>(
        'SELECT line, result FROM batch_lines WHERE batch_id = ? AND ok = ? AND line > ? ORDER BY line LIMIT ?',
        [batchId, ok ? 1 : 0, after, RESULT_PAGE],
      );
      for (const r of rows) yield r.result;
      if (rows.length < RESULT_PAGE) return;
      after = rows.at(-1)!.line;
    }
  }
}
