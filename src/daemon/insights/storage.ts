import { statfsSync, statSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Db } from '../store/db.js';
import type { BackupRecord } from '../../shared/wire.js';

/** A table and its row count. */
export interface TableCount {
  name: string;
  rows: number;
}

/** What `GET /api/storage/health` reports. */
export interface StorageHealth {
  database: { path: 'router.db'; bytes: number; walBytes: number; pageSize: number; pages: number; freePages: number; journalMode: string };
  tables: TableCount[];
  lastVacuum: { at: string; durationMs: number; bytesBefore: number; bytesAfter: number } | null;
  lastBackup: BackupRecord | null;
  backups: { count: number; bytes: number };
  disk: { freeBytes: number; totalBytes: number } | null;
}

function sizeOf(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

// A table name from sqlite_master, quoted for SQL (names are router's own, but quoting costs nothing).
const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Row counts of router's tables: sqlite_master's ordinary tables, without SQLite's own and the shadow
 * tables full-text and vector indexes keep (`<table>_<suffix>` of a virtual table), which count the
 * same rows again.
 */
export function tableCounts(db: Db): TableCount[] {
  const all = db.prepare("SELECT name, sql FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").all() as Array<{ name: string; sql: string | null }>;
  const virtual = all.filter((t) => /^CREATE VIRTUAL TABLE/i.test(t.sql ?? '')).map((t) => `${t.name}_`);
  const out: TableCount[] = [];
  for (const t of all) {
    if (virtual.some((prefix) => t.name.startsWith(prefix))) continue;
    try {
      out.push({ name: t.name, rows: (db.prepare(`SELECT COUNT(*) AS n FROM ${quote(t.name)}`).get() as { n: number }).n });
    } catch {
      // a virtual table whose module is not loaded: not countable here
    }
  }
  return out;
}

/** The database's sizes, row counts, last vacuum and backup, and the free space of its disk. */
export function storageHealth(db: Db, dbFile: string, backups: BackupRecord[]): StorageHealth {
  const pageSize = db.pragma('page_size', { simple: true }) as number;
  const pages = db.pragma('page_count', { simple: true }) as number;
  const freePages = db.pragma('freelist_count', { simple: true }) as number;
  const journalMode = db.pragma('journal_mode', { simple: true }) as string;
  const vacuum = db.prepare("SELECT at, duration_ms, bytes_before, bytes_after FROM storage_maintenance WHERE kind = 'vacuum' ORDER BY id DESC LIMIT 1").get() as
    | { at: number; duration_ms: number; bytes_before: number; bytes_after: number }
    | undefined;
  let disk: StorageHealth['disk'] = null;
  try {
    const s = statfsSync(dirname(dbFile));
    disk = { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
  } catch {
    // statfs unsupported on this platform
  }
  return {
    database: { path: 'router.db', bytes: sizeOf(dbFile), walBytes: sizeOf(`${dbFile}-wal`), pageSize, pages, freePages, journalMode },
    tables: tableCounts(db),
    lastVacuum: vacuum ? { at: new Date(vacuum.at).toISOString(), durationMs: vacuum.duration_ms, bytesBefore: vacuum.bytes_before, bytesAfter: vacuum.bytes_after } : null,
    lastBackup: backups[0] ?? null,
    backups: { count: backups.length, bytes: backups.reduce((n, b) => n + b.size, 0) },
    disk,
  };
}

/**
 * Rewrites the database file without its free pages (SQLite VACUUM), then truncates the WAL, and records
 * when. Blocks the event loop while it runs (seconds for a large request log): an operator's action.
 */
export function vacuum(db: Db, dbFile: string): NonNullable<StorageHealth['lastVacuum']> {
  const before = sizeOf(dbFile) + sizeOf(`${dbFile}-wal`);
  const t0 = performance.now();
  db.exec('VACUUM');
  db.pragma('wal_checkpoint(TRUNCATE)');
  const durationMs = Math.round((performance.now() - t0) * 100) / 100;
  const after = sizeOf(dbFile) + sizeOf(`${dbFile}-wal`);
  const at = Date.now();
  db.prepare("INSERT INTO storage_maintenance (kind, at, duration_ms, bytes_before, bytes_after) VALUES ('vacuum', ?, ?, ?, ?)").run(at, durationMs, before, after);
  return { at: new Date(at).toISOString(), durationMs, bytesBefore: before, bytesAfter: after };
}
