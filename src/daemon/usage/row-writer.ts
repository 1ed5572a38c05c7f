import type { UsageRecord } from './record.js';

/**
 * What UsageService hands its queued rows to: `UsageWriter` (writer.ts: the embedded SQLite file, through a
 * worker thread) or `SpoolingUsageWriter` (spooling-writer.ts: PostgreSQL in cluster mode, with an on-disk
 * queue while the database is unreachable).
 */
export interface RowWriter {
  /** Rows stored (acknowledged), since construction. */
  readonly written: number;
  /** True: rows are written in the background in batches; false: on this thread in slices. */
  readonly viaWorker: boolean;
  /** Where rows go now (telemetry). */
  readonly mode: 'worker' | 'main' | 'postgres';
  /** Rows handed over and not yet acknowledged. */
  readonly backlog: number;
  /** Rows waiting in the on-disk queue for the database to answer again (cluster mode; 0 otherwise). */
  readonly spooled?: number;
  /**
   * Writes rows, in batches of at most `chunk`; resolves with the rows stored once they and everything
   * handed over before are stored (or, in cluster mode, safe in the on-disk queue). `sync`: durable
   * against a power cut too.
   */
  write(rows: readonly UsageRecord[], chunk?: number, sync?: boolean): Promise<number>;
  /** Shutdown, synchronous: stores `rows` and everything pending (or queues it on disk) before returning. */
  close(rows?: readonly UsageRecord[]): void;
}
