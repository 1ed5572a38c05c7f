/** Wire types of the management API, shared by the daemon and the CLI's typed client. */

export interface HealthReply {
  status: 'ok';
  version: string;
}

export interface StatusReply {
  running: boolean;
  pid: number | null;
  url: string | null;
  version: string | null;
  uptimeSeconds: number | null;
  /** The daemon's state folder. */
  home: string | null;
  /** Facts about the machine and process (`GET /api/system/status` only). */
  host?: HostFacts;
  /** `single` on one machine, `cluster` on a shared database (absent when not running). */
  mode?: 'single' | 'cluster';
  /** This daemon's node id (absent when not running). */
  nodeId?: string;
}

/** `GET /api/system/status` `host`: what an operator asks first about a running daemon. */
export interface HostFacts {
  /** Node.js version (`v20.19.0`). */
  node: string;
  /** `linux`, `darwin`, `win32`... and the CPU architecture. */
  platform: string;
  arch: string;
  /** The database file and its size in bytes (with its write-ahead log). */
  database: { path: string; sizeBytes: number };
  /** The state folder (database, logs, keys, backups). */
  dataFolder: string;
  uptimeSeconds: number;
  /** Where the daemon listens: the bound address and the URLs that reach it. */
  listening: Array<{ host: string; port: number; url: string }>;
}

/** `POST /api/system/restart`: the daemon answers, then stops gracefully and starts again as a new process. */
export interface RestartReply {
  ok: true;
  /** The pid of the daemon that is stopping; the new one writes its own pid file. */
  pid: number;
  restarting: true;
}

/** `POST /api/system/shutdown`: what the daemon drains before it exits. */
export interface ShutdownReply {
  ok: true;
  pid: number;
  /** Proxied requests still in flight, and how many of them are streaming. */
  inFlight: number;
  openStreams: number;
  /** How long the daemon lets them finish before it closes their connections. */
  graceMs: number;
}

/** How long a stopping daemon lets in-flight requests finish. */
export const SHUTDOWN_GRACE_MS = 10_000;

/** Content of the pid file: enough for the CLI to find the running daemon. */
export interface PidFile {
  pid: number;
  host: string;
  port: number;
  url: string;
  startedAt: string;
  version: string;
}

export interface ApiKeyRecord {
  id: string;
  name: string;
  /** Masked form, e.g. `rk_AbCd...wxyz`; the whole key is only in the create reply. */
  maskedKey: string;
  scopes: string[];
  isActive: boolean;
  createdAt: string;
  lastUsedAt: string | null;
}

export interface CreatedApiKey extends ApiKeyRecord {
  key: string;
}

export interface ErrorReply {
  error: { message: string; type: string; code: string; [k: string]: unknown };
}

/** Messages the detached daemon sends its starter over IPC while starting. */
export type DaemonMessage =
  | { type: 'ready'; nonce: string; pid: number; url: string }
  | { type: 'already-running'; nonce: string; pid: number; url: string }
  | { type: 'error'; nonce: string; message: string };

/** Why a database backup was made. */
export type BackupReason = 'manual' | 'daily' | 'pre-migration' | 'pre-import';

/** One backup in the state folder's `backups/` (`GET /api/db-backups`). */
export interface BackupRecord {
  id: string;
  createdAt: string;
  /** Bytes. */
  size: number;
  reason: BackupReason;
}

/** Header carrying the passphrase of `POST /api/db-backups/import` (its body is the file itself). */
export const BACKUP_PASSPHRASE_HEADER = 'x-router-backup-passphrase';

/** `POST /api/db-backups/import`: what was applied. The daemon restarts right after this reply. */
export interface ImportReply {
  ok: true;
  /** The backup of the database that was replaced. */
  safetyBackup: BackupRecord;
  /** Migration level of the imported file, and this build's. */
  fromMigration: number;
  migration: number;
  /** Encrypted values (connections, webhook secrets, secret settings) readable after the import, and those that need re-entry. */
  secrets: { kept: number; reencrypted: number; needReentry: number };
  restarting: true;
}
