import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGE_ROOT } from '../../shared/version.js';
import type { Db } from './db.js';

/** The shipped migrations folder. */
export const MIGRATIONS_DIR = join(PACKAGE_ROOT, 'migrations');

const FILE_RE = /^(\d{4})_([a-z0-9_]+)\.sql$/;

export interface MigrationFile {
  version: number;
  name: string;
  sql: string;
  checksum: string;
}

/** Thrown when the migrations on disk and those recorded in the database disagree. */
export class MigrationError extends Error {
  override name = 'MigrationError';
}

/**
 * Reads `NNNN_name.sql` files in order and refuses duplicate numbers, and gaps unless `allowGaps` (the
 * PostgreSQL migrations reserve number ranges per module, so they may have gaps; the SQLite ones may not).
 */
export function readMigrations(dir: string, allowGaps = false): MigrationFile[] {
  const files = readdirSync(dir).filter((f) => f.endsWith('.sql')).sort();
  const out: MigrationFile[] = [];
  for (const file of files) {
    const m = FILE_RE.exec(file);
    if (!m) throw new MigrationError(`migration file name ${file} does not match NNNN_name.sql`);
    const version = Number(m[1]);
    const expected = allowGaps ? Math.max(version, (out.at(-1)?.version ?? 0) + 1) : out.length + 1;
    if (version !== expected) {
      throw new MigrationError(
        version < expected
          ? `migration number ${m[1]} is used twice (${file})`
          : `migration ${String(expected).padStart(4, '0')} is missing before ${file}`,
      );
    }
    const sql = readFileSync(join(dir, file), 'utf8');
    out.push({ version, name: file, sql, checksum: createHash('sha256').update(sql).digest('hex') });
  }
  return out;
}

/**
 * Applies pending migrations in order, each inside its own transaction, and records them. Refuses to run
 * when a recorded migration was edited (checksum), renamed or renumbered, or when the database holds a
 * migration this build does not know (it was opened by a newer router).
 */
export function migrate(db: Db, dir: string = MIGRATIONS_DIR): { applied: number[] } {
  db.exec(`CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY, name TEXT NOT NULL, checksum TEXT NOT NULL, applied_at TEXT NOT NULL)`);
  const files = readMigrations(dir);
  const recorded = db.prepare('SELECT version, name, checksum FROM schema_migrations ORDER BY version').all() as Array<
    Pick<MigrationFile, 'version' | 'name' | 'checksum'>
  >;
  for (const row of recorded) {
    const file = files[row.version - 1];
    if (!file) throw new MigrationError(`database has migration ${row.name} that this router does not ship (newer database?)`);
    if (file.name !== row.name) throw new MigrationError(`migration ${row.name} was renamed or renumbered to ${file.name}`);
    if (file.checksum !== row.checksum) throw new MigrationError(`released migration ${row.name} was edited (checksum differs)`);
  }
  const insert = db.prepare('INSERT INTO schema_migrations (version, name, checksum, applied_at) VALUES (?, ?, ?, ?)');
  const applied: number[] = [];
  for (const file of files.slice(recorded.length)) {
    db.transaction(() => {
      db.exec(file.sql);
      insert.run(file.version, file.name, file.checksum, new Date().toISOString());
    })();
    applied.push(file.version);
  }
  return { applied };
}
