import { join } from 'node:path';
import { MIGRATIONS_DIR, MigrationError, readMigrations, type MigrationFile } from './migrate.js';
import type { PostgresDriver } from './postgres-driver.js';

/** The shipped PostgreSQL migrations (cluster mode). */
export const PG_MIGRATIONS_DIR = join(MIGRATIONS_DIR, 'pg');

/**
 * The advisory lock key under which nodes migrate: the first node to take it applies what is pending, the
 * others wait for it and then find nothing left to do. (A fixed 64-bit number: 'router:schema' hashed.)
 */
export const MIGRATION_LOCK_KEY = 7_262_771_360_316_411n;

type Recorded = Pick<MigrationFile, 'version' | 'name' | 'checksum'>;

const pad = (n: number) => String(n).padStart(4, '0');

/**
 * Applies the pending PostgreSQL migrations, once across the cluster: under `pg_advisory_lock`, each file in
 * its own transaction, recorded in schema_migrations. Numbers may have gaps (ranges are reserved per
 * module): a file whose number is not recorded yet is pending, even below the highest recorded one. A node
 * whose build knows other migrations than the database holds refuses to serve, naming both versions (a
 * database ahead of the node: upgrade the node; a released migration edited or renamed: a build mismatch).
 */
export async function migratePostgres(driver: PostgresDriver, dir: string = PG_MIGRATIONS_DIR): Promise<{ applied: number[]; version: number }> {
  const files = readMigrations(dir, true);
  return driver.session(async (conn) => {
    await conn.query('SELECT pg_advisory_lock(?)', [MIGRATION_LOCK_KEY]);
    try {
      await conn.run(`CREATE TABLE IF NOT EXISTS schema_migrations (
        version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)`);
      const recorded = await conn.query<Recorded>('SELECT version, name, checksum FROM schema_migrations ORDER BY version');
      checkRecorded(recorded, files);
      const applied: number[] = [];
      const done = new Set(recorded.map((r) => r.version));
      for (const file of files.filter((f) => !done.has(f.version))) {
        await conn.run('BEGIN');
        try {
          await conn.run(file.sql);
          await conn.run('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)', [
            file.version,
            file.name,
            file.checksum,
            new Date().toISOString(),
          ]);
          await conn.run('COMMIT');
        } catch (err) {
          await conn.run('ROLLBACK').catch(() => undefined);
          throw new MigrationError(`PostgreSQL migration ${file.name} failed: ${err instanceof Error ? err.message : String(err)}`);
        }
        applied.push(file.version);
      }
      return { applied, version: files.at(-1)?.version ?? 0 };
    } finally {
      await conn.query('SELECT pg_advisory_unlock(?)', [MIGRATION_LOCK_KEY]);
    }
  });
}

/** Refuses a database whose recorded migrations differ from the ones this build ships, naming both versions. */
function checkRecorded(recorded: Recorded[], files: MigrationFile[]): void {
  const built = files.at(-1)?.version ?? 0;
  const db = recorded.length === 0 ? 0 : Math.max(...recorded.map((r) => r.version));
  const byVersion = new Map(files.map((f) => [f.version, f]));
  for (const row of recorded) {
    const file = byVersion.get(row.version);
    if (!file) {
      throw new MigrationError(
        `the database schema is at version ${pad(db)} but this router is built for version ${pad(built)} (migration ${row.name} is unknown here): upgrade this node before it joins the cluster`,
      );
    }
    if (file.name !== row.name || file.checksum !== row.checksum) {
      throw new MigrationError(
        `the database's migration ${row.name} differs from this router's ${file.name} (schema version ${pad(db)} in the database, ${pad(built)} in this build): this node was built from other migrations`,
      );
    }
  }
}
