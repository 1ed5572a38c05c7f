/**
 * The TUIs' state as pure functions over plain data (no React, no I/O), so each rule is testable alone:
 * the request buffer with its filters, the usage aggregation with per-minute series, and the masking of
 * secrets in captured headers and bodies.
 */
import { matchesFilter, type RequestFilter } from '../commands/logs.js';
import { entryKey } from '../live.js';
import type { LogEntry, Point, RequestEntry } from '../types.js';

export type { RequestFilter };

/** Requests a view keeps in memory at most (oldest dropped first). */
export const MAX_ENTRIES = 1_000;

export { entryKey };

/** Adds entries (oldest first), skipping ones already held, keeping at most `max`. */
export function addEntries(list: readonly RequestEntry[], incoming: readonly RequestEntry[], max = MAX_ENTRIES): RequestEntry[] {
  const seen = new Set(list.map(entryKey));
  const fresh = incoming.filter((e) => {
    const k = entryKey(e);
    if (seen.has(k)) return false;
    seen.add(k);
    return true;
  });
  if (fresh.length === 0) return list as RequestEntry[];
  const next = [...list, ...fresh];
  return next.length > max ? next.slice(next.length - max) : next;
}

/** Log entries come newest first; the views hold them oldest first. */
export function fromLog(logs: readonly LogEntry[]): RequestEntry[] {
  return [...logs].reverse().map((e) => ({ ...e, type: 'request' as const }));
}

export function applyFilter(list: readonly RequestEntry[], f: RequestFilter): RequestEntry[] {
  return list.filter((e) => matchesFilter(e, f));
}

/** The next value in a cycle of choices (`undefined` stands for "all"). */
export function cycle<T>(choices: readonly T[], current: T | undefined): T | undefined {
  if (choices.length === 0) return undefined;
  if (current === undefined) return choices[0];
  const i = choices.indexOf(current);
  return i < 0 || i === choices.length - 1 ? undefined : choices[i + 1];
}

export const STATUS_CHOICES = ['2xx', '4xx', '5xx', 'error'] as const;

/** Distinct values of a field, sorted, for filter cycling. */
export function distinct(list: readonly RequestEntry[], pick: (e: RequestEntry) => string): string[] {
  return [...new Set(list.map(pick))].sort();
}

// ---------------------------------------------------------------------------------------------------
// Usage aggregation

export interface Bucket {
  requests: number;
  errors: number;
  tokens: number;
  costUsd: number;
}

export interface Group extends Bucket {
  key: string;
  /** Requests with no known price: left out of costUsd, shown as unpriced (never as $0). */
  unpriced: number;
  /** Per-minute buckets keyed by the minute's epoch number (ms / 60000). */
  minutes: Map<number, Bucket>;
}

export interface UsageState {
  /** Unix ms the totals start at. */
  since: number;
  total: Group;
  provider: Map<string, Group>;
  model: Map<string, Group>;
}

const emptyBucket = (): Bucket => ({ requests: 0, errors: 0, tokens: 0, costUsd: 0 });
const newGroup = (key: string): Group => ({ key, ...emptyBucket(), unpriced: 0, minutes: new Map() });

export function emptyUsage(since: number): UsageState {
  return { since, total: newGroup('total'), provider: new Map(), model: new Map() };
}

function bump(g: Group, minute: number, add: Bucket, countTotals = true): void {
  if (countTotals) {
    g.requests += add.requests;
    g.errors += add.errors;
    g.tokens += add.tokens;
    g.costUsd += add.costUsd;
  }
  const b = g.minutes.get(minute) ?? emptyBucket();
  b.requests += add.requests;
  b.errors += add.errors;
  b.tokens += add.tokens;
  b.costUsd += add.costUsd;
  g.minutes.set(minute, b);
}

function groupOf(map: Map<string, Group>, key: string): Group {
  let g = map.get(key);
  if (!g) map.set(key, (g = newGroup(key)));
  return g;
}

/** Adds one live request to the totals and the per-minute series (mutates a copy-on-write shell). */
export function addRequest(s: UsageState, e: RequestEntry): UsageState {
  const minute = Math.floor(Date.parse(e.timestamp) / 60_000);
  const add: Bucket = { requests: 1, errors: e.status >= 400 ? 1 : 0, tokens: e.tokensIn + e.tokensOut, costUsd: e.costUsd ?? 0 };
  const groups = [s.total, groupOf(s.provider, e.provider), groupOf(s.model, `${e.provider}/${e.model}`)];
  for (const g of groups) {
    bump(g, minute, add);
    if (e.costUsd === null) g.unpriced++;
  }
  return { ...s };
}

/** Seeds a group's totals from a breakdown row. */
export function seedTotals(s: UsageState, by: 'provider' | 'model' | 'total', key: string, t: { requests: number; errors: number; tokens: { input: number; output: number }; costUsd: number; unpricedRequests?: number }): void {
  const g = by === 'total' ? s.total : groupOf(s[by], key);
  g.requests += t.requests;
  g.errors += t.errors;
  g.tokens += t.tokens.input + t.tokens.output;
  g.costUsd += t.costUsd;
  g.unpriced += t.unpricedRequests ?? 0;
}

/** Seeds a group's per-minute series from timeseries points (totals come from seedTotals). */
export function seedSeries(s: UsageState, by: 'provider' | 'model' | 'total', key: string, points: readonly Point[]): void {
  const g = by === 'total' ? s.total : groupOf(s[by], key);
  for (const p of points) {
    if (p.requests === 0) continue;
    bump(g, Math.floor(Date.parse(p.t) / 60_000), { requests: p.requests, errors: p.errors, tokens: p.tokensIn + p.tokensOut, costUsd: p.costUsd }, false);
  }
}

export type Metric = 'requests' | 'tokens' | 'costUsd';

/** The last `width` minutes of a group's series for a metric, oldest first, ending at `now`'s minute. */
export function series(g: Group, metric: Metric, width: number, now: number): number[] {
  const last = Math.floor(now / 60_000);
  const out: number[] = [];
  for (let m = last - width + 1; m <= last; m++) out.push(g.minutes.get(m)?.[metric] ?? 0);
  return out;
}

/** Groups sorted by a metric, largest first (ties by name). */
export function ranked(map: Map<string, Group>, metric: Metric): Group[] {
  return [...map.values()].sort((a, b) => b[metric] - a[metric] || a.key.localeCompare(b.key));
}

// ---------------------------------------------------------------------------------------------------
// Throughput (dashboard): per-second request and error counts of the last minute

export interface Throughput {
  /** Epoch second -> counts. */
  seconds: Map<number, { requests: number; errors: number }>;
}

export function addThroughput(t: Throughput, e: RequestEntry): Throughput {
  const sec = Math.floor(Date.parse(e.timestamp) / 1000);
  const b = t.seconds.get(sec) ?? { requests: 0, errors: 0 };
  b.requests++;
  if (e.status >= 400) b.errors++;
  t.seconds.set(sec, b);
  // Forget what is older than two minutes.
  for (const k of t.seconds.keys()) if (k < sec - 120) t.seconds.delete(k);
  return { seconds: t.seconds };
}

/** Requests per `step` seconds over the last `width * step` seconds, oldest first. */
export function throughputSeries(t: Throughput, width: number, now: number, step = 1, field: 'requests' | 'errors' = 'requests'): number[] {
  const last = Math.floor(now / 1000);
  const out: number[] = [];
  for (let i = width - 1; i >= 0; i--) {
    let sum = 0;
    for (let s = 0; s < step; s++) sum += t.seconds.get(last - i * step - s)?.[field] ?? 0;
    out.push(sum);
  }
  return out;
}

// ---------------------------------------------------------------------------------------------------
// Masking (inspector)

const SECRET_HEADER = /^(authorization|proxy-authorization|x-api-key|x-goog-api-key|api-key|cookie|set-cookie|x-router-cli-token)$|key|token|secret|password/i;
const SECRET_FIELD = /^(api_?key|access_?token|refresh_?token|token|secret|password|authorization|client_secret|experimental_bearer_token)$/i;

/** A secret shown as its first few characters only. */
export function maskValue(v: string): string {
  const bearer = /^(Bearer|Basic)\s+/i.exec(v);
  const body = bearer ? v.slice(bearer[0].length) : v;
  const shown = body.length > 12 ? `${body.slice(0, 4)}…(${body.length})` : '***';
  return bearer ? `${bearer[0]}${shown}` : shown;
}

export function maskHeaders(h: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(h).map(([k, v]) => [k, SECRET_HEADER.test(k) ? maskValue(v) : v]));
}

/** Masks secret-looking fields of a JSON body (any depth); non-JSON text is returned as is. */
export function maskBody(body: string | null): string | null {
  if (body === null) return null;
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return body;
  }
  const walk = (v: unknown): unknown => {
    if (Array.isArray(v)) return v.map(walk);
    if (v && typeof v === 'object') {
      return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, SECRET_FIELD.test(k) && typeof x === 'string' ? maskValue(x) : walk(x)]));
    }
    return v;
  };
  return JSON.stringify(walk(parsed), null, 2);
}
