/**
 * Backups of the files `router config-tool` and `router setup` change, kept in the state folder: one entry per run, a stack
 * per tool. Undo restores the newest entry byte for byte, and refuses when the files changed since router
 * wrote them (unless forced), so it never throws away edits made afterwards.
 */
import { createHash } from 'node:crypto';
import { chmodSync, copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

export interface BackupFile {
  path: string;
  /** False when router created the file: undo deletes it. */
  existed: boolean;
  /** Name of the copy inside the entry folder (when it existed). */
  backup?: string;
  /** Mode bits of the original (restored on undo). */
  mode?: number;
  /** SHA-256 of what router wrote, to notice later edits. */
  writtenSha256: string;
  /** SHA-256 of what router wrote less what the tool itself rewrites on every run (see `ToolDef.stable`). */
  stableSha256?: string;
}

export interface BackupEntry {
  tool: string;
  createdAt: string;
  configHome: string;
  /** The API key router created for the tool, if it did. */
  keyId: string | null;
  files: BackupFile[];
  /** The entry's folder (not stored). */
  dir?: string;
}

export const sha256 = (data: string | Buffer) => createHash('sha256').update(data).digest('hex');

export function readOrNull(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/** Writes through a temporary file and a rename, so a crash never leaves a half-written config. */
export function writeAtomic(file: string, content: string, mode: number): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.router-tmp-${process.pid}`;
  writeFileSync(tmp, content, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, file);
}

const toolDir = (stateHome: string, tool: string) => join(stateHome, 'config-tool', tool);

/** Copies the current files into a new entry before they are changed. */
export function createBackup(
  stateHome: string,
  entry: Omit<BackupEntry, 'createdAt' | 'files'>,
  files: Array<{ path: string; writtenSha256: string; stableSha256?: string }>,
): BackupEntry {
  const createdAt = new Date().toISOString();
  const dir = join(toolDir(stateHome, entry.tool), `${createdAt.replace(/[-:.]/g, '')}-${process.pid}`);
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const list: BackupFile[] = files.map((f, i) => {
    const hashes = { writtenSha256: f.writtenSha256, ...(f.stableSha256 ? { stableSha256: f.stableSha256 } : {}) };
    if (!existsSync(f.path)) return { path: f.path, existed: false, ...hashes };
    const backup = `file-${i}`;
    copyFileSync(f.path, join(dir, backup));
    chmodSync(join(dir, backup), 0o600);
    return { path: f.path, existed: true, backup, mode: statSync(f.path).mode & 0o777, ...hashes };
  });
  const full: BackupEntry = { ...entry, createdAt, files: list };
  writeFileSync(join(dir, 'manifest.json'), `${JSON.stringify(full, null, 2)}\n`, { mode: 0o600 });
  return { ...full, dir };
}

/** The newest backup entry of a tool for a config home, if any. */
export function latestBackup(stateHome: string, tool: string, configHome: string): BackupEntry | undefined {
  return backupEntries(stateHome, tool).find((e) => e.configHome === configHome);
}

/**
 * Files of an entry that changed since router wrote them. `stable` takes out what the tool itself rewrites
 * on every run (a timestamp): a file that differs only there was not edited by anyone.
 */
export function changedSince(entry: BackupEntry, stable?: (file: string, text: string) => string): string[] {
  return entry.files
    .filter((f) => {
      const now = readOrNull(f.path);
      if (now === null) return true;
      if (sha256(now) === f.writtenSha256) return false;
      return !(stable && f.stableSha256 && sha256(stable(f.path, now)) === f.stableSha256);
    })
    .map((f) => f.path);
}

/** The content each file had before the entry's run (null: it did not exist). */
export function originalContent(entry: BackupEntry, f: BackupFile): string | null {
  return f.existed ? readFileSync(join(entry.dir!, f.backup!), 'utf8') : null;
}

/** Restores every file of the entry byte for byte (or deletes the ones router created) and drops the entry. */
export function restore(entry: BackupEntry): void {
  for (const f of entry.files) {
    if (!f.existed) {
      try {
        unlinkSync(f.path);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      }
      continue;
    }
    const tmp = `${f.path}.router-tmp-${process.pid}`;
    copyFileSync(join(entry.dir!, f.backup!), tmp);
    chmodSync(tmp, f.mode ?? 0o600);
    renameSync(tmp, f.path);
  }
  rmSync(entry.dir!, { recursive: true, force: true });
}

/** Every backup entry of a tool (any config home), newest first. */
export function backupEntries(stateHome: string, tool: string): BackupEntry[] {
  const root = toolDir(stateHome, tool);
  let names: string[] = [];
  try {
    names = readdirSync(root).sort().reverse();
  } catch {
    return [];
  }
  const out: BackupEntry[] = [];
  for (const name of names) {
    try {
      out.push({ ...(JSON.parse(readFileSync(join(root, name, 'manifest.json'), 'utf8')) as BackupEntry), dir: join(root, name) });
    } catch {
      // an incomplete entry (interrupted run): skip it
    }
  }
  return out;
}
