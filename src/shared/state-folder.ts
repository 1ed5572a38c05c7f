import { chmodSync, mkdirSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What `ensureStateFolder` had to do; the daemon logs each tightening. */
export interface StateFolderReport {
  created: boolean;
  /** Paths whose mode let the group or others in, now owner-only. */
  tightened: string[];
}

/** Files of a state folder that hold secrets or private data: owner read/write only. */
export const PRIVATE_FILES = ['router.db', 'router.db-wal', 'router.db-shm', 'router.log', 'secret.key', 'cli-token.salt', 'router.pid'];

/** The folder of database backups inside the state folder (see paths.ts `backups`). */
const BACKUPS_FOLDER = 'backups';

/** Creates the state folder owner-only (0700), missing parents included; true when it did not exist. */
export function createStateFolder(home: string): boolean {
  try {
    statSync(home);
    return false;
  } catch {
    mkdirSync(home, { recursive: true, mode: 0o700 });
    return true;
  }
}

/**
 * Creates the state folder when missing, and tightens a folder or private files that a user, an older
 * build or a restored copy left readable by others. The daemon runs it (and logs each tightening).
 */
export function ensureStateFolder(home: string): StateFolderReport {
  const created = createStateFolder(home);
  const tightened: string[] = [];
  const tighten = (path: string, mode: number) => {
    let current: number;
    try {
      current = statSync(path).mode & 0o777;
    } catch {
      return;
    }
    if ((current & 0o077) === 0) return;
    chmodSync(path, mode);
    tightened.push(path);
  };
  tighten(home, 0o700);
  for (const name of PRIVATE_FILES) tighten(join(home, name), 0o600);
  // Database backups hold what the database holds: the folder and every file in it are owner-only.
  const backups = join(home, BACKUPS_FOLDER);
  tighten(backups, 0o700);
  let names: string[] = [];
  try {
    names = readdirSync(backups);
  } catch {
    // no backups yet
  }
  for (const name of names) tighten(join(backups, name), 0o600);
  return { created, tightened };
}
