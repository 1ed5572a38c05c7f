import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { MessageChannel, receiveMessageOnPort, Worker, type MessagePort } from 'node:worker_threads';
import type { Logger } from '../logger.js';
import type { Db } from '../store/db.js';
import type { UsageRecord } from './record.js';
import type { RowWriter } from './row-writer.js';
import {
  encodeRows,
  FIELDS,
  insertSql,
  LATENCY_FIELD,
  SIGNAL_CLOSED,
  SIGNAL_FAILED,
  SIGNAL_RUNNING,
  TRACE_FIELD,
  TS_FIELD,
  type FromWriter,
  type ToWriter,
  type WriterInit,
} from './writer-protocol.js';

export interface UsageWriterOptions {
  db: Db;
  log: Logger;
  /**
   * The compiled worker (writer-worker.js next to this file by default). Null, a missing file (in-process
   * tests run the TypeScript sources) or an in-memory database: rows are written on this thread.
   */
  workerUrl?: URL | null;
  /** Longest wait at close() for the worker to write what it was sent. */
  closeTimeoutMs?: number;
  /** busy_timeout of the worker's connection. */
  busyTimeoutMs?: number;
}

interface Batch {
  seq: number;
  data: unknown[];
  rows: number;
  resolve: (written: number) => void;
}

const DEFAULT_CLOSE_TIMEOUT_MS = 10_000;

/**
 * Writes usage rows: in a worker thread with its own connection when the compiled worker is available (the
 * daemon), otherwise, or after the worker failed, in one transaction on this thread. Batches sent to the
 * worker are kept until it acknowledges them, so a worker that dies loses nothing: they are written here
 * (unless the worker had committed them already, which is checked). close() is synchronous: it blocks
 * until the worker has written everything and closed its connection, so the caller can close the
 * database right after.
 */
export class UsageWriter implements RowWriter {
  /** Rows written (acknowledged), since construction. */
  written = 0;
  private readonly workerUrl?: URL;
  private worker?: Worker;
  private port?: MessagePort;
  private signal?: Int32Array;
  private workerFailed: boolean;
  private closed = false;
  private nextSeq = 1;
  /** Batches sent to the worker and not acknowledged yet, in sending order. */
  private readonly unacked = new Map<number, Batch>();
  private unackedRows = 0;
  private readonly insert: { run: (...args: unknown[]) => unknown };
  private readonly writeMany: (data: unknown[]) => void;
  private readonly exists: { get: (...args: unknown[]) => unknown };

  constructor(private readonly opts: UsageWriterOptions) {
    const url = opts.workerUrl === undefined ? new URL('./writer-worker.js', import.meta.url) : opts.workerUrl;
    this.workerFailed = !url || url.protocol !== 'file:' || !existsSync(fileURLToPath(url)) || opts.db.memory || !opts.db.name;
    this.workerUrl = url ?? undefined;
    const db = opts.db;
    this.insert = db.prepare<unknown[]>(insertSql(1));
    this.writeMany = db.transaction((data: unknown[]) => {
      for (let i = 0; i < data.length; i += FIELDS) this.insert.run(data.slice(i, i + FIELDS));
    });
    this.exists = db.prepare<unknown[]>('SELECT 1 FROM usage_log WHERE trace_id = ? AND ts = ? AND latency_ms = ? LIMIT 1');
  }

  /** True while rows go to the worker (starting it on first use); false once on this thread for good. */
  get viaWorker(): boolean {
    return this.ensureWorker() !== undefined;
  }

  /** Where rows are written now. */
  get mode(): 'worker' | 'main' {
    return this.worker ? 'worker' : this.workerFailed || this.closed ? 'main' : 'worker';
  }

  /** Rows sent to the worker and not yet acknowledged. */
  get backlog(): number {
    return this.unackedRows;
  }

  /**
   * Writes rows: on this thread now (the promise is already settled when this returns), or in the worker
   * in batches of at most `chunk` rows per transaction. Resolves with the rows written once they, and
   * every batch sent before them, are committed; an empty call just waits for what was sent before.
   * `sync`: the worker commits with synchronous = FULL (the WAL is fsynced: the rows survive a power cut
   * too, not only a crash of the process).
   */
  write(rows: readonly UsageRecord[], chunk = 500, sync = false): Promise<number> {
    if (this.closed) return Promise.resolve(0);
    if (rows.length === 0) return this.worker && this.unacked.size ? this.send(this.worker, [], 0, sync) : Promise.resolve(0);
    const worker = this.ensureWorker();
    if (!worker) return Promise.resolve(this.writeHere(encodeRows(rows), rows.length));
    const parts: Array<Promise<number>> = [];
    for (let i = 0; i < rows.length; i += chunk) {
      const part = rows.slice(i, i + chunk);
      parts.push(this.send(worker, encodeRows(part), part.length, sync));
    }
    return parts.length === 1 ? parts[0]! : Promise.all(parts).then((ns) => ns.reduce((a, b) => a + b, 0));
  }

  /**
   * Shutdown: writes `rows` and waits (blocking this thread, at most closeTimeoutMs) until the worker has
   * written everything it was sent and closed its connection. Afterwards the database may be closed.
   */
  close(rows: readonly UsageRecord[] = []): void {
    if (this.closed) return;
    const worker = this.worker;
    if (!worker) {
      if (rows.length) this.writeHere(encodeRows(rows), rows.length);
      this.closed = true;
      return;
    }
    if (rows.length) void this.send(worker, encodeRows(rows), rows.length);
    this.closed = true;
    const msg: ToWriter = { t: 'close' };
    worker.postMessage(msg);
    const deadline = Date.now() + (this.opts.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS);
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0 || Atomics.load(this.signal!, 0) !== SIGNAL_RUNNING) break;
      Atomics.wait(this.signal!, 0, SIGNAL_RUNNING, left);
    }
    this.drainAcks();
    const state = Atomics.load(this.signal!, 0);
    if (state === SIGNAL_CLOSED) {
      this.stopWorker();
      return;
    }
    if (state === SIGNAL_FAILED) {
      // The worker gave up: what it did not acknowledge is written here (the database is still open).
      this.fallBack('usage writer worker failed during shutdown');
      return;
    }
    // Still busy (a lock held elsewhere for that long): its batches may yet commit, so they are not
    // written again here; they are reported instead.
    this.opts.log.error('usage writer worker did not finish in time at shutdown: rows may be lost', {
      rows: this.unackedRows,
      timeoutMs: this.opts.closeTimeoutMs ?? DEFAULT_CLOSE_TIMEOUT_MS,
    });
    for (const b of this.unacked.values()) b.resolve(0);
    this.unacked.clear();
    this.unackedRows = 0;
    this.stopWorker();
  }

  private send(worker: Worker, data: unknown[], rows: number, sync = false): Promise<number> {
    const seq = this.nextSeq++;
    return new Promise<number>((resolve) => {
      this.unacked.set(seq, { seq, data, rows, resolve });
      this.unackedRows += rows;
      const msg: ToWriter = { t: 'rows', seq, data, sync };
      worker.postMessage(msg);
    });
  }

  /** Writes encoded rows in one transaction on this thread; returns the rows written (0 after an error). */
  private writeHere(data: unknown[], rows: number): number {
    if (!this.opts.db.open) return 0;
    try {
      this.writeMany(data);
      this.written += rows;
      return rows;
    } catch (err) {
      this.opts.log.error('usage rows could not be written', { rows, error: err instanceof Error ? err.message : String(err) });
      return 0;
    }
  }

  private ensureWorker(): Worker | undefined {
    if (this.worker || this.workerFailed || this.closed) return this.worker;
    try {
      const { port1, port2 } = new MessageChannel();
      const signal = new Int32Array(new SharedArrayBuffer(4));
      const init: WriterInit = { file: this.opts.db.name, port: port2, signal, busyTimeoutMs: this.opts.busyTimeoutMs ?? 5_000 };
      const worker = new Worker(this.workerUrl!, { workerData: init, transferList: [port2] });
      worker.unref();
      port1.unref();
      port1.on('message', (msg: FromWriter) => this.onMessage(msg));
      worker.on('error', (err) => this.fail(err));
      worker.on('exit', (code) => {
        if (!this.closed) this.fail(new Error(`usage writer worker exited (code ${code})`));
      });
      this.worker = worker;
      this.port = port1;
      this.signal = signal;
    } catch (err) {
      this.workerFailed = true;
      this.opts.log.warn('usage writer worker could not start: rows are written on the main thread', {
        error: err instanceof Error ? err.message : String(err),
      });
    }
    return this.worker;
  }

  private onMessage(msg: FromWriter): void {
    if (msg.t === 'fatal') {
      this.fail(new Error(msg.error));
      return;
    }
    const batch = this.unacked.get(msg.seq);
    if (!batch) return;
    this.unacked.delete(msg.seq);
    this.unackedRows -= batch.rows;
    this.written += msg.written;
    if (msg.error) this.opts.log.error('usage rows could not be written', { rows: batch.rows, error: msg.error });
    batch.resolve(msg.written);
  }

  /** Acknowledgements already sent but not delivered (the event loop may not have run): read them now. */
  private drainAcks(): void {
    if (!this.port) return;
    for (let m = receiveMessageOnPort(this.port); m; m = receiveMessageOnPort(this.port)) this.onMessage(m.message as FromWriter);
  }

  private fail(err: Error): void {
    if (!this.worker) return;
    this.fallBack('usage writer worker failed: writing usage rows on the main thread', err);
  }

  /** From now on rows are written here; batches the worker did not acknowledge are written here first. */
  private fallBack(msg: string, err?: Error): void {
    this.drainAcks();
    this.workerFailed = true;
    this.stopWorker();
    const pending = [...this.unacked.values()];
    this.unacked.clear();
    this.unackedRows = 0;
    this.opts.log.error(msg, { error: err?.message, unacknowledgedRows: pending.reduce((n, b) => n + b.rows, 0) });
    for (const b of pending) b.resolve(this.alreadyStored(b.data) ? this.countStored(b.rows) : this.writeHere(b.data, b.rows));
  }

  /** The worker commits a batch in one transaction: its first row being there means all of it is. */
  private alreadyStored(data: unknown[]): boolean {
    if (data.length === 0 || !this.opts.db.open) return false;
    try {
      return this.exists.get(data[TRACE_FIELD], data[TS_FIELD], data[LATENCY_FIELD]) !== undefined;
    } catch {
      return false;
    }
  }

  private countStored(rows: number): number {
    this.written += rows;
    return rows;
  }

  private stopWorker(): void {
    const worker = this.worker;
    this.worker = undefined;
    this.port?.close();
    this.port = undefined;
    if (worker) {
      worker.removeAllListeners('exit');
      worker.removeAllListeners('error');
      // An error after this point (the thread is going away) must not become an uncaught 'error' event.
      worker.on('error', () => {});
      void worker.terminate();
    }
  }
}
