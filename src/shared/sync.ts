/**
 * Cloud sync wire types (docs/operations.md "Sync between machines"), shared by the daemon and the CLI.
 * `POST /api/sync/cloud {action}` runs one sync with the configured remote; the remote speaks the small
 * signed protocol below (a router at `/api/sync/cloud/remote`, or any HTTPS endpoint that stores snapshots).
 */

/** Header carrying `sha256=<hex HMAC-SHA256 of the raw body>` keyed by the shared secret (spec, Authentication: cloud sync replies carry an HMAC header verified before anything is applied). */
export const CLOUD_SIG_HEADER = 'x-cloud-sig';
/**
 * Header of every request to a remote, checked before a byte of the body is read:
 * `nonce=<32 hex>;sent=<epoch ms>;length=<body bytes>;sha256=<hex HMAC-SHA256 of "router-sync-request/2\n<nonce>\n<sent>\n<length>">`
 * keyed by the shared secret. The body repeats the nonce (and is signed by X-Cloud-Sig), which binds the two.
 */
export const CLOUD_AUTH_HEADER = 'x-cloud-sync-auth';
/** Snapshot format on the wire; a peer speaking another one is refused. */
export const SYNC_FORMAT = 'router-sync/2';
/** Largest request or reply body of the sync protocol, bytes: a remote refuses a larger request before reading it. */
export const SYNC_MAX_BODY_BYTES = 8 * 1024 * 1024;

export type SyncAction = 'push' | 'pull' | 'status';

/** A secret value sealed with a key derived from the shared secret (AES-256-GCM). */
export interface Sealed {
  sealed: string;
}

export interface SyncConnection {
  provider: string;
  name: string;
  authKind: string;
  priority: number;
  isActive: boolean;
  expiresAt: string | null;
  updatedAt: string;
  /** The credential and providerSpecificData, sealed; applied only when overwriteCredentials is on. */
  secrets: Sealed;
}

export interface SyncNode {
  name: string;
  prefix: string;
  type: string;
  apiType: string;
  completions: boolean;
  rerankFormat: string;
  /**
   * `{baseUrl, customHeaders}` sealed (a URL or a header may carry a credential). A changed base URL, or a
   * new node, is applied only with applySecurityChanges; custom headers only with overwriteCredentials.
   */
  secrets: Sealed;
  updatedAt: string;
}

export interface SyncCombo {
  name: string;
  strategy: string;
  models: unknown[];
  targetTimeoutMs: number | null;
  /** Missing from peers older than combo affinity: `off`. */
  affinity?: string;
  /** Missing from peers older than hedging, recovery mid-stream and context fit: off. */
  hedgeAfterMs?: number | null;
  midStreamRecovery?: string | null;
  contextFit?: boolean;
  updatedAt: string;
}

/** An API key's metadata (never its secret or hash): applied to the key of the same name. */
export interface SyncKey {
  name: string;
  scopes: string[];
  isActive: boolean;
  dailyRequestLimit: number | null;
  tokenLimits: unknown[];
  updatedAt: string;
}

/** One router's configuration as sync carries it. */
export interface SyncSnapshot {
  format: typeof SYNC_FORMAT;
  exportedAt: string;
  routerVersion: string;
  connections: SyncConnection[];
  nodes: SyncNode[];
  combos: SyncCombo[];
  keys: SyncKey[];
  /** Setting name -> value and when it was last changed; a credential setting's value is Sealed. */
  settings: Record<string, { value: unknown; updatedAt: string }>;
}

/** What a request to the remote carries (signed like replies). */
export interface SyncRemoteRequest {
  action: SyncAction;
  /** ISO time of sending; the remote refuses requests more than 5 minutes off its clock. */
  sentAt: string;
  /** Random, once per request (the same as in X-Cloud-Sync-Auth): the remote refuses a nonce it has seen; its reply echoes it. */
  nonce: string;
  snapshot?: SyncSnapshot;
}

/** One record a sync looked at and what it did with it. */
export interface SyncChange {
  kind: 'connection' | 'node' | 'combo' | 'key' | 'setting';
  name: string;
  /** created, updated, kept-local (local is newer), skipped (with reason). */
  result: 'created' | 'updated' | 'kept-local' | 'skipped';
  reason?: string;
}

/** What applying a snapshot did: changes and conflicts, record by record. */
export interface SyncReport {
  changes: SyncChange[];
  unchanged: number;
}

/** Reply of POST /api/sync/cloud. */
export interface SyncReply {
  action: SyncAction;
  /** For pull: what was applied here; for push: what the remote applied. */
  report?: SyncReport;
  /** For status: the remote's snapshot time and counts, and this router's last sync. */
  remote?: { exportedAt: string | null; counts: Record<string, number> };
  lastSync?: { action: SyncAction; at: string } | null;
}
