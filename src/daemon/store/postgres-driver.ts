import pg from 'pg';
import type { SqlDriver, SqlExecutor, SqlResult, SqlValue } from './driver.js';
import { bindable, DatabaseUnavailableError, isUnavailable, toPostgresPlaceholders } from './driver.js';

export { isUnavailable };

/** Placeholder rewriting is cached per SQL text (statements are few and fixed; multi-row ones vary). */
const MAX_CACHED = 256;

/**
 * Counts and sums come back as int8/numeric, which node-postgres returns as strings (they may exceed 2^53);
 * router's counters (tokens, requests, cents) never come near that, and the SQLite rows hold numbers, so the
 * driver parses them as numbers: one row mapper reads both dialects.
 */
const types = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === pg.types.builtins.INT8 || oid === pg.types.builtins.NUMERIC) return (v: string) => Number(v);
    return format === 'binary' ? pg.types.getTypeParser(oid, 'binary') : pg.types.getTypeParser(oid, 'text');
  },
} as pg.CustomTypesConfig;

export interface PostgresDriverOptions {
  /** `postgres://user:password@host:port/db?sslmode=...`; node-postgres honours sslmode and the other TLS options. */
  url: string;
  /** Pool size (default 10). */
  max?: number;
  /** Name shown in pg_stat_activity. */
  applicationName?: string;
}

type Queryable = Pick<pg.Pool | pg.PoolClient, 'query'>;

/** Runs a call on the database, turning a failure to reach it into `DatabaseUnavailableError`. */
async function reach<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (err) {
    throw isUnavailable(err) && !(err instanceof DatabaseUnavailableError) ? new DatabaseUnavailableError({ cause: err }) : err;
  }
}

class PostgresExecutor implements SqlExecutor {
  readonly dialect = 'postgres' as const;
  constructor(
    protected readonly target: Queryable,
    protected readonly rewrite: (sql: string) => string,
  ) {}

  async query<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    const res = await reach(() => this.target.query({ text: this.rewrite(sql), values: bindable(params), types }));
    return res.rows as T[];
  }

  async run(sql: string, params: readonly SqlValue[] = []): Promise<SqlResult> {
    const res = await reach(() => this.target.query({ text: this.rewrite(sql), values: bindable(params), types }));
    return { changes: res.rowCount ?? 0 };
  }
}

/** The PostgreSQL side of the driver seam: a node-postgres pool. */
export class PostgresDriver extends PostgresExecutor implements SqlDriver {
  private readonly pool: pg.Pool;
  private readonly opts: PostgresDriverOptions;

  constructor(opts: PostgresDriverOptions) {
    const cache = new Map<string, string>();
    const rewrite = (sql: string): string => {
      let text = cache.get(sql);
      if (text === undefined) {
        if (cache.size >= MAX_CACHED) cache.clear();
        text = toPostgresPlaceholders(sql);
        cache.set(sql, text);
      }
      return text;
    };
    const pool = new pg.Pool({
      connectionString: opts.url,
      max: opts.max ?? 10,
      application_name: opts.applicationName ?? 'router',
      connectionTimeoutMillis: 5000,
    });
    super(pool, rewrite);
    this.pool = pool;
    this.opts = opts;
    // An idle client losing its connection (server restart) must not crash the daemon: the pool replaces it.
    pool.on('error', () => {});
  }

  async transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await reach(() => this.pool.connect());
    let broken = false;
    try {
      await reach(() => client.query('BEGIN'));
      const out = await fn(new PostgresExecutor(client, this.rewrite));
      await reach(() => client.query('COMMIT'));
      return out;
    } catch (err) {
      broken = isUnavailable(err);
      if (!broken) await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      // A connection that failed is dropped, not handed to the next caller.
      client.release(broken);
    }
  }

  /** Runs `fn` on one dedicated connection (session-level advisory locks need the same session). */
  async session<T>(fn: (conn: SqlExecutor) => Promise<T>): Promise<T> {
    const client = await reach(() => this.pool.connect());
    try {
      return await fn(new PostgresExecutor(client, this.rewrite));
    } finally {
      client.release();
    }
  }

  /**
   * A connection of its own, outside the pool, to the same database (LISTEN needs one connection held for
   * good: store/pg-changes.ts). The caller connects, listens for its 'error' and ends it.
   */
  dedicatedClient(): pg.Client {
    return new pg.Client({ connectionString: this.opts.url, application_name: this.opts.applicationName ?? 'router', connectionTimeoutMillis: 5000 });
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
