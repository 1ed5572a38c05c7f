import { diversity, type DiversityBy, type DiversityMetric } from '../insights/diversity.js';
import { listSessions, sessionCacheFacts, sessionRequests, type SessionFilter } from '../insights/sessions.js';
import type { SqlDriver } from '../store/driver.js';
import type { DiversityResult, StoredUsage, UsageRepository } from './port.js';
import { breakdown, groupedTimeseries, logs, summary, telemetry, timeseries } from './queries.js';
import type { BreakdownBy, Bucket, LogQuery, Range, SeriesBy, SeriesFilter } from './queries.js';
import { encodeRows, FIELDS, USAGE_COLUMNS } from './writer-protocol.js';

/** Rows per INSERT (36 values each: 7,200 placeholders, under SQLite's 32,766 and PostgreSQL's 65,535). */
const ROWS_PER_INSERT = 200;

/**
 * The multi-row INSERT; with `uids`, each row carries its row_uid and a row whose uid is stored is skipped.
 * The PostgreSQL table has row_uid (migrations/pg/0020); the SQLite file does not (see `insert`).
 */
const insertSql = (rows: number, uids: boolean) => {
  const one = `(${new Array(FIELDS + (uids ? 1 : 0)).fill('?').join(', ')})`;
  const cols = uids ? `${USAGE_COLUMNS.join(', ')}, row_uid` : USAGE_COLUMNS.join(', ');
  return `INSERT INTO usage_log (${cols}) VALUES ${new Array(rows).fill(one).join(', ')}${uids ? ' ON CONFLICT DO NOTHING' : ''}`;
};

/** The usage port over the driver seam: one SQL text for SQLite and PostgreSQL (table usage_log). */
export class SqlUsageRepository implements UsageRepository {
  /**
   * Whether rows carry their uid: on PostgreSQL, where batches may be stored again (replayed from a node's
   * on-disk queue). The embedded file is written by its own writer worker in one local transaction per
   * batch and never replays, so its table has no row_uid: adding one takes a SQLite migration, and the
   * number reserved for it (0031) cannot ship before 0029 and 0030 do (SQLite migrations have no gaps).
   */
  readonly dedupes: boolean;

  constructor(private readonly driver: SqlDriver) {
    this.dedupes = driver.dialect === 'postgres';
  }

  /**
   * One statement per 200 rows, in order, each atomic on its own (no transaction held across them): a
   * failure after some of them leaves those stored, and storing the batch again skips them by uid.
   */
  async insert(rows: readonly StoredUsage[]): Promise<number> {
    const uids = this.dedupes;
    let inserted = 0;
    for (let i = 0; i < rows.length; i += ROWS_PER_INSERT) {
      const chunk = rows.slice(i, i + ROWS_PER_INSERT);
      const flat = encodeRows(chunk.map((r) => r.rec));
      const params: Array<string | number | null> = [];
      chunk.forEach((r, j) => {
        for (let k = j * FIELDS; k < (j + 1) * FIELDS; k++) params.push(flat[k] as string | number | null);
        if (uids) params.push(r.uid);
      });
      inserted += (await this.driver.run(insertSql(chunk.length, uids), params)).changes;
    }
    return inserted;
  }

  async pruneBefore(before: number, limit: number): Promise<number> {
    const { changes } = await this.driver.run('DELETE FROM usage_log WHERE id IN (SELECT id FROM usage_log WHERE ts < ? LIMIT ?)', [before, limit]);
    return changes;
  }

  summary(range: Range) {
    return summary(this.driver, range);
  }

  breakdown(by: BreakdownBy, range: Range) {
    return breakdown(this.driver, by, range);
  }

  timeseries(bucket: Bucket, range: Range, filter: SeriesFilter) {
    return timeseries(this.driver, bucket, range, filter);
  }

  groupedTimeseries(bucket: Bucket, range: Range, filter: SeriesFilter, by: SeriesBy, top: number) {
    return groupedTimeseries(this.driver, bucket, range, filter, by, top);
  }

  logs(q: LogQuery) {
    return logs(this.driver, q);
  }

  telemetry(since: number) {
    return telemetry(this.driver, since);
  }

  sessions(f: SessionFilter, page: { limit: number; after?: { last: number; id: string }; perSession: number }) {
    return listSessions(this.driver, f, page);
  }

  sessionRequests(sessionId: string, page: { limit: number; after?: number }) {
    return sessionRequests(this.driver, sessionId, page);
  }

  sessionCacheFacts(sessionId: string) {
    return sessionCacheFacts(this.driver, sessionId);
  }

  diversity(by: DiversityBy, metric: DiversityMetric, bucket: Bucket, range: Range): Promise<DiversityResult> {
    return diversity(this.driver, by, metric, bucket, range);
  }
}
