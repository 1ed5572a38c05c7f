import { randomBytes } from 'node:crypto';
import type { Logger } from '../logger.js';
import { DatabaseUnavailableError } from '../store/driver.js';
import type { StoredUsage, UsageRepository } from './port.js';
import type { UsageRecord } from './record.js';
import { noop } from './record-fields.js';
import type { RowWriter } from './row-writer.js';
import { UsageSpool, type SpooledBatch } from './spool.js';

export interface SpoolingWriterOptions {
  /** The usage port on the shared database. */
  repo: UsageRepository;
  /** The on-disk queue (`usage-queue.jsonl` in the state folder). */
  file: string;
  log: Logger;
  /** This node's id: the prefix of its rows' uids. */
  nodeId: string;
  /** First wait before storing queued rows again after the database failed (doubles up to 5 s; default 500 ms). */
  retryMs?: number;
}

const MAX_RETRY_MS = 5_000;

/** The on-disk queue's name in the state folder. */
export const USAGE_QUEUE_FILE = 'usage-queue.jsonl';

/**
 * Writes usage rows to the shared PostgreSQL database (cluster mode), off the request path: UsageService
 * hands over batches from its timer, and each is stored with multi-row INSERTs, one batch at a time, in
 * order. When the database cannot be reached (DatabaseUnavailableError: down, restarting, network), the
 * batch goes to the on-disk queue instead (spool.ts: appended and fsynced here, in the background), and so
 * does every later batch while the queue holds rows, which keeps their order. The queue is stored again,
 * in order, as soon as the database answers (retried from 500 ms up to every 5 s), and at the next start
 * if the daemon stopped with rows in it. Each row carries a uid (node id, a per-process part, a sequence):
 * a batch stored twice (its insert committed but the answer was lost, or replayed after a crash) keeps one
 * copy of each row.
 */
export class SpoolingUsageWriter implements RowWriter {
  written = 0;
  readonly viaWorker = true;
  readonly mode = 'postgres' as const;
  backlog = 0;
  private readonly spool: UsageSpool;
  private readonly prefix: string;
  private seq = 0;
  /** Serializes stores, spooling and replays: one at a time, in order. */
  private chain: Promise<unknown> = Promise.resolve();
  /** Batches handed over and neither stored nor spooled yet. */
  private readonly inFlight = new Set<SpooledBatch>();
  /** Batches of the queue file already stored by this process (the file only grows until it is emptied). */
  private replayed = 0;
  private retryTimer?: NodeJS.Timeout;
  private retryMs: number;
  private down = false;
  private closed = false;

  constructor(private readonly opts: SpoolingWriterOptions) {
    this.spool = new UsageSpool(opts.file);
    this.prefix = `${opts.nodeId}:${randomBytes(6).toString('base64url')}:`;
    this.retryMs = opts.retryMs ?? 500;
    if (this.spool.tornLines > 0) opts.log.warn('usage queue on disk: dropped a batch cut by a crash while it was being queued', { file: opts.file });
    if (this.spool.pending) {
      opts.log.info('usage rows queued on disk by the last run: storing them in the shared database', { rows: this.spool.rows });
      this.scheduleReplay(0);
    }
  }

  /** Rows waiting in the on-disk queue. */
  get spooled(): number {
    return this.spool.rows;
  }

  write(rows: readonly UsageRecord[], chunk = 500): Promise<number> {
    if (this.closed) return Promise.resolve(0);
    if (rows.length === 0) return this.enqueue(async () => 0);
    const parts: Array<Promise<number>> = [];
    for (let i = 0; i < rows.length; i += chunk) {
      const batch = this.batch(rows.slice(i, i + chunk));
      this.inFlight.add(batch);
      this.backlog += batch.rows.length;
      parts.push(this.enqueue(() => this.store(batch)));
    }
    return Promise.all(parts).then((ns) => ns.reduce((a, b) => a + b, 0));
  }

  /**
   * Shutdown (synchronous): every batch not yet stored or queued, and `rows`, are appended to the queue file
   * and fsynced. A batch whose insert is under way may also commit: its rows are then stored once anyway
   * (uids) when the queue is replayed at the next start.
   */
  close(rows: readonly UsageRecord[] = []): void {
    if (this.closed) return;
    this.closed = true;
    clearTimeout(this.retryTimer);
    const batches = [...this.inFlight];
    if (rows.length > 0) batches.push(this.batch(rows));
    const count = batches.reduce((n, b) => n + b.rows.length, 0);
    if (count > 0) {
      try {
        this.spool.appendSync(batches);
        this.opts.log.info('usage rows queued on disk at shutdown: stored when this node starts again', { rows: count, file: this.opts.file });
      } catch (err) {
        this.opts.log.error('usage rows could not be queued on disk at shutdown: lost', { rows: count, error: message(err) });
      }
    }
    void this.spool.close().catch(noop);
  }

  private batch(rows: readonly UsageRecord[]): SpooledBatch {
    return { rows: rows.map((rec): StoredUsage => ({ rec, uid: this.prefix + (this.seq++).toString(36) })) };
  }

  private enqueue<T>(fn: () => Promise<T>): Promise<T> {
    const next = this.chain.then(fn, fn);
    this.chain = next.catch(noop);
    return next;
  }

  /** Stores one batch, or queues it on disk when the database is unreachable or rows already wait there. */
  private async store(batch: SpooledBatch): Promise<number> {
    try {
      if (this.closed) return 0; // close() queued it
      if (this.spool.pending) {
        await this.toSpool(batch);
        return 0;
      }
      try {
        await this.opts.repo.insert(batch.rows);
      } catch (err) {
        if (!(err instanceof DatabaseUnavailableError)) {
          this.opts.log.error('usage rows could not be written', { rows: batch.rows.length, error: message(err) });
          return 0;
        }
        this.unreachable();
        await this.toSpool(batch);
        return 0;
      }
      this.written += batch.rows.length;
      this.reachable();
      return batch.rows.length;
    } finally {
      this.inFlight.delete(batch);
      this.backlog -= batch.rows.length;
    }
  }

  private async toSpool(batch: SpooledBatch): Promise<void> {
    if (this.closed) return;
    try {
      await this.spool.append([batch]);
    } catch (err) {
      this.opts.log.error('usage rows could not be queued on disk: lost', { rows: batch.rows.length, error: message(err) });
      return;
    }
    this.scheduleReplay();
  }

  private scheduleReplay(delay = this.retryMs): void {
    if (this.retryTimer || this.closed) return;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      void this.enqueue(() => this.replay());
    }, delay);
    this.retryTimer.unref();
  }

  /** Stores the queued batches in order; empties the queue once all are stored. */
  private async replay(): Promise<void> {
    if (this.closed || !this.spool.pending) return;
    const batches = await this.spool.read();
    let rows = 0;
    for (let i = this.replayed; i < batches.length; i++) {
      const batch = batches[i]!;
      try {
        await this.opts.repo.insert(batch.rows);
        this.written += batch.rows.length;
        rows += batch.rows.length;
      } catch (err) {
        if (err instanceof DatabaseUnavailableError) {
          this.unreachable();
          this.retryMs = Math.min(MAX_RETRY_MS, this.retryMs * 2);
          this.scheduleReplay();
          return;
        }
        this.opts.log.error('queued usage rows could not be written: dropped', { rows: batch.rows.length, error: message(err) });
      }
      this.replayed = i + 1;
      if (this.closed) return;
    }
    await this.spool.clear();
    this.replayed = 0;
    this.retryMs = this.opts.retryMs ?? 500;
    this.opts.log.info('usage rows queued on disk are stored in the shared database', { rows });
    this.reachable();
  }

  private unreachable(): void {
    if (this.down) return;
    this.down = true;
    this.opts.log.warn('shared database unreachable: usage rows are queued on disk until it answers again', { file: this.opts.file });
  }

  private reachable(): void {
    if (!this.down) return;
    this.down = false;
    this.opts.log.info('shared database reachable again: usage rows go to it');
  }
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
