/**
 * Cloud sync wire types (docs/operations.md "Sync between machines"), shared by the daemon and the CLI.
 * `POST /api/sync/cloud {action}` runs one sync with the configured remote; the remote speaks the small
 * signed protocol below (a router at `/api/sync/cloud/remote`, or any HTTPS endpoint that stores snapshots).
 */

/** Header carrying `sha256=<hex HMAC-SHA256 of the raw body>` keyed by the shared secret (spec, Authentication: cloud sync replies carry an HMAC header verified before anything is applied). */
export const CLOUD_SIG_HEADER = 'x-cloud-sig';

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
  baseUrl: string;
  apiType: string;
  customHeaders: Record<string, string>;
  updatedAt: string;
}

export interface SyncCombo {
  name: string;
  strategy: string;
  models: unknown[];
  targetTimeoutMs: number | null;
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
  format: 'router-sync/1';
  exportedAt: string;
  routerVersion: string;
  connections: SyncConnection[];
  nodes: SyncNode[];
  combos: SyncCombo[];
  keys: SyncKey[];
  /** Setting name -> value and when it was last changed. */
  settings: Record<string, { value: unknown; updatedAt: string }>;
}

/** What a request to the remote carries (signed like replies). */
export interface SyncRemoteRequest {
  action: SyncAction;
  /** ISO time of sending; the remote refuses requests older than 5 minutes (replays). */
  sentAt: string;
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
