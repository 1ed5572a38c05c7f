/** Where a tool call came from. */
export type AuditTransport = 'stream' | 'sse' | 'assistant';

/** One tool call as stored (the arguments themselves never are: their size and sha256 only). */
export interface AuditRow {
  /** Unix ms when the call started. */
  ts: number;
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

/** A stored call with its id (ascending with insertion). */
export interface StoredAuditRow extends AuditRow {
  id: number;
}

/** A page of the log, newest first: `before` is the id of the previous page's last row. */
export interface AuditQuery {
  limit: number;
  before?: number;
  tool?: string;
  caller?: string;
  ok?: boolean;
}

/** Calls, errors and mean duration of one tool in one time bucket. */
export interface AuditPoint {
  /** The bucket's start, unix ms. */
  bucket: number;
  tool: string;
  calls: number;
  errors: number;
  avgMs: number;
}

/**
 * The MCP audit log's storage port (table mcp_audit). No snapshot: only its routes read it. Rows are written
 * in batches off the tool calls (audit.ts), shared in cluster mode so a listing on any node covers every
 * node's calls. Implemented over SQLite and PostgreSQL by `SqlMcpAuditRepository` (test/mcp/audit-port.test.ts).
 */
export interface McpAuditRepository {
  /** Stores rows in one statement per chunk, in the given order. */
  insertMany(rows: readonly AuditRow[]): Promise<void>;
  /** Up to `limit + 1` rows, newest first (the extra row says a next page exists). */
  list(q: AuditQuery): Promise<StoredAuditRow[]>;
  /** Per tool and bucket of `bucketMs` (UTC, from the epoch) over [from, to), ordered by bucket and tool. */
  stats(bucketMs: number, from: number, to: number): Promise<AuditPoint[]>;
  /** Deletes rows older than `before` (unix ms); returns how many. */
  prune(before: number): Promise<number>;
}
