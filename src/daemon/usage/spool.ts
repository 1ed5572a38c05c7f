import { closeSync, existsSync, fsyncSync, openSync, readFileSync, statSync, truncateSync, writeSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import type { StoredUsage } from './port.js';

/** One spooled batch: the rows and their uids, in the order they were recorded. */
export interface SpooledBatch {
  rows: StoredUsage[];
}

/**
 * The on-disk queue of usage rows that could not reach the shared database (cluster mode, PostgreSQL
 * unreachable): an append-only file in the state folder, one JSON line per batch, fsynced after each append.
 * It is read whole when the database answers again (the batches replayed in order, then the file emptied)
 * and at start (a daemon stopped or killed with rows queued). A line cut by a crash mid-append is dropped
 * when the file is opened (its rows were never acknowledged as queued).
 *
 * Every operation is called from one serialized chain (SpoolingUsageWriter), never concurrently, except
 * `appendSync` at shutdown.
 */
export class UsageSpool {
  private handle?: FileHandle;
  /** Rows in the file (counted at open and on each append; 0 after `clear`). */
  rows = 0;
  /** Lines dropped at open because a crash cut them. */
  readonly tornLines: number;

  constructor(readonly file: string) {
    this.tornLines = this.repairTail();
    if (existsSync(file)) this.rows = this.readSync().reduce((n, b) => n + b.rows.length, 0);
  }

  /** True when batches wait in the file. */
  get pending(): boolean {
    return this.rows > 0;
  }

  /** Appends batches as lines and fsyncs the file (data only) before resolving. */
  async append(batches: readonly SpooledBatch[]): Promise<void> {
    if (batches.length === 0) return;
    this.handle ??= await open(this.file, 'a', 0o600);
    await this.handle.appendFile(lines(batches));
    await this.handle.datasync();
    for (const b of batches) this.rows += b.rows.length;
  }

  /** Shutdown: appends and fsyncs synchronously (the process is about to exit). */
  appendSync(batches: readonly SpooledBatch[]): void {
    if (batches.length === 0) return;
    const fd = openSync(this.file, 'a', 0o600);
    try {
      writeSync(fd, lines(batches));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    for (const b of batches) this.rows += b.rows.length;
  }

  /** Every batch in the file, oldest first. */
  async read(): Promise<SpooledBatch[]> {
    return this.readSync();
  }

  /** Empties the file once its batches are stored (fsynced, so an emptied queue is not replayed after a crash). */
  async clear(): Promise<void> {
    this.handle ??= await open(this.file, 'a', 0o600);
    await this.handle.truncate(0);
    await this.handle.datasync();
    this.rows = 0;
  }

  async close(): Promise<void> {
    const h = this.handle;
    this.handle = undefined;
    await h?.close();
  }

  private readSync(): SpooledBatch[] {
    if (!existsSync(this.file)) return [];
    const out: SpooledBatch[] = [];
    for (const line of readFileSync(this.file, 'utf8').split('\n')) {
      if (line.length === 0) continue;
      try {
        const parsed = JSON.parse(line) as SpooledBatch;
        if (Array.isArray(parsed.rows)) out.push(parsed);
      } catch {
        // not a batch (repairTail removes a cut last line; nothing else writes the file)
      }
    }
    return out;
  }

  /** Cuts a last line a crash left without its newline; returns how many lines were cut (0 or 1). */
  private repairTail(): number {
    if (!existsSync(this.file)) return 0;
    const size = statSync(this.file).size;
    if (size === 0) return 0;
    const text = readFileSync(this.file);
    if (text[size - 1] === 0x0a) return 0;
    const keep = text.lastIndexOf(0x0a) + 1;
    truncateSync(this.file, keep);
    return 1;
  }
}

function lines(batches: readonly SpooledBatch[]): string {
  return batches.map((b) => `${JSON.stringify(b)}\n`).join('');
}
