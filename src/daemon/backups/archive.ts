import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { closeSync, openSync, readSync } from 'node:fs';
import { badRequest, RouterError, publicReason } from '../http/errors.js';
import { loadSecretKey } from '../store/secrets.js';
import { MIGRATIONS_DIR, MigrationError, migrate, readMigrations } from '../store/migrate.js';
import type { Db } from '../store/db.js';
import { unwrapKey, wrapKey } from './keywrap.js';
import { rekeySecrets, type RekeyCounts } from './rekey.js';
import { checkImportSchema } from './schema.js';
import { onlineBackup, removeQuietly, type BackupStore } from './store.js';

/**
 * The export file is itself a SQLite database: a consistent snapshot of router.db plus one table,
 * `router_export`, that says what it is (format, router version, migration level, time) and, only when
 * the user asked with a passphrase, the state folder's secret key wrapped with it (keywrap.ts). Any
 * SQLite tool can open it; an import drops the table again.
 */

export const EXPORT_FORMAT = 'router-export/1';
const SQLITE_MAGIC = 'SQLite format 3\0';

function openFile(file: string): Db {
  const db = new Database(file);
  sqliteVec.load(db);
  // One self-contained file (a snapshot of a WAL database is marked WAL in its header).
  db.pragma('journal_mode = DELETE');
  return db;
}

/** Highest recorded migration of a database (0 when none). */
function migrationLevel(db: Db): number {
  return (db.prepare('SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations').get() as { v: number }).v;
}

/** Writes a consistent export of the live database to a scratch file and returns its path. */
export async function buildExport(
  live: Db,
  store: BackupStore,
  opts: { version: string; keyFile: string; passphrase?: string },
): Promise<string> {
  const file = store.scratch('export');
  try {
    await onlineBackup(live, file);
    const wrapped = opts.passphrase ? await wrapKey(loadSecretKey(opts.keyFile), opts.passphrase) : undefined;
    const snap = openFile(file);
    try {
      snap.exec('DROP TABLE IF EXISTS router_export; CREATE TABLE router_export (key TEXT PRIMARY KEY, value TEXT NOT NULL)');
      const put = snap.prepare('INSERT INTO router_export (key, value) VALUES (?, ?)');
      put.run('format', EXPORT_FORMAT);
      put.run('version', opts.version);
      put.run('createdAt', new Date().toISOString());
      put.run('migration', String(migrationLevel(snap)));
      if (wrapped) put.run('secretKey', JSON.stringify(wrapped));
    } finally {
      snap.close();
    }
    return file;
  } catch (err) {
    removeQuietly(file);
    throw err;
  }
}

/** An uploaded database made ready to replace router.db. */
export interface PreparedImport {
  file: string;
  fromMigration: number;
  migration: number;
  secrets: RekeyCounts;
}

function hasTable(db: Db, name: string): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?").get(name) !== undefined;
}

function readMagic(file: string): string {
  const fd = openSync(file, 'r');
  try {
    const buf = Buffer.alloc(16);
    const n = readSync(fd, buf, 0, 16, 0);
    return buf.subarray(0, n).toString('latin1');
  } finally {
    closeSync(fd);
  }
}

/**
 * Validates an uploaded file in place and turns it into a database this daemon can open: a SQLite file
 * that passes `quick_check`, holds router's tables and a migration level this build knows (never a newer
 * one), brought up to this build's level, its secrets made readable with this machine's key or marked for
 * re-entry. Any refusal is a 400 and leaves the live database untouched (the caller removes the file).
 */
export async function prepareImport(
  file: string,
  opts: { keyFile: string; passphrase?: string; migrationsDir?: string },
): Promise<PreparedImport> {
  if (readMagic(file) !== SQLITE_MAGIC) throw badRequest('The uploaded file is not a SQLite database (router exports and backups are).');
  let db: Db;
  try {
    db = openFile(file);
  } catch (err) {
    throw badRequest(`The uploaded file cannot be opened as a database: ${publicReason(err, 'it is not a readable SQLite file')}.`);
  }
  try {
    let check: string;
    try {
      check = (db.pragma('quick_check', { simple: true }) as string) ?? '';
    } catch (err) {
      throw badRequest(`The uploaded database is damaged: ${publicReason(err, 'its integrity check could not run')}.`);
    }
    if (check !== 'ok') throw badRequest(`The uploaded database is damaged (integrity check: ${String(check).slice(0, 200)}).`);
    if (!hasTable(db, 'schema_migrations') || !hasTable(db, 'api_keys') || !hasTable(db, 'provider_connections')) {
      throw badRequest('The uploaded database is not a router database (its tables are missing).');
    }
    const dir = opts.migrationsDir ?? MIGRATIONS_DIR;
    const known = readMigrations(dir).length;
    const fromMigration = migrationLevel(db);
    if (fromMigration === 0) throw badRequest('The uploaded database is not a router database (no migrations recorded).');
    if (fromMigration > known) {
      throw badRequest(
        `The uploaded database comes from a newer router (migration level ${fromMigration}; this build knows ${known}): upgrade router, then import it.`,
      );
    }
    checkImportSchema(db, dir, fromMigration);
    const meta = hasTable(db, 'router_export')
      ? Object.fromEntries((db.prepare('SELECT key, value FROM router_export').all() as Array<{ key: string; value: string }>).map((r) => [r.key, r.value]))
      : {};
    let imported: Buffer | undefined;
    if (opts.passphrase) {
      if (!meta.secretKey) throw badRequest('This file carries no secret key: import it without a passphrase (credentials then need re-entry).');
      let wrapped: unknown;
      try {
        wrapped = JSON.parse(meta.secretKey);
      } catch {
        wrapped = undefined;
      }
      imported = await unwrapKey(wrapped, opts.passphrase);
      if (!imported) throw badRequest('Wrong passphrase: the secret key in this file cannot be opened with it.');
    }
    try {
      migrate(db, dir);
    } catch (err) {
      if (err instanceof MigrationError) throw badRequest(`The uploaded database cannot be brought up to date: ${err.message}.`);
      throw err;
    }
    const secrets = rekeySecrets(db, loadSecretKey(opts.keyFile), imported);
    db.exec('DROP TABLE IF EXISTS router_export');
    return { file, fromMigration, migration: migrationLevel(db), secrets };
  } catch (err) {
    // A crafted file can make any step fail in its own way (a column of the wrong type, a constraint):
    // that is a refused upload, never a 500 with SQLite's text.
    if (err instanceof RouterError || !(err instanceof Database.SqliteError)) throw err;
    throw badRequest('The uploaded database cannot be imported: its contents do not match what router stores.');
  } finally {
    db.close();
  }
}
