import { readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import type { PidFile } from './wire.js';

/** True when a process with this pid exists (signal 0 checks without signalling). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !isZombie(pid);
}

/**
 * An exited process not yet reaped by its parent still answers signal 0. A detached daemon's parent is
 * init, and container inits often reap late or never, so a zombie must count as stopped.
 */
function isZombie(pid: number): boolean {
  if (process.platform !== 'linux') return false;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.charAt(stat.lastIndexOf(')') + 2) === 'Z';
  } catch {
    return false;
  }
}

/** Reads the pid file; undefined when missing or unreadable. */
export function readPidFile(file: string): PidFile | undefined {
  try {
    const data = JSON.parse(readFileSync(file, 'utf8')) as PidFile;
    return Number.isInteger(data.pid) ? data : undefined;
  } catch {
    return undefined;
  }
}

export type LockResult = { ok: true } | { ok: false; holder: PidFile };

/**
 * Claims the pid file with an exclusive create. A file left by a dead process (kill -9, crash, reboot) is
 * stale: it is removed and the claim retried, so it never blocks a new start.
 */
export function claimPidFile(file: string, content: PidFile): LockResult {
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      writeFileSync(file, JSON.stringify(content), { flag: 'wx', mode: 0o600 });
      return { ok: true };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
    const holder = readPidFile(file);
    if (holder && holder.pid !== content.pid && isAlive(holder.pid)) return { ok: false, holder };
    try {
      unlinkSync(file);
    } catch {
      // someone else removed it first; retry the claim
    }
  }
  throw new Error(`cannot claim the pid file ${file}`);
}

/** Rewrites our own pid file (after listening, with the final URL). */
export function updatePidFile(file: string, content: PidFile): void {
  writeFileSync(file, JSON.stringify(content), { mode: 0o600 });
}

/** Removes the pid file if it is still ours. */
export function releasePidFile(file: string, pid: number): void {
  const holder = readPidFile(file);
  if (holder && holder.pid !== pid) return;
  try {
    unlinkSync(file);
  } catch {
    // already gone
  }
}
