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
