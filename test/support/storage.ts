import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll } from 'vitest';
import { closeDatabase, openDatabase } from '../../src/daemon/store/db.js';
import type { SqlDriver } from '../../src/daemon/store/driver.js';
import { migrate } from '../../src/daemon/store/migrate.js';
import { migratePostgres } from '../../src/daemon/store/pg-migrate.js';
import { PostgresDriver } from '../../src/daemon/store/postgres-driver.js';
import { SqliteDriver } from '../../src/daemon/store/sqlite-driver.js';
import { postgresUnavailable, startPostgres, type PostgresServer } from './postgres.js';

/** A migrated, empty database behind one adapter; `connect()` opens another driver on the same database (a second node). */
export interface StorageUnderTest {
  driver: SqlDriver;
  connect(): Promise<SqlDriver>;
}

export interface StorageAdapter {
  name: 'sqlite' | 'postgres';
  /** Why this adapter cannot run here (the suite is skipped and says so in its title), or undefined. */
  unavailable: string | undefined;
  /** A fresh migrated database; closed after the test file. */
  open(): Promise<StorageUnderTest>;
}

/**
 * The two adapters every port test runs against: SQLite (a temp file migrated by migrations/) and a real
 * PostgreSQL 15 started for this test file (a fresh database per `open()`, migrated by migrations/pg/).
 * Registers the hooks that start and stop the server and close what was opened.
 */
export function storageAdapters(): StorageAdapter[] {
  const pgMissing = postgresUnavailable();
  let server: PostgresServer | undefined;
  const cleanups: Array<() => Promise<void> | void> = [];
  beforeAll(async () => {
    if (!pgMissing) server = await startPostgres();
  }, 60_000);
  afterAll(async () => {
    for (const clean of cleanups.reverse()) await clean();
    await server?.stop();
  }, 30_000);
  return [
    {
      name: 'sqlite',
      unavailable: undefined,
      async open() {
        const dir = mkdtempSync(join(tmpdir(), 'router-port-'));
        const file = join(dir, 'router.db');
        const db = openDatabase(file);
        migrate(db);
        const extra: ReturnType<typeof openDatabase>[] = [];
        cleanups.push(() => {
          for (const h of [db, ...extra]) closeDatabase(h);
          rmSync(dir, { recursive: true, force: true });
        });
        return {
          driver: new SqliteDriver(db),
          async connect() {
            const other = openDatabase(file);
            extra.push(other);
            return new SqliteDriver(other);
          },
        };
      },
    },
    {
      name: 'postgres',
      unavailable: pgMissing,
      async open() {
        if (!server) throw new Error('PostgreSQL is not running');
        const url = await server.createDatabase();
        const driver = new PostgresDriver({ url, max: 4 });
        cleanups.push(() => driver.close());
        await migratePostgres(driver);
        return {
          driver,
          async connect() {
            const other = new PostgresDriver({ url, max: 4 });
            cleanups.push(() => other.close());
            return other;
          },
        };
      },
    },
  ];
}

/** The describe title of an adapter's suite: says why it is skipped, when it is. */
export function adapterTitle(port: string, adapter: StorageAdapter): string {
  return adapter.unavailable ? `${port} on ${adapter.name} (skipped: ${adapter.unavailable})` : `${port} on ${adapter.name}`;
}
