import type { SqlDriver, SqlValue } from '../store/driver.js';
import { valuesList } from '../store/driver.js';
import type { AuditPoint, AuditQuery, AuditRow, AuditTransport, McpAuditRepository, StoredAuditRow } from './audit-port.js';

interface Row {
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

const COLUMNS = 'ts, caller, key_id, transport, session_id, tool, arg_bytes, arg_sha256, duration_ms, ok, error';
/** Rows per INSERT: 11 columns each, well under both dialects' placeholder limits. */
const CHUNK = 500;

const fromRow = (r: Row): StoredAuditRow => ({
  id: r.id,
  ts: r.ts,
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
});

/** The MCP audit port over the driver seam: one SQL text for SQLite and PostgreSQL (table mcp_audit). */
export class SqlMcpAuditRepository implements McpAuditRepository {
  constructor(private readonly driver: SqlDriver) {}

  /** Every chunk's statement is issued in this call (on SQLite each runs when called: a closing daemon's rows are stored). */
  async insertMany(rows: readonly AuditRow[]): Promise<void> {
    const writes: Promise<unknown>[] = [];
    for (let i = 0; i < rows.length; i += CHUNK) {
      const chunk = rows.slice(i, i + CHUNK);
      writes.push(this.driver.run(
        `INSERT INTO mcp_audit (${COLUMNS}) VALUES ${valuesList(chunk.length, 11)}`,
        chunk.flatMap((r) => [r.ts, r.caller, r.keyId, r.transport, r.sessionId, r.tool, r.argBytes, r.argSha256, r.durationMs, r.ok ? 1 : 0, r.error]),
      ));
    }
    await Promise.all(writes);
  }

  async list(q: AuditQuery): Promise<StoredAuditRow[]> {
    const conds: Array<[string, SqlValue]> = [];
    if (q.before !== undefined) conds.push(['id < ?', q.before]);
    if (q.tool) conds.push(['tool = ?', q.tool]);
    if (q.caller) conds.push(['caller = ?', q.caller]);
    if (q.ok !== undefined) conds.push(['ok = ?', q.ok ? 1 : 0]);
    const where = conds.length ? `WHERE ${conds.map((c) => c[0]).join(' AND ')}` : '';
    const rows = await this.driver.query<Row>(`SELECT id, ${COLUMNS} FROM mcp_audit ${where} ORDER BY id DESC LIMIT ?`, [...conds.map((c) => c[1]), q.limit + 1]);
    return rows.map(fromRow);
  }

  async stats(bucketMs: number, from: number, to: number): Promise<AuditPoint[]> {
    // The bucket size is an integer of ours, inlined: integer division of a BIGINT (or SQLite INTEGER) ts.
    const size = Math.trunc(bucketMs);
    const rows = await this.driver.query<{ b: number; tool: string; calls: number; errors: number; avg_ms: number }>(
      `SELECT (ts / ${size}) * ${size} AS b, tool, COUNT(*) AS calls, SUM(1 - ok) AS errors, AVG(duration_ms) AS avg_ms
       FROM mcp_audit WHERE ts >= ? AND ts < ? GROUP BY (ts / ${size}) * ${size}, tool`,
      [from, to],
    );
    // Ordered here: PostgreSQL's text collation may order tool names unlike SQLite's byte order.
    return rows
      .map((r) => ({ bucket: Number(r.b), tool: r.tool, calls: Number(r.calls), errors: Number(r.errors), avgMs: Number(r.avg_ms) }))
      .sort((a, b) => a.bucket - b.bucket || (a.tool < b.tool ? -1 : a.tool > b.tool ? 1 : 0));
  }

  async prune(before: number): Promise<number> {
    return (await this.driver.run('DELETE FROM mcp_audit WHERE ts < ?', [before])).changes;
  }
}
