import type { DiversityBy, DiversityMetric } from '../insights/diversity.js';
import type { SessionCacheFacts, SessionFilter, SessionSummary } from '../insights/sessions.js';
import type { BreakdownRow, Point, ProviderTelemetry, SeriesGroup, Summary } from '../../shared/records.js';
import type { BreakdownBy, Bucket, LogQuery, Range, SeriesBy, SeriesFilter } from './queries.js';
import type { LogEntry, UsageRecord } from './record.js';

/** A usage row as the port stores it: the record and the writer's own id for it (`row_uid`). */
export interface StoredUsage {
  rec: UsageRecord;
  /** Unique per row across the cluster (a node prefix and a sequence): storing a row twice keeps one. */
  uid: string;
}

/** What `diversity` returns (insights/diversity.ts). */
export type DiversityResult = Awaited<ReturnType<typeof import('../insights/diversity.js').diversity>>;

/**
 * The usage module's storage port: usage rows (the request log) and every read of them (analytics, logs,
 * telemetry, sessions, traffic diversity). Implemented over SQLite and PostgreSQL by `SqlUsageRepository`;
 * test/usage/port.test.ts runs the same checks against both and compares their answers.
 *
 * Writes: on the embedded file the writer worker (writer.ts) inserts rows through its own connection, as
 * before; in cluster mode `SpoolingUsageWriter` (spooling-writer.ts) inserts batches through `insert`,
 * queueing them on disk while PostgreSQL is unreachable.
 */
export interface UsageRepository {
  /** True when `insert` skips rows whose uid is stored (PostgreSQL); the embedded file never replays a batch. */
  readonly dedupes: boolean;
  /**
   * Stores rows in order; resolves with the rows inserted. Where batches can be stored twice (`dedupes`:
   * PostgreSQL), a row whose uid is already stored is skipped.
   */
  insert(rows: readonly StoredUsage[]): Promise<number>;
  /** Deletes at most `limit` rows older than `before` (unix ms); resolves with the rows deleted. */
  pruneBefore(before: number, limit: number): Promise<number>;
  summary(range: Range): Promise<Summary>;
  breakdown(by: BreakdownBy, range: Range): Promise<BreakdownRow[]>;
  timeseries(bucket: Bucket, range: Range, filter: SeriesFilter): Promise<Point[]>;
  groupedTimeseries(bucket: Bucket, range: Range, filter: SeriesFilter, by: SeriesBy, top: number): Promise<{ series: SeriesGroup[]; otherGroups: number }>;
  logs(q: LogQuery): Promise<{ logs: LogEntry[]; nextCursor: string | null }>;
  telemetry(since: number): Promise<ProviderTelemetry[]>;
  sessions(
    f: SessionFilter,
    page: { limit: number; after?: { last: number; id: string }; perSession: number },
  ): Promise<{ sessions: SessionSummary[]; nextCursor: string | null }>;
  sessionRequests(sessionId: string, page: { limit: number; after?: number }): Promise<{ requests: LogEntry[]; nextCursor: string | null }>;
  sessionCacheFacts(sessionId: string): Promise<SessionCacheFacts>;
  diversity(by: DiversityBy, metric: DiversityMetric, bucket: Bucket, range: Range): Promise<DiversityResult>;
}
