import type { KeySettings } from './settings.js';
import type { MemoryEntry, MemoryType, Scope } from './types.js';

/** A stored row with the internal fields the engine needs. */
export interface StoredMemory extends MemoryEntry {
  seq: number;
  embeddingSig: string | null;
  externalSig: string | null;
}

/** A row to insert: the engine chooses its id and time. */
export interface NewMemory {
  id: string;
  type: MemoryType;
  key: string;
  content: string;
  sessionId: string | null;
  apiKeyId: string | null;
  metadata: Record<string, unknown>;
  expiresAt: string | null;
  tokens: number;
  archived?: boolean;
}

/** The editable fields of a row, all given (the engine merges a patch into the current row first). */
export interface MemoryFields {
  type: MemoryType;
  key: string;
  content: string;
  metadata: Record<string, unknown>;
  tokens: number;
}

export interface ListFilter {
  apiKeyId: Scope;
  type?: MemoryType;
  sessionId?: string;
  q?: string;
  limit: number;
  offset: number;
}

export interface ListPage {
  data: StoredMemory[];
  total: number;
  tokensUsed: number;
  hit: number;
}

/**
 * The memory module's storage port: entries with their keyword index, the engine's meta record, stored
 * vectors with the nearest-neighbour index over them, and the engine's settings (one document, sealed Qdrant
 * key inside) and per-API-key settings. Implemented by `SqlMemoryRepository` over SQLite (FTS5, sqlite-vec
 * in the same file: one machine, as always) and PostgreSQL (a tsvector column with a GIN index; vectors as
 * rows, searched through a node-local sqlite-vec index rebuilt from them). test/memory/port.test.ts runs the
 * same checks, retrieval recall included, on both.
 *
 * Times are passed in (`now`) so both dialects compare the same ISO strings. Every row read hides nothing
 * unless said: `get*` and searches skip expired rows, searches and `bySeqs`/`byIds` archived ones too.
 */
export interface MemoryRepository {
  /** 'FTS5' on SQLite, 'tsvector' on PostgreSQL (engine status). */
  readonly keywordBackend: 'FTS5' | 'tsvector';
  /** Where the nearest-neighbour search runs (engine status). */
  readonly vectorBackend: string;

  // ---- rows
  insert(row: NewMemory, now: Date): Promise<void>;
  /** A row by id, expired or not. */
  getAny(id: string): Promise<StoredMemory | undefined>;
  /** A live row by id. */
  get(id: string, now: Date): Promise<StoredMemory | undefined>;
  bySeqs(seqs: readonly number[], now: Date): Promise<Map<number, StoredMemory>>;
  byIds(ids: readonly string[], now: Date): Promise<Map<string, StoredMemory>>;
  /** Writes the fields; `textChanged` drops both vector signatures (the vector is regenerated). */
  update(id: string, fields: MemoryFields, textChanged: boolean, now: Date): Promise<boolean>;
  /** Deletes rows and their vectors. */
  deleteMany(seqs: readonly number[]): Promise<void>;
  /** Rows whose expiry has passed (pruning deletes them). */
  expired(now: Date): Promise<StoredMemory[]>;
  /** Newest first, filtered and paged; expired rows never appear. */
  list(f: ListFilter, now: Date): Promise<ListPage>;
  touchHits(seqs: readonly number[], now: Date): Promise<void>;
  /** The newest live, unarchived row of a scope with this key (case-insensitive). */
  findByKey(scope: Scope, key: string, now: Date): Promise<StoredMemory | undefined>;
  /** Live, unarchived episodic rows of one scope created before `before`, oldest first (at most 2000). */
  episodicBefore(scope: Scope, before: Date, sessionId: string | undefined, now: Date): Promise<StoredMemory[]>;
  /** Scopes holding unarchived episodic rows. */
  episodicScopes(): Promise<Scope[]>;
  archive(seqs: readonly number[], now: Date): Promise<void>;

  // ---- keyword search
  /**
   * Keyword search over live, unarchived rows of the scopes, best first; the key weighs twice the content.
   * The score is higher-is-better. User text is reduced to plain terms: it can never be query syntax.
   */
  ftsSearch(text: string, scopes: readonly Scope[], limit: number, now: Date): Promise<Array<{ seq: number; score: number }>>;
  /** Whether the keyword index answers. */
  ftsAvailable(): Promise<boolean>;

  // ---- engine meta (embedding signature, probed widths)
  meta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string | null, now: Date): Promise<void>;

  // ---- vectors
  /**
   * Makes the stored vectors fit the active signature: kept when storage already holds this signature's
   * vectors (the node-local index is built from them where there is one), else every vector is dropped,
   * every row's embedding signature cleared and the signature recorded. True when they were reset.
   */
  adoptSignature(signature: string, dimensions: number): Promise<boolean>;
  /** Whether a vector index of the recorded signature exists. */
  hasVectorIndex(): Promise<boolean>;
  /** Stores a row's vector (replacing any) and records the signature on the row. */
  upsertVector(seq: number, scope: Scope, vector: Float32Array, signature: string): Promise<void>;
  /** Records that a row was embedded without a storable vector (nothing embeddable): not pending. */
  markEmbedded(seq: number, signature: string): Promise<void>;
  vector(seq: number): Promise<Float32Array | undefined>;
  /** K nearest neighbours among the partitions of the scopes, by cosine similarity (1 - distance). */
  knn(vector: Float32Array, scopes: readonly Scope[], k: number): Promise<Array<{ seq: number; similarity: number }>>;
  vecRowCount(): Promise<number>;
  /** Live rows whose vector does not carry the signature. */
  needsReindex(signature: string | null, now: Date): Promise<number>;
  pendingEmbedding(signature: string, limit: number, now: Date): Promise<StoredMemory[]>;
  /** Rows embedded with the signature but not yet in the external store. */
  pendingExternal(signature: string, limit: number, now: Date): Promise<StoredMemory[]>;
  setExternalSig(seqs: readonly number[], signature: string | null): Promise<void>;
  clearExternalSigs(): Promise<void>;
  /** Forces every row to be embedded again. */
  clearEmbeddingSigs(): Promise<void>;
  /**
   * Brings a node-local vector index up to date with storage (vectors written or deleted by other nodes,
   * another signature); nothing to do where storage is the index (SQLite).
   */
  syncVectors(): Promise<void>;

  // ---- settings
  /** The stored settings document (JSON), if any. */
  loadSettings(): Promise<string | undefined>;
  saveSettings(doc: string, now: Date): Promise<void>;
  loadKeySettings(): Promise<Array<{ apiKeyId: string; settings: KeySettings }>>;
  saveKeySettings(apiKeyId: string, s: KeySettings, now: Date): Promise<void>;

  /** Releases what the adapter holds on this node (a local vector index); the driver stays open. */
  close(): void;
}
