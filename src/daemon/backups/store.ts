import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, readdirSync, renameSync, statSync, unlinkSync } from 'node:fs';
import { join } from 'node:path';
import type { BackupReason, BackupRecord } from '../../shared/wire.js';
import type { Db } from '../store/db.js';

/**
 * The backups folder of a state folder: one SQLite file per backup, named `<stamp>-<reason>-<4 hex>.db`
 * so the list needs no database of its own (a backup of the database cannot live inside it). The folder is
 * 0700 and every file 0600: a backup holds the same secrets (encrypted) and history as the database.
 */

const REASONS: readonly BackupReason[] = ['manual', 'daily', 'pre-migration', 'pre-import'];
const ID_RE = /^(\d{8}T\d{9}Z)-(manual|daily|pre-migration|pre-import)-([0-9a-f]{4})$/;

/** True when `id` names a backup (never a path: no separators, no dots). */
export function isBackupId(id: string): boolean {
  return ID_RE.test(id);
}

function stampOf(date: Date): string {
  return date.toISOString().replace(/[-:.]/g, '');
}

function dateOfStamp(stamp: string): string {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})(\d{3})Z$/.exec(stamp)!;
  return `${m[1]}-${m[2]}-${m[3]}T${m[4]}:${m[5]}:${m[6]}.${m[7]}Z`;
}

/** Pages copied per backup step at first (better-sqlite3's default). */
const FIRST_STEP_PAGES = 100;

/**
 * SQLite's online backup of `db` into `file`: pages are copied in steps between which the event loop runs
 * (requests keep flowing). A write through another connection (the usage writer's) between two steps
 * restarts the copy, so under steady traffic on a slow machine it could start over forever; each restart
 * doubles the pages per step, so after a few the rest goes in one step and the backup ends.
 */
export async function onlineBackup(db: Db, file: string): Promise<void> {
  let step = FIRST_STEP_PAGES;
  let remainingBefore = Number.POSITIVE_INFINITY;
  await db.backup(file, {
    progress: ({ remainingPages }) => {
      if (remainingPages >= remainingBefore) step *= 2; // no progress: the copy started over
      remainingBefore = remainingPages;
      return step;
    },
  });
}

/** Backups on disk: list, create (online, through SQLite's backup API), prune, remove. */
export class BackupStore {
  constructor(readonly dir: string) {}

  /** Creates the folder owner-only (and tightens it when a copy left it open). */
  ensureDir(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    chmodSync(this.dir, 0o700);
  }

  /** The file of a backup id (validated: never outside the folder). */
  fileOf(id: string): string | undefined {
    if (!isBackupId(id)) return undefined;
    const file = join(this.dir, `${id}.db`);
    try {
      statSync(file);
      return file;
    } catch {
      return undefined;
    }
  }

  /** Every backup, newest first. */
  list(): BackupRecord[] {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return [];
    }
    const out: BackupRecord[] = [];
    for (const name of names) {
      if (!name.endsWith('.db')) continue;
      const id = name.slice(0, -3);
      const m = ID_RE.exec(id);
      if (!m) continue;
      try {
        out.push({ id, createdAt: dateOfStamp(m[1]!), size: statSync(join(this.dir, name)).size, reason: m[2] as BackupReason });
      } catch {
        // removed meanwhile
      }
    }
    return out.sort((a, b) => b.id.localeCompare(a.id));
  }

  /** A new id and the temporary file a backup is written to before it is renamed into place. */
  private allocate(reason: BackupReason): { id: string; file: string; partial: string } {
    if (!REASONS.includes(reason)) throw new Error(`unknown backup reason ${reason}`);
    const id = `${stampOf(new Date())}-${reason}-${randomBytes(2).toString('hex')}`;
    const file = join(this.dir, `${id}.db`);
    return { id, file, partial: join(this.dir, `.${id}.partial`) };
  }

  private finish(id: string, partial: string, file: string): BackupRecord {
    chmodSync(partial, 0o600);
    renameSync(partial, file);
    return this.list().find((b) => b.id === id)!;
  }

  /**
   * A consistent copy of the live database while it serves: SQLite's online backup API (onlineBackup), which
   * copies pages in steps between which the event loop runs (requests keep flowing), and restarts or
   * follows along when the database changes meanwhile, so the copy is one point in time.
   */
  async create(db: Db, reason: BackupReason): Promise<BackupRecord> {
    this.ensureDir();
    const { id, file, partial } = this.allocate(reason);
    try {
      await onlineBackup(db, partial);
    } catch (err) {
      removeQuietly(partial);
      throw err;
    }
    return this.finish(id, partial, file);
  }

  /**
   * A backup of a database nobody else writes to (at start, before migrations): the WAL is checkpointed
   * into the main file, which is then copied. Synchronous, for the boot sequence.
   */
  createQuiescent(db: Db, dbFile: string, reason: BackupReason): BackupRecord {
    this.ensureDir();
    const { id, file, partial } = this.allocate(reason);
    db.pragma('wal_checkpoint(TRUNCATE)');
    copyFileSync(dbFile, partial);
    return this.finish(id, partial, file);
  }

  /** Removes automatic backups beyond the newest `keep` (manual ones stay until removed by the user). */
  prune(keep: number): string[] {
    const removed: string[] = [];
    const automatic = this.list().filter((b) => b.reason !== 'manual');
    for (const b of automatic.slice(keep)) {
      if (this.remove(b.id)) removed.push(b.id);
    }
    return removed;
  }

  remove(id: string): boolean {
    const file = this.fileOf(id);
    if (!file) return false;
    removeQuietly(file);
    return true;
  }

  /** A scratch file in the folder (same file system as the database, so a rename into place is atomic). */
  scratch(kind: 'export' | 'import'): string {
    this.ensureDir();
    return join(this.dir, `.${kind}-${randomBytes(8).toString('hex')}.tmp`);
  }
}

/** Deletes a file, ignoring one that is already gone. */
export function removeQuietly(file: string): void {
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
