import type { ProviderNode } from '../../shared/records.js';
import type { AuthKind } from './types.js';

/**
 * A connection as stored: its credential still sealed (`secretsEnc`, AES-256-GCM bound to the connection id;
 * the ConnectionStore seals and opens it, never the adapter) and its provider-specific data as JSON text.
 */
export interface StoredConnection {
  id: string;
  provider: string;
  name: string;
  authKind: AuthKind;
  secretsEnc: string | null;
  expiresAt: string | null;
  priority: number;
  providerSpecificData: string;
  isActive: boolean;
  testStatus: string | null;
  lastError: string | null;
  lastTestedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** The columns a connection update may write; absent ones keep what storage holds (another node's write included). */
export type ConnectionColumns = Partial<Omit<StoredConnection, 'id' | 'provider' | 'createdAt'>> & { updatedAt: string };

/** A synced model row. */
export interface StoredModel {
  provider: string;
  modelId: string;
  contextLength: number | null;
}

/** What a node write came to: stored, refused because its prefix is taken, or no such node. */
export type NodeWrite = 'stored' | 'prefix-taken' | 'missing';

/**
 * The providers module's storage port: custom provider nodes (`provider_nodes`), connections with their
 * sealed credentials (`provider_connections`) and models synced from upstreams (`provider_models`). One port
 * for the three tables: they are one module's records (a node's connections are stored under its id) and one
 * adapter serves them. Each store keeps its own snapshot and change topic (providers/nodes.ts,
 * connections.ts, models.ts); the port is touched at start, by writes and by reloads, never per request.
 * Implemented over SQLite and PostgreSQL by `SqlProviderRepository` (test/providers/port.test.ts).
 */
export interface ProviderRepository {
  /** Every node, oldest first. */
  loadNodes(): Promise<ProviderNode[]>;
  insertNode(node: ProviderNode): Promise<Exclude<NodeWrite, 'missing'>>;
  /** Writes every field but id and createdAt. */
  updateNode(node: ProviderNode): Promise<NodeWrite>;
  /** False when there was no such node (its connections are removed through the connection store). */
  removeNode(id: string): Promise<boolean>;

  /** Every connection, by priority then creation time. */
  loadConnections(): Promise<StoredConnection[]>;
  /** One connection as storage holds it now (the OAuth refresh re-reads under its lock). */
  getConnection(id: string): Promise<StoredConnection | undefined>;
  insertConnection(row: StoredConnection): Promise<void>;
  /** Writes only the given columns; false when there is no such connection. */
  updateConnection(id: string, columns: ConnectionColumns): Promise<boolean>;
  removeConnection(id: string): Promise<boolean>;
  /** One sealed credential (id and sealed text), the sample a sealing key is checked on; undefined when none. */
  sealedSample(): Promise<{ id: string; secretsEnc: string } | undefined>;

  /** Every synced model, by model id. */
  loadModels(): Promise<StoredModel[]>;
  /** Replaces a provider's synced models in one transaction (an empty list removes them). */
  replaceModels(provider: string, models: ReadonlyArray<{ id: string; contextLength: number | null }>, syncedAt: string): Promise<void>;
}

/**
 * Loads with `load` until no local write (counted by `writes`) happened while it ran: a reload that read a
 * row before this node's own write landed would otherwise put the older row back into the snapshot.
 */
export async function settledLoad<T>(writes: () => number, load: () => Promise<T>): Promise<T> {
  for (;;) {
    const seen = writes();
    const rows = await load();
    if (seen === writes()) return rows;
  }
}
