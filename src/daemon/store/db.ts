import Database from 'better-sqlite3';
import * as sqliteVec from 'sqlite-vec';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export type Db = Database.Database;

/**
 * Opens the one better-sqlite3 handle the daemon uses: WAL (readers never block the writer), foreign keys
 * on, a busy timeout so a concurrent CLI backup cannot fail us with SQLITE_BUSY, and sqlite-vec loaded.
 */
export function openDatabase(file: string): Db {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  const db = new Database(file);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  sqliteVec.load(db);
  return db;
}

/** Checkpoints the WAL and closes the handle, so a stopped daemon leaves one self-contained file. */
export function closeDatabase(db: Db): void {
  if (!db.open) return;
  try {
    db.pragma('wal_checkpoint(TRUNCATE)');
  } finally {
    db.close();
  }
}
