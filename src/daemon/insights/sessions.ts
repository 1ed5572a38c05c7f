import type { SqlExecutor, SqlValue } from '../store/driver.js';
import { FAILED, UNPRICED } from '../usage/queries.js';
import { logEntry, type LogEntry, type UsageRow } from '../usage/record.js';

/** Filters of the sessions list; every one narrows the request rows a session is built from. */
export interface SessionFilter {
  from?: number;
  to?: number;
  provider?: string;
  model?: string;
  key?: string;
  /** Sessions whose id contains this text. */
  q?: string;
}

/** One conversation: the requests that carried the same X-Router-Session. */
export interface SessionSummary {
  sessionId: string;
  firstAt: string;
  lastAt: string;
  /** Usage rows (attempts, failovers included). */
  requests: number;
  /** Client requests (distinct trace ids). */
  traces: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
  /** Input tokens read from the provider's prompt cache (served requests). */
  cacheReadTokens: number;
  /** Distinct accounts that served its requests (cache affinity keeps this at 1). */
  accountsUsed: number;
  /** Sum over the priced rows; rows with no known price are counted in unpricedRequests, not as $0. */
  costUsd: number;
  unpricedRequests: number;
  providers: string[];
  models: string[];
  apiKeyIds: string[];
  /** The session's latest requests, newest first (at most `perSession`). */
  recent: LogEntry[];
}

interface SessionRow {
  session_id: string;
  first: number;
  last: number;
  requests: number;
  traces: number;
  errors: number;
  tin: number;
  tout: number;
  cached: number;
  accts: number;
  cost: number;
  unpriced: number;
}

/** WHERE clause and arguments of a filter, on rows that have a session. */
function where(f: SessionFilter): { sql: string; args: SqlValue[] } {
  const parts = ['session_id IS NOT NULL'];
  const args: SqlValue[] = [];
  const add = (sql: string, v: SqlValue) => {
    parts.push(sql);
    args.push(v);
  };
  if (f.from !== undefined) add('ts >= ?', f.from);
  if (f.to !== undefined) add('ts < ?', f.to);
  if (f.provider !== undefined) add('provider = ?', f.provider);
  if (f.model !== undefined) add('model = ?', f.model);
  if (f.key !== undefined) add('api_key_id = ?', f.key);
  // Contains, case-sensitive, on both dialects (SQLite has instr, PostgreSQL strpos; both have replace).
  if (f.q) add("replace(session_id, ?, '') <> session_id", f.q);
  return { sql: parts.join(' AND '), args };
}

/** The distinct providers, models and key ids of each listed session (sorted), in one query. */
async function distinctParts(
  db: SqlExecutor,
  w: { sql: string; args: SqlValue[] },
  ids: string[],
): Promise<Map<string, { providers: Set<string>; models: Set<string>; keys: Set<string> }>> {
  const out = new Map(ids.map((id) => [id, { providers: new Set<string>(), models: new Set<string>(), keys: new Set<string>() }]));
  if (ids.length === 0) return out;
  const rows = await db.query<{ sid: string; provider: string; model: string; api_key_id: string | null }>(
    `SELECT DISTINCT session_id AS sid, provider, model, api_key_id FROM usage_log WHERE ${w.sql} AND session_id IN (${ids.map(() => '?').join(', ')})`,
    [...w.args, ...ids],
  );
  for (const r of rows) {
    const parts = out.get(r.sid);
    if (!parts) continue;
    parts.providers.add(r.provider);
    parts.models.add(r.model);
    if (r.api_key_id !== null) parts.keys.add(r.api_key_id);
  }
  return out;
}
const sorted = (s: Set<string> | undefined) => (s ? [...s].sort() : []);

/** A page cursor: the last session's latest timestamp and id (sessions are ordered by latest activity). */
export function encodeCursor(last: number, id: string): string {
  return Buffer.from(JSON.stringify([last, id])).toString('base64url');
}

export function decodeCursor(cursor: string): { last: number; id: string } | undefined {
  try {
    const v = JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as unknown;
    if (Array.isArray(v) && v.length === 2 && Number.isSafeInteger(v[0]) && typeof v[1] === 'string') return { last: v[0], id: v[1] };
  } catch {
    // not one of ours
  }
  return undefined;
}

/**
 * Sessions with activity matching the filter, the most recently active first, each with its totals over
 * the matching rows and its latest requests. Reads through the partial index on (session_id, ts).
 */
export async function listSessions(
  db: SqlExecutor,
  f: SessionFilter,
  page: { limit: number; after?: { last: number; id: string }; perSession: number },
): Promise<{ sessions: SessionSummary[]; nextCursor: string | null }> {
  const w = where(f);
  const having = page.after ? 'HAVING MAX(ts) < ? OR (MAX(ts) = ? AND session_id < ?)' : '';
  const havingArgs = page.after ? [page.after.last, page.after.last, page.after.id] : [];
  const rows = await db.query<SessionRow>(
    `SELECT session_id, MIN(ts) AS first, MAX(ts) AS last, COUNT(*) AS requests, COUNT(DISTINCT trace_id) AS traces,
       COALESCE(SUM(${FAILED}), 0) AS errors, COALESCE(SUM(tokens_in), 0) AS tin, COALESCE(SUM(tokens_out), 0) AS tout,
       COALESCE(SUM(CASE WHEN status < 400 THEN cache_read_tokens END), 0) AS cached,
       COUNT(DISTINCT CASE WHEN status < 400 THEN connection_id END) AS accts, COALESCE(SUM(cost_usd), 0) AS cost,
       COALESCE(SUM(${UNPRICED}), 0) AS unpriced
     FROM usage_log WHERE ${w.sql} GROUP BY session_id ${having}
     ORDER BY last DESC, session_id DESC LIMIT ?`,
    [...w.args, ...havingArgs, page.limit + 1],
  );
  const more = rows.length > page.limit;
  const shown = more ? rows.slice(0, page.limit) : rows;
  const parts = await distinctParts(db, w, shown.map((r) => r.session_id));
  const recent = async (id: string): Promise<LogEntry[]> =>
    page.perSession > 0
      ? (await db.query<UsageRow>(`SELECT * FROM usage_log WHERE ${w.sql} AND session_id = ? ORDER BY ts DESC, id DESC LIMIT ?`, [...w.args, id, page.perSession])).map(logEntry)
      : [];
  const recents = await Promise.all(shown.map((r) => recent(r.session_id)));
  const sessions = shown.map((r, i): SessionSummary => ({
    sessionId: r.session_id,
    firstAt: new Date(r.first).toISOString(),
    lastAt: new Date(r.last).toISOString(),
    requests: r.requests,
    traces: r.traces,
    errors: r.errors,
    tokensIn: r.tin,
    tokensOut: r.tout,
    cacheReadTokens: r.cached,
    accountsUsed: r.accts,
    costUsd: Math.round(r.cost * 1e12) / 1e12,
    unpricedRequests: r.unpriced,
    providers: sorted(parts.get(r.session_id)?.providers),
    models: sorted(parts.get(r.session_id)?.models),
    apiKeyIds: sorted(parts.get(r.session_id)?.keys),
    recent: recents[i] ?? [],
  }));
  const tail = shown[shown.length - 1];
  return { sessions, nextCursor: more && tail ? encodeCursor(tail.last, tail.session_id) : null };
}

/** One account a session's requests went to. */
export interface SessionAccount {
  /** Null for requests router answered itself or sent without a stored account. */
  connectionId: string | null;
  /** Filled by the route: the connection's name (null once deleted). */
  name?: string | null;
  provider: string;
  providerId: string;
  requests: number;
  tokensIn: number;
  cacheReadTokens: number;
}

/** Where a session went and what the provider's prompt cache gave it (cache affinity's yardstick). */
export interface SessionCacheFacts {
  accounts: SessionAccount[];
  /** Distinct accounts that served (status < 400) one of its requests. */
  accountsUsed: number;
  tokensIn: number;
  cacheReadTokens: number;
  /** cacheReadTokens / tokensIn over the session's served requests; null when none had input tokens. */
  cachedShare: number | null;
}

/** The accounts a session used, in order of first use, with input and cache-read tokens of its served requests. */
export async function sessionCacheFacts(db: SqlExecutor, sessionId: string): Promise<SessionCacheFacts> {
  const rows = await db.query<{ conn: string | null; provider: string; requests: number; tin: number; cached: number; served: number }>(
    `SELECT connection_id AS conn, provider, COUNT(*) AS requests, COALESCE(SUM(CASE WHEN status < 400 THEN tokens_in END), 0) AS tin,
       COALESCE(SUM(CASE WHEN status < 400 THEN cache_read_tokens END), 0) AS cached, SUM(CASE WHEN status < 400 THEN 1 ELSE 0 END) AS served,
       MIN(id) AS first
     FROM usage_log WHERE session_id = ? GROUP BY connection_id, provider ORDER BY first`,
    [sessionId],
  );
  let tokensIn = 0;
  let cacheReadTokens = 0;
  let accountsUsed = 0;
  const accounts = rows.map((r): SessionAccount => {
    tokensIn += r.tin;
    cacheReadTokens += r.cached;
    if (r.served > 0 && r.conn !== null) accountsUsed++;
    return { connectionId: r.conn, provider: r.provider, providerId: r.provider, requests: r.requests, tokensIn: r.tin, cacheReadTokens: r.cached };
  });
  return { accounts, accountsUsed, tokensIn, cacheReadTokens, cachedShare: tokensIn > 0 ? Math.round((cacheReadTokens / tokensIn) * 10_000) / 10_000 : null };
}

/** Every request of one session, oldest first, paged by row id. */
export async function sessionRequests(
  db: SqlExecutor,
  sessionId: string,
  page: { limit: number; after?: number },
): Promise<{ requests: LogEntry[]; nextCursor: string | null }> {
  const rows = await db.query<UsageRow>('SELECT * FROM usage_log WHERE session_id = ? AND id > ? ORDER BY id ASC LIMIT ?', [sessionId, page.after ?? 0, page.limit + 1]);
  const more = rows.length > page.limit;
  const shown = more ? rows.slice(0, page.limit) : rows;
  return { requests: shown.map(logEntry), nextCursor: more ? String(shown[shown.length - 1]!.id) : null };
}
