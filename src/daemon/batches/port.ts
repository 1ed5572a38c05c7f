import type { BatchRow, BatchStatus, FileRow, NativeState, Page } from './store.js';

/**
 * The batches module's storage ports (docs/storage.md, docs/batch.md "Cluster mode"):
 * - `BatchRepository`: file metadata, batches and per-line progress (tables batch_files, batches,
 *   batch_lines), over SQLite and PostgreSQL by `SqlBatchRepository`;
 * - `FileContents`: the bytes of stored files: the state folder's `files/` on one machine
 *   (`DiskFileContents`), chunked rows of the shared database in a cluster (`SqlFileContents`), so any node
 *   serves any file and resumes any batch;
 * - `BatchLeases`: which node runs an unfinished batch. One machine: this process (`LocalLeases`); a
 *   cluster: a lease per batch in the shared database, renewed while it runs and taken over by another node
 *   once it lapses (`SqlBatchLeases`).
 * Batches are not configuration: nothing on the request path reads them, so there is no in-memory snapshot.
 */

/** One finished line: its 0-based input line, whether it goes to the output file, and its result line. */
export interface LineResult {
  line: number;
  ok: boolean;
  result: string;
}

export interface FileListOptions {
  keyId?: string;
  purpose?: string;
  after?: string;
  limit: number;
  order: 'asc' | 'desc';
}

export interface BatchListOptions {
  keyId?: string;
  statuses?: readonly string[];
  after?: string;
  limit: number;
}

export interface BatchRepository {
  // ---- files (metadata; the bytes are FileContents')
  addFile(row: FileRow): Promise<void>;
  /** Bytes of uploaded files (not router's outputs) one owner stores (null: the dashboard and CLI's pool). */
  storedBytes(keyId: string | null): Promise<number>;
  /** Files past their expiry, except the input of a batch still running. */
  expiredFiles(nowSec: number): Promise<string[]>;
  file(id: string): Promise<FileRow | undefined>;
  removeFile(id: string): Promise<boolean>;
  /** Files newest first (or oldest first) in upload order, after the cursor `after`. */
  listFiles(opts: FileListOptions): Promise<Page<FileRow>>;
  /** True when an unfinished batch reads this file. */
  fileInUse(fileId: string): Promise<boolean>;

  // ---- batches
  addBatch(row: BatchRow): Promise<void>;
  batch(id: string): Promise<BatchRow | undefined>;
  /** Batches newest first after the cursor; filtered by owner and statuses when given. */
  listBatches(opts: BatchListOptions): Promise<Page<BatchRow>>;
  /** Batches not in a final status, oldest first. */
  unfinished(): Promise<BatchRow[]>;
  /** Moves a batch to `status`, stamping its time; `extra` columns are set in the same statement. */
  setStatus(id: string, status: BatchStatus, extra?: Partial<BatchRow>): Promise<void>;
  setNative(id: string, native: NativeState): Promise<void>;
  /** Counts reported by a provider batch (native mode). */
  setCounts(id: string, completed: number, failed: number): Promise<void>;
  /** Deletes a batch and its recorded lines. */
  removeBatch(id: string): Promise<void>;

  // ---- progress (the resume's source of truth)
  /** Records one finished line and its count in one transaction; a line recorded already changes nothing. */
  finishLine(batchId: string, line: LineResult): Promise<void>;
  /**
   * Records many lines in one transaction and sets the counts from the recorded lines; `replace` first
   * forgets the lines recorded so far (native mode rewrites them all from the provider's results).
   */
  recordLines(batchId: string, lines: readonly LineResult[], replace: boolean): Promise<void>;
  /** Lines of a batch that already have a result. */
  doneLines(batchId: string): Promise<Set<number>>;
  /** Result lines in input order, one kind at a time (output file: ok; error file: not ok), read page by page. */
  results(batchId: string, ok: boolean): AsyncIterable<string>;
}

/** Where a new file's bytes go while it is received; nothing is visible before `finish`. */
export interface ContentWriter {
  /** Appends bytes; the promise settles once they are stored (the caller waits before sending more). */
  write(chunk: Buffer): Promise<void>;
  /** Stores what is left and makes the content readable under its id. */
  finish(): Promise<void>;
  /** Drops what was written (a refused or broken upload). */
  abort(): Promise<void>;
}

export interface FileContents {
  /** `shared`: every node of a cluster reads the same contents (database rows); false: this machine's disk. */
  readonly shared: boolean;
  writer(id: string): ContentWriter;
  /** The content as a stream of chunks, read as the client reads. */
  stream(id: string): ReadableStream<Uint8Array>;
  /** The whole content as text (batch input files, read once per run). */
  text(id: string): Promise<string>;
  remove(id: string): Promise<void>;
  /** Deletes what uploads killed midway left behind, once older than `beforeSec` (unix seconds). */
  sweepOrphans(beforeSec: number): Promise<number>;
}

export interface BatchLeases {
  /** False on one machine: this process runs every batch, nothing to renew or take over. */
  readonly shared: boolean;
  /** How long a lease lasts without renewal, ms. */
  readonly ttlMs: number;
  /** Takes a batch for this node: true when it had no lease, its lease lapsed, or it is this node's already. */
  claim(batchId: string): Promise<boolean>;
  /** Extends this node's leases on `ids`; returns those it still holds (another node may have taken one). */
  renew(ids: readonly string[]): Promise<Set<string>>;
  /** Gives leases up (a graceful stop, or the batch ended): another node may take them at once. */
  release(ids: readonly string[]): Promise<void>;
  /** Unfinished batches no live node holds: never leased, or their lease lapsed (a node died). */
  lapsed(): Promise<string[]>;
}
