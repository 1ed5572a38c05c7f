/** Wire types of credential import (keychain discovery and token files), shared by the daemon and the CLI. */

/** One importable account found on the daemon's machine. */
export interface DiscoveredAccount {
  /** Keychain service name, or the credential file as `~/<path>`; never contains `:`. */
  service: string;
  /** The account within the service (keychain account, email, user). */
  account: string;
  /** Keyed hash of the account's current tokens; confirm with it. Reveals no secret. */
  fingerprint: string;
  /** Router provider the account belongs to. */
  provider: string;
  kind: 'file' | 'keychain';
  /** When the stored access token expires, if known (ISO). */
  expiresAt: string | null;
  /** False when this router has no such provider (it is listed, not importable). */
  importable: boolean;
}

/** `POST /api/providers/keychain/discover`. */
export interface DiscoverReply {
  accounts: DiscoveredAccount[];
}

/** One account the user confirmed, as discover listed it. */
export interface ConfirmedAccount {
  service: string;
  account: string;
  fingerprint: string;
}

/** A connection made or refreshed by an import (secrets never included). */
export interface ImportedConnectionSummary {
  id: string;
  provider: string;
  name: string;
  /** False when an earlier import's connection was refreshed instead. */
  created: boolean;
  expiresAt: string | null;
}

/** `POST /api/providers/keychain/import`. */
export interface KeychainImportReply {
  imported: Array<{ service: string; account: string; connection: ImportedConnectionSummary }>;
  /** `changed`: the tokens changed since discovery (fingerprint mismatch); `not_found`: gone; `unsupported`: no such provider. */
  skipped: Array<{ service: string; account: string; reason: 'changed' | 'not_found' | 'unsupported' }>;
  /** Set only by the legacy single-step import (opt-in setting `keychainLegacyImport`). */
  deprecated?: string;
}

/** `POST /api/providers/agy-auth/*`. */
export interface TokenImportReply {
  imported: ImportedConnectionSummary[];
  /** Archive entries that were not token files (zip-extract only). */
  ignored?: string[];
}

/** One provider API key found in the environment of `router setup` (its base URL variable too, when set). */
export interface EnvCredential {
  /** The variable that held the key, e.g. `OPENAI_API_KEY`; the connection remembers it as `env:<variable>`. */
  variable: string;
  provider: string;
  apiKey: string;
  /** The provider's base URL as router stores it (with the API version path), when the environment set one. */
  baseUrl?: string;
}

/** What `POST /api/providers/env/import` did with one credential, and what its upstream said of it. */
export interface EnvImportResult {
  variable: string;
  provider: string;
  connectionId: string | null;
  /** `unchanged`: the connection from an earlier run holds this key and base URL already. */
  action: 'created' | 'updated' | 'unchanged' | 'unsupported';
  /** The connection test (its upstream's model list): the upstream's own reason when it refused. */
  test: { ok: boolean; error?: string } | null;
}

/** `POST /api/providers/env/import`. */
export interface EnvImportReply {
  results: EnvImportResult[];
}
