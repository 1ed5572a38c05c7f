/**
 * How a request-log entry names what it refers to: the provider as people read it (a node's prefix), the
 * API key's and the connection's names next to their ids (null when not set or deleted since). The request
 * log, the live channel and the inspector show these instead of UUIDs.
 */
import type { KeyStore } from '../keys/store.js';
import type { ConnectionStore } from '../providers/connections.js';

export interface EntryNames {
  provider: string;
  apiKeyName: string | null;
  connectionName: string | null;
}

export interface NameSources {
  label: (providerId: string) => string;
  keys: Pick<KeyStore, 'get'>;
  connections: Pick<ConnectionStore, 'get'>;
}

/** The names of one entry (map lookups only: the live channel calls this once per recorded request). */
export function entryNames(src: NameSources, e: { providerId: string; apiKeyId: string | null; connectionId: string | null }): EntryNames {
  return {
    provider: src.label(e.providerId),
    apiKeyName: e.apiKeyId ? (src.keys.get(e.apiKeyId)?.name ?? null) : null,
    connectionName: e.connectionId ? (src.connections.get(e.connectionId)?.name ?? null) : null,
  };
}
