import type { Logger } from '../logger.js';
import type { EmbeddingSelector } from './embedding/selector.js';
import { isZero } from './embedding/source.js';
import { QdrantStore, type ExternalPoint } from './external.js';
import type { MemorySettings } from './settings.js';
import type { MemoryRepository, StoredMemory } from './port.js';
import { partitionOf } from './vector-storage.js';
import { memoryText } from './tokens.js';

const BATCH = 64;
const RETRY_MS = 30_000;

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** What the index reads from the engine that owns it. */
export interface VectorIndexDeps {
  store: MemoryRepository;
  log: Logger;
  /** Tells the other nodes that vectors changed (the engine publishes the 'memory' topic). */
  changed(): void;
  sources: EmbeddingSelector;
  settings(): MemorySettings;
  closed(): boolean;
  /** Runs `fn` after `ms` unless the engine closed meanwhile (timers owned by the engine). */
  later(ms: number, fn: () => void): void;
}

/**
 * The vectors of memory entries: the embedded store (sqlite-vec, rows in MemoryStore) and an optional
 * external one (Qdrant). Rows are embedded when written; whatever fails, or predates the active embedding
 * signature, is caught up by a single-flight background reindex, which also pushes rows the external store
 * missed while it was down.
 */
export class VectorIndex {
  external: QdrantStore | null;
  lastError: string | null = null;
  private externalSig: string | null = null;
  private run?: Promise<void>;
  private again = false;

  constructor(private readonly deps: VectorIndexDeps) {
    this.external = this.buildExternal();
  }

  /** A reindex in flight, if any (the engine's idle() waits for it). */
  get running(): Promise<void> | undefined {
    return this.run;
  }

  private buildExternal(): QdrantStore | null {
    const s = this.deps.settings();
    return s.qdrantUrl ? new QdrantStore(s.qdrantUrl, s.qdrantCollection, s.qdrantApiKey, s.qdrantTimeoutMs) : null;
  }

  /** The external store's settings changed: a new client, and every row is pushed again. */
  async resetExternal(): Promise<void> {
    this.external = this.buildExternal();
    this.externalSig = null;
    await this.deps.store.clearExternalSigs();
    await this.deps.store.setMeta('external_signature', null, new Date());
  }

  /** Makes sure the external collection fits the active signature (recreated when it does not). */
  async ensureExternal(sig: string, dims: number): Promise<boolean> {
    const ext = this.external;
    if (!ext) return false;
    if (this.externalSig === sig) return true;
    const { store } = this.deps;
    const wanted = `${ext.url}|${ext.collection}|${sig}`;
    const recorded = await store.meta('external_signature');
    await ext.ensureCollection(dims, recorded !== wanted);
    if (this.deps.closed()) return false;
    if (recorded !== wanted) {
      await store.clearExternalSigs();
      await store.setMeta('external_signature', wanted, new Date());
    }
    this.externalSig = sig;
    return true;
  }

  private async pushExternal(rows: StoredMemory[], vectors: Map<number, Float32Array>, sig: string, dims: number): Promise<void> {
    if (!this.external || rows.length === 0) return;
    if (!(await this.ensureExternal(sig, dims))) return;
    const points: ExternalPoint[] = [];
    for (const r of rows) {
      const v = vectors.get(r.seq);
      if (v) points.push({ id: r.id, vector: v, payload: { scope: partitionOf(r.apiKeyId), seq: r.seq } });
    }
    await this.external.upsert(points);
    if (!this.deps.closed()) await this.deps.store.setExternalSig(rows.map((r) => r.seq), sig);
  }

  /** Embeds rows now with the active source; failures leave them pending for the background reindex. */
  async index(rows: StoredMemory[]): Promise<void> {
    const { sources, store } = this.deps;
    const source = sources.active;
    const sig = sources.activeSig;
    if (!source || !sig || rows.length === 0) return;
    const vectors = new Map<number, Float32Array>();
    try {
      const vecs = await sources.embed(rows.map((r) => memoryText(r.key, r.content)), source);
      if (this.deps.closed() || sig !== sources.activeSig) return;
      try {
        for (const [i, r] of rows.entries()) {
          const v = vecs[i]!;
          if (!(await store.getAny(r.id))) continue; // deleted meanwhile
          if (isZero(v)) await store.markEmbedded(r.seq, sig);
          else {
            await store.upsertVector(r.seq, r.apiKeyId, v, sig);
            vectors.set(r.seq, v);
          }
        }
      } finally {
        this.deps.changed();
      }
    } catch (err) {
      this.lastError = message(err);
      if (this.deps.settings().autoReindex) this.deps.later(RETRY_MS, () => this.schedule());
      return;
    }
    this.lastError = null;
    try {
      await this.pushExternal(rows.filter((r) => vectors.has(r.seq)), vectors, sig, source.dimensions);
    } catch (err) {
      this.deps.log.warn('memory: external vector store write failed', { error: message(err) });
    }
  }

  /** Starts the background reindex (single flight; a request during a run makes it go round again). */
  schedule(): Promise<void> {
    if (this.run) {
      this.again = true;
      return this.run;
    }
    const run = (async () => {
      do {
        this.again = false;
        await this.pass();
      } while (this.again && !this.deps.closed());
    })().finally(() => {
      this.run = undefined;
    });
    this.run = run;
    return run;
  }

  private async pass(): Promise<void> {
    const { sources, store, log } = this.deps;
    const source = sources.active;
    const sig = sources.activeSig;
    if (!source || !sig) return;
    for (;;) {
      await new Promise((r) => setImmediate(r));
      if (this.deps.closed() || sig !== sources.activeSig) return;
      const rows = await store.pendingEmbedding(sig, BATCH, new Date());
      if (rows.length === 0) break;
      this.lastError = null;
      await this.index(rows);
      if (this.lastError) {
        log.warn('memory: reindex batch failed; retrying later', { error: this.lastError });
        return;
      }
    }
    // External catch-up: rows embedded while the external store was down or before it was configured.
    if (!this.external) return;
    try {
      for (;;) {
        await new Promise((r) => setImmediate(r));
        if (this.deps.closed() || sig !== sources.activeSig) return;
        const rows = await store.pendingExternal(sig, BATCH, new Date());
        if (rows.length === 0) break;
        const vectors = new Map<number, Float32Array>();
        for (const r of rows) {
          const v = await store.vector(r.seq);
          if (v) vectors.set(r.seq, v);
        }
        const withVec = rows.filter((r) => vectors.has(r.seq));
        // Rows without a stored vector (nothing embeddable) are marked so they are not retried forever.
        await store.setExternalSig(rows.filter((r) => !vectors.has(r.seq)).map((r) => r.seq), sig);
        await this.pushExternal(withVec, vectors, sig, source.dimensions);
      }
    } catch (err) {
      log.warn('memory: external vector store sync failed; retrying later', { error: message(err) });
      this.deps.later(RETRY_MS, () => this.schedule());
    }
  }

  /** POST /api/memory/reindex: optionally from scratch (every row embedded again). */
  async reindex(full: boolean): Promise<void> {
    if (full) {
      await this.deps.store.clearEmbeddingSigs();
      this.externalSig = null;
    }
    return this.schedule();
  }
}
