import { createHash } from 'node:crypto';
import type { AuthInfo } from '../auth/pipeline.js';
import type { Db } from '../store/db.js';

/** Where a tool call came from. */
export type AuditTransport = 'stream' | 'sse' | 'assistant';

/** One tool call as the audit log keeps it (the arguments themselves are never stored). */
export interface AuditEntry {
  id: number;
  time: string;
  caller: string;
  keyId: string | null;
  transport: AuditTransport;
  sessionId: string | null;
  tool: string;
  argBytes: number;
  argSha256: string;
  durationMs: number;
  ok: boolean;
  error: string | null;
}

interface AuditRow {
  id: number;
  ts: number;
  caller: string;
  key_id: string | null;
  transport: AuditTransport;
  session_id: string | null;
  tool: string;
  arg_bytes: number;
  arg_sha256: string;
  duration_ms: number;
  ok: number;
  error: string | null;
}

/** How the audit log names a caller: its key, or how it authenticated. */
export function callerName(auth: AuthInfo): string {
  if (auth.key) return `key:${auth.key.id}`;
  if (auth.via === 'cli-token') return 'cli';
  if (auth.via === 'open-loopback') return 'loopback';
  return auth.via;
}

export const BUCKET_MS = { minute: 60_000, hour: 3_600_000, day: 86_400_000 } as const;
export type Bucket = keyof typeof BUCKET_MS;

/** The MCP audit log (table mcp_audit): one row per tool call, and the per-tool statistics over time. */
export class McpAudit {
  private readonly insert;

  constructor(private readonly db: Db) {
    this.insert = db.prepare(
      `INSERT INTO mcp_audit (ts, caller, key_id, transport, session_id, tool, arg_bytes, arg_sha256, duration_ms, ok, error)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    );
  }

  /** Records one finished call. `args` is the JSON text of the arguments (hashed and measured, not kept). */
  record(e: { ts: number; auth: AuthInfo; transport: AuditTransport; sessionId?: string; tool: string; args: string; durationMs: number; error?: string }): void {
    const sha = createHash('sha256').update(e.args).digest('hex');
    this.insert.run(
      e.ts,
      callerName(e.auth),
      e.auth.key?.id ?? null,
      e.transport,
      e.sessionId ?? null,
      e.tool,
      Buffer.byteLength(e.args),
      sha,
      Math.round(e.durationMs),
      e.error === undefined ? 1 : 0,
      e.error === undefined ? null : e.error.slice(0, 500),
    );
  }

  /** Newest first, keyset-paged on the row id; filters by tool, caller and outcome. */
  list(q: { limit: number; before?: number; tool?: string; caller?: string; ok?: boolean }): { entries: AuditEntry[]; nextCursor: string | null } {
    const conds: Array<[string, unknown]> = [];
    if (q.before !== undefined) conds.push(['id < ?', q.before]);
    if (q.tool) conds.push(['tool = ?', q.tool]);
    if (q.caller) conds.push(['caller = ?', q.caller]);
    if (q.ok !== undefined) conds.push(['ok = ?', q.ok ? 1 : 0]);
    const where = conds.map((c) => c[0]);
    const args = conds.map((c) => c[1]);
    const sql = `SELECT * FROM mcp_audit ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT ?`;
    const rows = this.db.prepare(sql).all(...args, q.limit + 1) as AuditRow[];
    const more = rows.length > q.limit;
    const page = rows.slice(0, q.limit);
    return {
      entries: page.map((r) => ({
        id: r.id,
        time: new Date(r.ts).toISOString(),
        caller: r.caller,
        keyId: r.key_id,
        transport: r.transport,
        sessionId: r.session_id,
        tool: r.tool,
        argBytes: r.arg_bytes,
        argSha256: r.arg_sha256,
        durationMs: r.duration_ms,
        ok: r.ok === 1,
        error: r.error,
      })),
      nextCursor: more ? String(page[page.length - 1]!.id) : null,
    };
  }

  /** Calls, errors and mean duration per tool and time bucket (UTC), plus totals per tool over the range. */
  stats(q: { bucket: Bucket; from: number; to: number }) {
    const size = BUCKET_MS[q.bucket];
    const rows = this.db
      .prepare(
        `SELECT CAST(ts / ? AS INTEGER) * ? AS b, tool, COUNT(*) AS calls, SUM(1 - ok) AS errors, AVG(duration_ms) AS avg_ms
         FROM mcp_audit WHERE ts >= ? AND ts < ? GROUP BY b, tool ORDER BY b, tool`,
      )
      .all(size, size, q.from, q.to) as Array<{ b: number; tool: string; calls: number; errors: number; avg_ms: number }>;
    const totals = new Map<string, { tool: string; calls: number; errors: number }>();
    for (const r of rows) {
      const t = totals.get(r.tool) ?? { tool: r.tool, calls: 0, errors: 0 };
      t.calls += r.calls;
      t.errors += r.errors;
      totals.set(r.tool, t);
    }
    return {
      bucket: q.bucket,
      from: new Date(q.from).toISOString(),
      to: new Date(q.to).toISOString(),
      tools: [...totals.values()].sort((a, b) => b.calls - a.calls),
      points: rows.map((r) => ({ time: new Date(r.b).toISOString(), tool: r.tool, calls: r.calls, errors: r.errors, avgDurationMs: Math.round(r.avg_ms) })),
    };
  }

  /** Drops rows older than the retention. */
  prune(retentionDays: number, now = Date.now()): number {
    return this.db.prepare('DELETE FROM mcp_audit WHERE ts < ?').run(now - retentionDays * 86_400_000).changes;
  }
}
