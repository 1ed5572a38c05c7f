import { createHmac, randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { hostname, userInfo, homedir } from 'node:os';
import { dirname } from 'node:path';

/** The machine identity the CLI token is derived from: machine id, user and home folder. */
function machineIdentity(): string {
  let machineId = '';
  for (const file of ['/etc/machine-id', '/var/lib/dbus/machine-id']) {
    try {
      machineId = readFileSync(file, 'utf8').trim();
      if (machineId) break;
    } catch {
      // not on this system; try the next source
    }
  }
  if (!machineId) machineId = `host:${hostname()}`;
  let user = '';
  try {
    user = userInfo().username;
  } catch {
    user = String(process.getuid?.() ?? '');
  }
  return `${machineId}\0${user}\0${homedir()}`;
}

/** Reads the salt, creating it (mode 0600) when `create` is set and it does not exist yet. */
export function readSalt(saltFile: string, create: boolean): Buffer | undefined {
  try {
    return readFileSync(saltFile);
  } catch (err) {
    if (!create || (err as NodeJS.ErrnoException).code !== 'ENOENT') return undefined;
  }
  mkdirSync(dirname(saltFile), { recursive: true, mode: 0o700 });
  try {
    writeFileSync(saltFile, randomBytes(32), { mode: 0o600, flag: 'wx' });
  } catch (err) {
    // Another process created it first: use theirs.
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  return readFileSync(saltFile);
}

/**
 * The CLI token: HMAC-SHA256 of the machine identity keyed by the state folder's random salt. The CLI and
 * the daemon derive the same value; only a process that can read the 0600 salt file can produce it.
 */
export function deriveCliToken(saltFile: string, create = false): string | undefined {
  const salt = readSalt(saltFile, create);
  if (!salt) return undefined;
  return createHmac('sha256', salt).update(machineIdentity()).digest('base64url');
}
