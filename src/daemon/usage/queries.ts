import type { SqlExecutor, SqlValue } from '../store/driver.js';
import { logEntry, type LogEntry, type UsageRow } from './record.js';
import type { BreakdownRow, Percentiles, Point, ProviderTelemetry, SeriesGroup, Summary, TokenTotals, Totals } from '../../shared/records.js';

/** A half-open time range [from, to) in unix ms. */
export interface Range {
  from: number;
  to: number;
}

export type { BreakdownRow, Percentiles, Point, ProviderTelemetry, Summary, TokenTotals, Totals };

export type BreakdownBy = 'provider' | 'model' | 'key' | 'connection' | 'endpoint' | 'combo';
export type Bucket = 'minute' | 'hour' | 'day';

export const BUCKET_MS: Record<Bucket, number> = { minute: 60_000, hour: 3_600_000, day: 86_400_000 };
/** Most points one timeseries reply may hold. */
export const MAX_POINTS = 2_000;

/**
 * SQL both dialects run (docs/storage.md): a condition is counted with CASE (PostgreSQL sums no booleans),
 * buckets are integer divisions of the BIGINT unix-ms time, percentiles are computed here in TypeScript.
 */
export const FAILED = 'CASE WHEN status >= 400 THEN 1 ELSE 0 END';
export const UNPRICED = "CASE WHEN cost_source = 'unpriced' THEN 1 ELSE 0 END";

const TOTALS_SQL = `COUNT(*) AS requests, COALESCE(SUM(${FAILED}), 0) AS errors,
  COALESCE(SUM(tokens_in), 0) AS tin, COALESCE(SUM(tokens_out), 0) AS tout,
  COALESCE(SUM(cache_read_tokens), 0) AS tcr, COALESCE(SUM(cache_write_tokens), 0) AS tcw,
  COALESCE(SUM(reasoning_tokens), 0) AS trs, COALESCE(SUM(cache_write_1h_tokens), 0) AS tcw1h,
  COALESCE(SUM(audio_in_tokens), 0) AS tai, COALESCE(SUM(audio_out_tokens), 0) AS tao,
  COALESCE(SUM(image_in_tokens), 0) AS tii, COALESCE(SUM(image_out_tokens), 0) AS tio, COALESCE(SUM(cost_usd), 0) AS cost,
  COALESCE(SUM(${UNPRICED}), 0) AS unpriced, AVG(latency_ms) AS lat`;

interface TotalsRow {
  requests: number;
  errors: number;
  tin: number;
  tout: number;
  tcr: number;
  tcw: number;
  trs: number;
  tcw1h: number;
  tai: number;
  tao: number;
  tii: number;
  tio: number;
  cost: number;
  unpriced: number;
  lat: number | null;
}

function totals(r: TotalsRow): Totals {
  return {
    requests: r.requests,
    errors: r.errors,
    tokens: {
      input: r.tin,
      output: r.tout,
      cacheRead: r.tcr,
      cacheWrite: r.tcw,
      cacheWrite1h: r.tcw1h,
      reasoning: r.trs,
      audioInput: r.tai,
      audioOutput: r.tao,
      imageInput: r.tii,
      imageOutput: r.tio,
      total: r.tin + r.tout,
    },
    costUsd: roundUsd(r.cost),
    unpricedRequests: r.unpriced,
    avgLatencyMs: r.lat === null ? null : Math.round(r.lat * 100) / 100,
  };
}

/** Sums of floats drift in the last digits; twelve decimals is far below a cent. */
function roundUsd(n: number): number {
  return Math.round(n * 1e12) / 1e12;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** Totals over a time range. */
export async function summary(db: SqlExecutor, range: Range): Promise<Summary> {
  const [r] = await db.query<TotalsRow & { traces: number; streamed: number; estimated: number }>(
    `SELECT ${TOTALS_SQL}, COUNT(DISTINCT trace_id) AS traces, COALESCE(SUM(streamed), 0) AS streamed,
       COALESCE(SUM(estimated), 0) AS estimated
     FROM usage_log WHERE ts >= ? AND ts < ?`,
    [range.from, range.to],
  );
  if (!r) throw new Error('the usage summary returned no row');
  return { from: iso(range.from), to: iso(range.to), traces: r.traces, ...totals(r), streamed: r.streamed, estimated: r.estimated };
}

/**
 * Orders a group column with its NULL group first, as SQLite does and PostgreSQL does not by default
 * (`NULLS FIRST` is PostgreSQL-only, and a CASE sorts the same on both).
 */
export const NULLS_FIRST = (col: string) => `CASE WHEN (${col}) IS NULL THEN 0 ELSE 1 END, ${col}`;

const GROUP: Record<BreakdownBy, string> = {
  provider: 'provider',
  model: "provider || '/' || model",
  key: 'api_key_id',
  connection: 'connection_id',
  endpoint: 'endpoint',
  combo: 'combo',
};



/** Totals per group, most expensive first (then most requests). */
export async function breakdown(db: SqlExecutor, by: BreakdownBy, range: Range): Promise<BreakdownRow[]> {
  const col = GROUP[by];
  const rows = await db.query<TotalsRow & { grp: string | null }>(
    `SELECT ${col} AS grp, ${TOTALS_SQL} FROM usage_log WHERE ts >= ? AND ts < ?
     GROUP BY ${col} ORDER BY cost DESC, requests DESC, ${NULLS_FIRST(col)}`,
    [range.from, range.to],
  );
  return rows.map((r) => ({ key: r.grp, ...totals(r) }));
}



/** What a timeseries counts: rows of one provider, model, API key id or combo (each optional). */
export interface SeriesFilter {
  provider?: string;
  model?: string;
  key?: string;
  combo?: string;
}

/** Groupings of timeseries series (`groupBy`). */
export type SeriesBy = 'provider' | 'model' | 'key' | 'combo';


function seriesWhere(range: Range, filter: SeriesFilter): { where: string[]; args: SqlValue[] } {
  const where = ['ts >= ?', 'ts < ?'];
  const args: SqlValue[] = [range.from, range.to];
  if (filter.provider) {
    where.push('provider = ?');
    args.push(filter.provider);
  }
  if (filter.model) {
    const m = modelFilter(filter.model);
    where.push(m.sql);
    args.push(...m.args);
  }
  if (filter.key) {
    where.push('api_key_id = ?');
    args.push(filter.key);
  }
  if (filter.combo) {
    where.push('combo = ?');
    args.push(filter.combo);
  }
  return { where, args };
}

/** The per-bucket sums (the bucket size is a constant of BUCKET_MS, inlined so the division stays integer). */
export const bucketSql = (size: number) => `(ts / ${size}) * ${size}`;
const pointSql = (size: number) => `${bucketSql(size)} AS b, COUNT(*) AS requests, COALESCE(SUM(${FAILED}), 0) AS errors,
  COALESCE(SUM(tokens_in), 0) AS tin, COALESCE(SUM(tokens_out), 0) AS tout, COALESCE(SUM(cost_usd), 0) AS cost,
  COALESCE(SUM(${UNPRICED}), 0) AS unpriced`;
type PointRow = { b: number; requests: number; errors: number; tin: number; tout: number; cost: number; unpriced: number };

/** Every bucket of the range in order, from the rows that have traffic (zero-filled). */
function fill(bucket: Bucket, range: Range, rows: PointRow[]): Point[] {
  const size = BUCKET_MS[bucket];
  const byStart = new Map(rows.map((r) => [r.b, r]));
  const points: Point[] = [];
  for (let b = Math.floor(range.from / size) * size; b < range.to; b += size) {
    const r = byStart.get(b);
    points.push({
      t: iso(b),
      requests: r?.requests ?? 0,
      errors: r?.errors ?? 0,
      tokensIn: r?.tin ?? 0,
      tokensOut: r?.tout ?? 0,
      costUsd: roundUsd(r?.cost ?? 0),
      unpricedRequests: r?.unpriced ?? 0,
    });
  }
  return points;
}

/** Bucketed counts over a range (UTC buckets), zero-filled; filters by provider, model, key and combo when given. */
export async function timeseries(db: SqlExecutor, bucket: Bucket, range: Range, filter: SeriesFilter): Promise<Point[]> {
  const size = BUCKET_MS[bucket];
  const { where, args } = seriesWhere(range, filter);
  const rows = await db.query<PointRow>(`SELECT ${pointSql(size)} FROM usage_log WHERE ${where.join(' AND ')} GROUP BY ${bucketSql(size)} ORDER BY b`, args);
  return fill(bucket, range, rows);
}

/**
 * One series per group (provider, model, key or combo) of the filtered rows: the `top` groups by cost, then
 * requests (the breakdown's order), and how many groups were left out (their traffic is in the totals).
 */
export async function groupedTimeseries(
  db: SqlExecutor,
  bucket: Bucket,
  range: Range,
  filter: SeriesFilter,
  by: SeriesBy,
  top: number,
): Promise<{ series: SeriesGroup[]; otherGroups: number }> {
  const size = BUCKET_MS[bucket];
  const col = GROUP[by];
  const { where, args } = seriesWhere(range, filter);
  const cond = where.join(' AND ');
  const ranked = await db.query<{ grp: string | null }>(
    `SELECT ${col} AS grp, COALESCE(SUM(cost_usd), 0) AS cost, COUNT(*) AS requests FROM usage_log WHERE ${cond} GROUP BY ${col} ORDER BY cost DESC, requests DESC, ${NULLS_FIRST(col)}`,
    args,
  );
  const chosen = ranked.slice(0, top).map((r) => r.grp);
  if (chosen.length === 0) return { series: [], otherGroups: 0 };
  const named = chosen.filter((g): g is string => g !== null);
  const pick = [named.length ? `${col} IN (${named.map(() => '?').join(', ')})` : '1 = 0', chosen.includes(null) ? `${col} IS NULL` : '1 = 0'].join(' OR ');
  const rows = await db.query<PointRow & { grp: string | null }>(
    `SELECT ${col} AS grp, ${pointSql(size)} FROM usage_log WHERE ${cond} AND (${pick}) GROUP BY ${col}, ${bucketSql(size)} ORDER BY b`,
    [...args, ...named],
  );
  const series = chosen.map((key) => ({ key, points: fill(bucket, range, rows.filter((r) => r.grp === key)) }));
  return { series, otherGroups: ranked.length - chosen.length };
}

/** Points a range would produce for a bucket size. */
export function pointCount(bucket: Bucket, range: Range): number {
  const size = BUCKET_MS[bucket];
  return Math.max(0, Math.ceil((range.to - Math.floor(range.from / size) * size) / size));
}

/** A model filter: the upstream id, `<provider>/<model>`, or the name the client used (e.g. a combo). */
function modelFilter(model: string): { sql: string; args: SqlValue[] } {
  return { sql: "(model = ? OR provider || '/' || model = ? OR requested_model = ?)", args: [model, model, model] };
}

export type StatusFilter = { exact: number } | { min: number; max: number };

export interface LogQuery {
  provider?: string;
  model?: string;
  status?: StatusFilter;
  key?: string;
  from?: number;
  to?: number;
  limit: number;
  /** Return rows with an id below this (the previous page's nextCursor). */
  before?: number;
}

/** The request log, newest first, with keyset paging on the row id. */
export async function logs(db: SqlExecutor, q: LogQuery): Promise<{ logs: LogEntry[]; nextCursor: string | null }> {
  const where: string[] = [];
  const args: SqlValue[] = [];
  if (q.provider) {
    where.push('provider = ?');
    args.push(q.provider);
  }
  if (q.model) {
    const m = modelFilter(q.model);
    where.push(m.sql);
    args.push(...m.args);
  }
  if (q.status) {
    if ('exact' in q.status) {
      where.push('status = ?');
      args.push(q.status.exact);
    } else {
      where.push('status >= ? AND status <= ?');
      args.push(q.status.min, q.status.max);
    }
  }
  if (q.key) {
    where.push('api_key_id = ?');
    args.push(q.key);
  }
  if (q.from !== undefined) {
    where.push('ts >= ?');
    args.push(q.from);
  }
  if (q.to !== undefined) {
    where.push('ts < ?');
    args.push(q.to);
  }
  if (q.before !== undefined) {
    where.push('id < ?');
    args.push(q.before);
  }
  const rows = await db.query<UsageRow>(`SELECT * FROM usage_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`, [
    ...args,
    q.limit + 1,
  ]);
  const more = rows.length > q.limit;
  const page = more ? rows.slice(0, q.limit) : rows;
  return { logs: page.map(logEntry), nextCursor: more ? String(page[page.length - 1]!.id) : null };
}



/** Rows telemetry reads at most (the most recent ones in the window). */
const TELEMETRY_ROWS = 50_000;

/** Latency percentiles (nearest rank) and error rates per provider over recent rows. */
export async function telemetry(db: SqlExecutor, since: number): Promise<ProviderTelemetry[]> {
  const rows = await db.query<{ provider: string; status: number; streamed: number; latency_ms: number; upstream_ms: number | null }>(
    'SELECT provider, status, streamed, latency_ms, upstream_ms FROM usage_log WHERE ts >= ? ORDER BY id DESC LIMIT ?',
    [since, TELEMETRY_ROWS],
  );
  const groups = new Map<string, { requests: number; errors: number; lat: number[]; up: number[]; over: number[] }>();
  for (const r of rows) {
    let g = groups.get(r.provider);
    if (!g) groups.set(r.provider, (g = { requests: 0, errors: 0, lat: [], up: [], over: [] }));
    g.requests++;
    if (r.status >= 400) {
      g.errors++;
      continue;
    }
    g.lat.push(r.latency_ms);
    if (r.upstream_ms !== null) {
      g.up.push(r.upstream_ms);
      if (!r.streamed) g.over.push(Math.max(0, r.latency_ms - r.upstream_ms));
    }
  }
  return [...groups.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([provider, g]) => ({
      provider,
      providerId: provider,
      requests: g.requests,
      errors: g.errors,
      errorRate: g.requests ? Math.round((g.errors / g.requests) * 10_000) / 10_000 : 0,
      latencyMs: percentiles(g.lat),
      upstreamMs: percentiles(g.up),
      overheadMs: percentiles(g.over),
    }));
}

/** Nearest-rank percentiles (as src/daemon/routing/latency.ts computes them). */
export function percentiles(values: number[]): Percentiles {
  if (values.length === 0) return { p50: null, p95: null, p99: null };
  const sorted = Float64Array.from(values).sort();
  const rank = (p: number) => sorted[Math.max(0, Math.ceil(p * sorted.length) - 1)]!;
  return { p50: rank(0.5), p95: rank(0.95), p99: rank(0.99) };
}
