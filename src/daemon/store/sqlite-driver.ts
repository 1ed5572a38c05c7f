import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';
import type { SqlDriver, SqlExecutor, SqlResult, SqlValue } from './driver.js';
import { bindable } from './driver.js';

/** Prepared statements kept per SQL text; multi-row statements vary in length, so the cache is bounded. */
const MAX_CACHED = 256;


/**
 * The SQLite side of the driver seam, over the daemon's one better-sqlite3 handle. better-sqlite3 is
 * synchronous, so every statement runs when it is called and the returned promise is already settled: a
 * caller that cannot wait (closing the daemon) still has its write on disk when the call returns.
 * `querySync` is for what must stay synchronous at boot (loading the in-memory snapshots of the embedded file).
 */
export class SqliteDriver implements SqlDriver {
  readonly dialect = 'sqlite' as const;
  private readonly statements = new Map<string, Statement>();
  private queue: Promise<unknown> = Promise.resolve();

  constructor(readonly db: Db) {}

  private statement(sql: string): Statement {
    let stmt = this.statements.get(sql);
    if (!stmt) {
      if (this.statements.size >= MAX_CACHED) this.statements.clear();
      stmt = this.db.prepare(sql);
      this.statements.set(sql, stmt);
    }
    return stmt;
  }

  querySync<T>(sql: string, params: readonly SqlValue[] = []): T[] {
    return this.statement(sql).all(...bindable(params)) as T[];
  }

  runSync(sql: string, params: readonly SqlValue[] = []): SqlResult {
    return { changes: this.statement(sql).run(...bindable(params)).changes };
  }

  query<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    try {
      return Promise.resolve(this.querySync<T>(sql, params));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  run(sql: string, params: readonly SqlValue[] = []): Promise<SqlResult> {
    try {
      return Promise.resolve(this.runSync(sql, params));
    } catch (err) {
      return Promise.reject(err);
    }
  }

  /**
   * One transaction at a time (they queue): BEGIN IMMEDIATE takes the write lock up front, so a concurrent
   * CLI backup waits on the busy timeout rather than failing mid-transaction.
   */
  transaction<T>(fn: (tx: SqlExecutor) => Promise<T>): Promise<T> {
    const run = async (): Promise<T> => {
      this.db.exec('BEGIN IMMEDIATE');
      try {
        const out = await fn(this);
        this.db.exec('COMMIT');
        return out;
      } catch (err) {
        if (this.db.inTransaction) this.db.exec('ROLLBACK');
        throw err;
      }
    };
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** The handle belongs to the daemon (closed by `closeDatabase`); the driver only drops its statements. */
  close(): Promise<void> {
    this.statements.clear();
    return Promise.resolve();
  }
}
