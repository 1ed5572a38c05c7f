/**
 * The storage driver seam: every module's storage adapter speaks SQL through this interface, so one adapter
 * serves the embedded SQLite file (one machine, the default) and a shared PostgreSQL database (cluster mode).
 *
 * SQL is written once, in the common subset of both dialects, with `?` placeholders; the PostgreSQL driver
 * numbers them (`$1`, `$2`, ...) in `toPostgresPlaceholders`. Schemas keep the same column types on both sides
 * (ISO-8601 TEXT timestamps, INTEGER flags, TEXT JSON), so one row mapper reads the rows of either.
 */
export type SqlDialect = 'sqlite' | 'postgres';

/** A value bound to a placeholder. */
export type SqlValue = string | number | bigint | boolean | null | Buffer;

export interface SqlResult {
  /** Rows inserted, updated or deleted. */
  changes: number;
}

/** What runs statements: the driver itself, or the handle of one transaction. */
export interface SqlExecutor {
  readonly dialect: SqlDialect;
  /** Runs a statement that returns rows. */
  query<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  /** Runs a statement that returns no rows. */
  run(sql: string, params?: readonly SqlValue[]): Promise<SqlResult>;
}

export interface SqlDriver extends SqlExecutor {
  /**
   * Runs `fn` inside one transaction: committed when it resolves, rolled back when it throws. `fn` must run
   * its statements through the `tx` it is given (never the driver), and await nothing but those statements.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T>;
  /** Releases the connection(s). */
  close(): Promise<void>;
}

/**
 * The shared database cannot be reached (down, restarting, unreachable network, connection lost). Thrown
 * by the PostgreSQL driver in place of the driver's own error, whose text may name hosts and internals;
 * management writes answer it with 503 `database_unavailable` (http/errors.ts), and the request path, which
 * reads in-memory snapshots, never meets it.
 */
export class DatabaseUnavailableError extends Error {
  override name = 'DatabaseUnavailableError';
  constructor(options?: { cause?: unknown }) {
    super('The database is unavailable; try again shortly.', options);
  }
}

/** Binds booleans as 0/1: flags are INTEGER columns on both dialects (SQLite has no boolean type). */
export function bindable(params: readonly SqlValue[]): unknown[] {
  return params.map((p) => (typeof p === 'boolean' ? (p ? 1 : 0) : p));
}

/**
 * Rewrites `?` placeholders into PostgreSQL's numbered `$n`, leaving `?` inside quoted strings, quoted
 * identifiers and comments alone. The one place where the placeholder dialects differ.
 */
export function toPostgresPlaceholders(sql: string): string {
  let out = '';
  let n = 0;
  let i = 0;
  while (i < sql.length) {
    const ch = sql.charAt(i);
    if (ch === "'" || ch === '"') {
      const end = closingQuote(sql, i, ch);
      out += sql.slice(i, end);
      i = end;
    } else if (ch === '-' && sql.charAt(i + 1) === '-') {
      const end = sql.indexOf('\n', i);
      const stop = end === -1 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop;
    } else if (ch === '?') {
      n += 1;
      out += `$${n}`;
      i += 1;
    } else {
      out += ch;
      i += 1;
    }
  }
  return out;
}

/** Index just past the quote closing the one at `start` (a doubled quote is an escaped one). */
function closingQuote(sql: string, start: number, quote: string): number {
  let i = start + 1;
  while (i < sql.length) {
    if (sql.charAt(i) === quote) {
      if (sql.charAt(i + 1) === quote) i += 2;
      else return i + 1;
    } else i += 1;
  }
  return sql.length;
}

/**
 * `(?, ?), (?, ?)`: the VALUES list of a multi-row statement, for `rows` rows of `columns` columns.
 * Both dialects accept it (and a CTE over it: `WITH v(a, b) AS (VALUES ...)`).
 */
export function valuesList(rows: number, columns: number): string {
  const row = `(${Array.from({ length: columns }, () => '?').join(', ')})`;
  return Array.from({ length: rows }, () => row).join(', ');
}

/**
 * Whether a failure means the database cannot be reached, rather than a statement it refused: a socket error
 * (ECONNREFUSED...), a connection lost or timed out in the pool (node-postgres says so in words, without a
 * code), or a server-side SQLSTATE of class 08 (connection exception), 57P (shutting down, cannot connect
 * now) or 53 (out of resources: too many connections).
 */
export function isUnavailable(err: unknown): boolean {
  if (err instanceof DatabaseUnavailableError) return true;
  const code = (err as { code?: unknown } | undefined)?.code;
  if (typeof code === 'string') {
    if (/^[0-9A-Z]{5}$/.test(code)) return code.startsWith('08') || code.startsWith('57P') || code.startsWith('53');
    return true; // a Node system error: ECONNREFUSED, ECONNRESET, ETIMEDOUT, ENOTFOUND, EPIPE...
  }
  const message = err instanceof Error ? err.message : '';
  return /connection terminated|timeout exceeded when trying to connect|connection timeout|Connection refused|not queryable|Client has encountered a connection error/i.test(message);
}

/** A unique-constraint refusal (a name or prefix taken): SQLite's code, or PostgreSQL's SQLSTATE 23505. */
export function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === '23505';
}

/** A foreign-key refusal (the referenced row is gone): SQLite's code, or PostgreSQL's SQLSTATE 23503. */
export function isForeignKeyViolation(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return code === 'SQLITE_CONSTRAINT_FOREIGNKEY' || code === '23503';
}
