import type { Logger } from '../logger.js';
import type { Services } from '../services.js';
import type { Db } from '../store/db.js';
import { EmbeddingCache } from './embedding/cache.js';
import { isZero, signatureOf, type EmbeddingSource, type SourceProbe } from './embedding/source.js';
import { loadStaticModel, type StaticModel } from './embedding/static.js';
import { loadTransformersModel, type Importer } from './embedding/transformers.js';
import { EXTRACTION_PROMPT, heuristicExtract, parseExtraction, SUMMARY_PROMPT, type Extracted } from './extract.js';
import { QdrantStore, type ExternalPoint } from './external.js';
import {
  KeySettingsStore,
  loadMemorySettings,
  saveMemorySettings,
  type MemorySettings,
  type MemorySettingsPatch,
} from './settings.js';
import { MemoryStore, partitionOf, publicMemory, type ListFilter, type StoredMemory } from './store.js';
import { countTokens, memoryText } from './tokens.js';
import { applyRerank, fuse, packIntoBudget } from './fusion.js';
import { ExtractionQueue, type ExtractionJob } from './extraction-queue.js';
import type {
  EmbeddingSourceKind,
  EngineStatus,
  MemoryEntry,
  MemoryType,
  RetrievedMemory,
  RetrieveResult,
  Scope,
  Strategy,
  Tier,
  VectorStoreKind,
} from './types.js';
import { callModel, modelReachable, remoteEmbed, remoteRerank } from './upstream.js';

const BATCH = 64;
const PRUNE_EVERY_MS = 5 * 60_000;
const SUMMARIZE_EVERY_MS = 6 * 3600_000;
const RETRY_MS = 30_000;
/** Scope of the health route's probe entry; never a real key id (those are uuids). */
export const HEALTH_SCOPE = '__router_health__';

/** Known widths of common embedding models (the embedding-providers listing). */
const KNOWN_DIMENSIONS: Record<string, number> = {
  'text-embedding-3-small': 1536,
  'text-embedding-3-large': 3072,
  'text-embedding-ada-002': 1536,
  'nomic-embed-text': 768,
  'mxbai-embed-large': 1024,
  'mistral-embed': 1024,
  'text-embedding-004': 768,
  'gemini-embedding-001': 3072,
};

export interface CreateInput {
  type: MemoryType;
  key: string;
  content: string;
  sessionId?: string | null;
  apiKeyId?: string | null;
  metadata?: Record<string, unknown>;
  expiresAt?: string | null;
}

export interface RetrieveOptions {
  query: string;
  strategy: Strategy;
  maxTokens: number;
  limit: number;
  scopes: Scope[];
  /** A dry run touches nothing (hit counters included). */
  dryRun: boolean;
}

export interface SummarizeOptions {
  apiKeyId: Scope;
  olderThanDays?: number;
  sessionId?: string;
  dryRun?: boolean;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The memory engine: entries (SQLite + FTS5), embeddings (remote / static / transformers sources, an LRU),
 * the embedded vector store (sqlite-vec) and an optional external one (Qdrant), hybrid retrieval with
 * optional rerank, background reindex, pruning, summarization and extraction.
 */
export class MemoryService {
  readonly store: MemoryStore;
  readonly keySettings: KeySettingsStore;
  private settingsValue: MemorySettings;
  private services?: Services;
  private readonly cache: EmbeddingCache;
  private active: EmbeddingSource | null = null;
  private activeSig: string | null = null;
  private probes: SourceProbe[] = [];
  private refreshing: Promise<void> = Promise.resolve();
  private refreshSeq = 0;
  private staticModel?: { path: string; model: StaticModel };
  private transformersModel?: { path: string; source: EmbeddingSource };
  private external: QdrantStore | null = null;
  private externalSig: string | null = null;
  private reindexRun?: Promise<void>;
  private reindexAgain = false;
  private lastReindexError: string | null = null;
  private rerankError: string | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly extraction = new ExtractionQueue(
    (job) => this.extract(job),
    (err) => this.log.warn('memory: extraction failed', { error: message(err) }),
  );
  private closed = false;
  private transformersImporter?: Importer;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {
    this.store = new MemoryStore(db);
    this.keySettings = new KeySettingsStore(db);
    this.settingsValue = loadMemorySettings(db);
    this.cache = new EmbeddingCache(this.settingsValue.embeddingCacheSize);
    this.external = this.buildExternal();
  }

  /**
   * Wires the engine to the daemon (remote calls need the provider directory) and starts background work.
   * Its request stage is registered in boot.ts with every other stage.
   */
  start(services: Services): void {
    this.services = services;
    // The tokenizer is loaded on first use (countTokens), not here: it costs ~20 MB an idle daemon never needs.
    this.prune();
    this.every(PRUNE_EVERY_MS, () => this.prune());
    this.every(SUMMARIZE_EVERY_MS, () => void this.autoSummarize());
    this.refreshing = this.refresh();
  }

  /** Tests swap the importer of @huggingface/transformers. */
  setTransformersImporter(importer: Importer | undefined): void {
    this.transformersImporter = importer;
    this.transformersModel = undefined;
  }

  get settings(): MemorySettings {
    return this.settingsValue;
  }

  /** Resolves once the embedding source in use reflects the current settings. */
  async ready(): Promise<void> {
    let seen: Promise<void>;
    do {
      seen = this.refreshing;
      await seen;
    } while (seen !== this.refreshing);
  }

  private every(ms: number, fn: () => void): void {
    const t = setInterval(() => {
      if (!this.closed) fn();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  private later(ms: number, fn: () => void): void {
    const t = setTimeout(() => {
      this.timers.delete(t);
      if (!this.closed) fn();
    }, ms);
    t.unref();
    this.timers.add(t);
  }

  close(): void {
    this.closed = true;
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.extraction.close();
  }

  /** Waits for background work in flight (reindex, extraction); tests use it. */
  async idle(): Promise<void> {
    await this.ready();
    while (this.reindexRun || this.extraction.busy) {
      await this.reindexRun;
      await this.extraction.busy;
    }
  }

  // ---------------------------------------------------------------- settings and sources

  async updateSettings(patch: MemorySettingsPatch): Promise<MemorySettings> {
    const prev = this.settingsValue;
    const next = { ...prev, ...patch } as MemorySettings;
    saveMemorySettings(this.db, next);
    this.settingsValue = next;
    if (next.embeddingCacheSize !== prev.embeddingCacheSize) this.cache.resize(next.embeddingCacheSize);
    const externalChanged = (['qdrantUrl', 'qdrantCollection', 'qdrantApiKey', 'qdrantTimeoutMs'] as const).some((k) => next[k] !== prev[k]);
    if (externalChanged) {
      this.external = this.buildExternal();
      this.externalSig = null;
      this.store.clearExternalSigs();
      this.store.setMeta('external_signature', null);
    }
    if (next.rerankModel !== prev.rerankModel) this.rerankError = null;
    this.refreshing = this.refreshing.then(() => this.refresh());
    await this.ready();
    return next;
  }

  private buildExternal(): QdrantStore | null {
    const s = this.settingsValue;
    return s.qdrantUrl ? new QdrantStore(s.qdrantUrl, s.qdrantCollection, s.qdrantApiKey, s.qdrantTimeoutMs) : null;
  }

  private async probe(kind: EmbeddingSourceKind): Promise<SourceProbe> {
    const s = this.settingsValue;
    try {
      if (kind === 'remote') {
        if (!s.remoteModel) return { kind, available: false, model: null, reason: 'no remote embedding model configured (remoteModel)' };
        if (!this.services) throw new Error('engine not started');
        const reach = modelReachable(this.services, s.remoteModel);
        if (!reach.ok) return { kind, available: false, model: s.remoteModel, reason: reach.reason };
        const model = s.remoteModel;
        const dimsKey = `remote_dims:${model}:${s.remoteDimensions ?? ''}`;
        let dims = Number(this.store.meta(dimsKey) ?? 0);
        if (!dims) {
          dims = (await remoteEmbed(this.services, model, ['dimension probe'], s.remoteDimensions))[0]!.length;
          if (!dims) throw new Error('remote model returned an empty vector');
          this.store.setMeta(dimsKey, String(dims));
        }
        const services = this.services;
        const source: EmbeddingSource = {
          kind: 'remote',
          model,
          dimensions: dims,
          embed: (texts) => remoteEmbed(services, model, texts, s.remoteDimensions),
        };
        return { kind, available: true, source, reason: `remote model ${model} through router's provider path` };
      }
      if (kind === 'static') {
        if (!s.staticModelPath) return { kind, available: false, model: null, reason: 'no static model folder configured (staticModelPath)' };
        if (this.staticModel?.path !== s.staticModelPath) this.staticModel = { path: s.staticModelPath, model: loadStaticModel(s.staticModelPath) };
        const m = this.staticModel.model;
        return { kind, available: true, source: m.source(), reason: `static model ${m.name} (${m.vocabSize} tokens) from a local folder` };
      }
      if (!s.transformersModelPath) return { kind, available: false, model: null, reason: 'no transformers model folder configured (transformersModelPath)' };
      if (this.transformersModel?.path !== s.transformersModelPath) {
        const source = await loadTransformersModel(s.transformersModelPath, this.transformersImporter);
        this.transformersModel = { path: s.transformersModelPath, source };
      }
      const src = this.transformersModel.source;
      return { kind, available: true, source: src, reason: `ONNX model ${src.model} through @huggingface/transformers` };
    } catch (err) {
      return { kind, available: false, model: null, reason: message(err) };
    }
  }

  /**
   * Picks the first available source of the configured order. A new signature (source:model:dimensions)
   * resets the vec0 table to the new width; every row then needs reindexing, which runs in the background.
   */
  private async refresh(): Promise<void> {
    try {
      await this.selectSource();
    } catch (err) {
      this.log.error('memory: embedding source selection failed', { error: message(err) });
    }
  }

  private async selectSource(): Promise<void> {
    const seq = ++this.refreshSeq;
    const probes: SourceProbe[] = [];
    let chosen: EmbeddingSource | null = null;
    for (const kind of this.settingsValue.embeddingOrder) {
      const p = await this.probe(kind);
      probes.push(p);
      if (p.available) {
        chosen = p.source;
        break;
      }
    }
    if (this.closed || seq !== this.refreshSeq) return;
    this.probes = probes;
    this.active = chosen;
    if (!chosen) {
      this.activeSig = null;
      return;
    }
    const sig = signatureOf(chosen);
    this.activeSig = sig;
    if (this.store.meta('embedding_signature') !== sig || !this.store.hasVecTable()) {
      this.store.resetVectors(sig, chosen.dimensions);
      this.log.info('memory: embedding signature changed, vectors will be reindexed', { signature: sig });
    }
    if (this.settingsValue.autoReindex) this.scheduleReindex();
  }

  /** Embeds texts with the active source through the LRU. */
  async embed(texts: string[], source = this.active): Promise<Float32Array[]> {
    if (!source) throw new Error('no embedding source available');
    const sig = signatureOf(source);
    const out: Array<Float32Array | undefined> = texts.map((t) => this.cache.get(sig, t));
    const missing = texts.map((t, i) => (out[i] ? -1 : i)).filter((i) => i >= 0);
    if (missing.length) {
      const vecs = await source.embed(missing.map((i) => texts[i]!));
      missing.forEach((i, j) => {
        const v = vecs[j]!;
        if (v.length !== source.dimensions) throw new Error(`embedding has ${v.length} dimensions, expected ${source.dimensions}`);
        out[i] = v;
        this.cache.set(sig, texts[i]!, v);
      });
    }
    return out as Float32Array[];
  }

  // ---------------------------------------------------------------- indexing

  private async ensureExternal(sig: string, dims: number): Promise<boolean> {
    const ext = this.external;
    if (!ext) return false;
    if (this.externalSig === sig) return true;
    const wanted = `${ext.url}|${ext.collection}|${sig}`;
    const recorded = this.store.meta('external_signature');
    await ext.ensureCollection(dims, recorded !== wanted);
    if (this.closed) return false;
    if (recorded !== wanted) {
      this.store.clearExternalSigs();
      this.store.setMeta('external_signature', wanted);
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
    if (!this.closed) this.store.setExternalSig(rows.map((r) => r.seq), sig);
  }

  /** Embeds rows now with the active source; failures leave them pending for the background reindex. */
  private async index(rows: StoredMemory[]): Promise<void> {
    const source = this.active;
    const sig = this.activeSig;
    if (!source || !sig || rows.length === 0) return;
    const vectors = new Map<number, Float32Array>();
    try {
      const vecs = await this.embed(rows.map((r) => memoryText(r.key, r.content)), source);
      if (this.closed || sig !== this.activeSig) return;
      rows.forEach((r, i) => {
        const v = vecs[i]!;
        if (!this.store.getAny(r.id)) return; // deleted meanwhile
        if (isZero(v)) this.store.markEmbedded(r.seq, sig);
        else {
          this.store.upsertVector(r.seq, r.apiKeyId, v, sig);
          vectors.set(r.seq, v);
        }
      });
    } catch (err) {
      this.lastReindexError = message(err);
      if (this.settingsValue.autoReindex) this.later(RETRY_MS, () => this.scheduleReindex());
      return;
    }
    this.lastReindexError = null;
    try {
      await this.pushExternal(rows.filter((r) => vectors.has(r.seq)), vectors, sig, source.dimensions);
    } catch (err) {
      this.log.warn('memory: external vector store write failed', { error: message(err) });
    }
  }

  /** Starts the background reindex (single flight; a request during a run makes it go round again). */
  scheduleReindex(): Promise<void> {
    if (this.reindexRun) {
      this.reindexAgain = true;
      return this.reindexRun;
    }
    const run = (async () => {
      do {
        this.reindexAgain = false;
        await this.reindexPass();
      } while (this.reindexAgain && !this.closed);
    })().finally(() => {
      this.reindexRun = undefined;
    });
    this.reindexRun = run;
    return run;
  }

  private async reindexPass(): Promise<void> {
    const source = this.active;
    const sig = this.activeSig;
    if (!source || !sig) return;
    for (;;) {
      await new Promise((r) => setImmediate(r));
      if (this.closed || sig !== this.activeSig) return;
      const rows = this.store.pendingEmbedding(sig, BATCH);
      if (rows.length === 0) break;
      this.lastReindexError = null;
      await this.index(rows);
      if (this.lastReindexError) {
        this.log.warn('memory: reindex batch failed; retrying later', { error: this.lastReindexError });
        return;
      }
    }
    // External catch-up: rows embedded while the external store was down or before it was configured.
    if (!this.external) return;
    try {
      for (;;) {
        await new Promise((r) => setImmediate(r));
        if (this.closed || sig !== this.activeSig) return;
        const rows = this.store.pendingExternal(sig, BATCH);
        if (rows.length === 0) break;
        const vectors = new Map<number, Float32Array>();
        for (const r of rows) {
          const v = this.store.vector(r.seq);
          if (v) vectors.set(r.seq, v);
        }
        const withVec = rows.filter((r) => vectors.has(r.seq));
        // Rows without a stored vector (nothing embeddable) are marked so they are not retried forever.
        this.store.setExternalSig(rows.filter((r) => !vectors.has(r.seq)).map((r) => r.seq), sig);
        await this.pushExternal(withVec, vectors, sig, source.dimensions);
      }
    } catch (err) {
      this.log.warn('memory: external vector store sync failed; retrying later', { error: message(err) });
      this.later(RETRY_MS, () => this.scheduleReindex());
    }
  }

  /** POST /api/memory/reindex. */
  async reindex(opts: { full: boolean; wait: boolean }): Promise<{ signature: string | null; pending: number; error: string | null }> {
    await this.ready();
    if (opts.full) {
      this.store.clearEmbeddingSigs();
      this.externalSig = null;
    }
    const run = this.scheduleReindex();
    if (opts.wait) await run;
    return { signature: this.activeSig, pending: this.store.needsReindex(this.activeSig), error: this.lastReindexError };
  }

  // ---------------------------------------------------------------- CRUD

  async create(input: CreateInput): Promise<MemoryEntry> {
    const tokens = await countTokens(memoryText(input.key, input.content));
    await this.ready();
    const row = this.store.insert({
      type: input.type,
      key: input.key,
      content: input.content,
      sessionId: input.sessionId ?? null,
      apiKeyId: input.apiKeyId ?? null,
      metadata: input.metadata ?? {},
      expiresAt: input.expiresAt ?? null,
      tokens,
    });
    await this.index([row]);
    return publicMemory(this.store.getAny(row.id) ?? row);
  }

  get(id: string): MemoryEntry | undefined {
    const m = this.store.get(id);
    return m ? publicMemory(m) : undefined;
  }

  /** PUT: type, key, content, metadata; the vector is regenerated when a source is available. */
  async update(id: string, patch: { type?: MemoryType; key?: string; content?: string; metadata?: Record<string, unknown> }): Promise<MemoryEntry | undefined> {
    const cur = this.store.get(id);
    if (!cur) return undefined;
    const tokens = await countTokens(memoryText(patch.key ?? cur.key, patch.content ?? cur.content));
    await this.ready();
    const row = this.store.update(id, { ...patch, tokens });
    if (!row) return undefined;
    await this.index([row]);
    return publicMemory(this.store.getAny(id) ?? row);
  }

  /** DELETE: the row, its vector and, best-effort, its external point. */
  async delete(id: string): Promise<boolean> {
    const row = this.store.get(id);
    if (!row) return false;
    this.store.delete(id);
    if (this.external) {
      try {
        await this.external.delete([id]);
      } catch (err) {
        this.log.warn('memory: external point delete failed', { error: message(err) });
      }
    }
    return true;
  }

  list(f: ListFilter) {
    const r = this.store.list(f);
    const c = this.cache.stats();
    return {
      data: r.data.map(publicMemory),
      total: r.total,
      totalPages: Math.ceil(r.total / f.limit),
      stats: {
        total: r.total,
        tokensUsed: r.tokensUsed,
        hitRate: r.total ? Math.round((r.hit / r.total) * 10_000) / 10_000 : 0,
        cacheStats: { hits: c.hits, misses: c.misses },
      },
    };
  }

  private prune(): void {
    try {
      const gone = this.store.pruneExpired();
      if (gone.length && this.external) this.external.delete(gone.map((g) => g.id)).catch(() => undefined);
    } catch (err) {
      this.log.warn('memory: prune failed', { error: message(err) });
    }
  }

  /** GET /api/memory/health: a real create, list, delete round trip in a reserved scope. */
  health(): { working: boolean; latencyMs: number; error: string | null } {
    const t0 = performance.now();
    let id: string | undefined;
    let error: string | null = null;
    try {
      const row = this.store.insert({
        type: 'factual',
        key: '__health__',
        content: 'memory health probe',
        sessionId: null,
        apiKeyId: HEALTH_SCOPE,
        metadata: {},
        expiresAt: null,
        tokens: 0,
      });
      id = row.id;
      const listed = this.store.list({ apiKeyId: HEALTH_SCOPE, limit: 200, offset: 0 });
      if (!listed.data.some((m) => m.id === row.id)) throw new Error('created entry was not listed');
      const found = this.store.ftsSearch('memory health probe', [HEALTH_SCOPE], 5);
      if (!found.some((f) => f.seq === row.seq)) throw new Error('created entry was not found by the keyword index');
      if (!this.store.delete(row.id)) throw new Error('created entry could not be deleted');
      id = undefined;
    } catch (err) {
      error = message(err);
    } finally {
      if (id) {
        try {
          this.store.delete(id);
        } catch {
          // reported above
        }
      }
    }
    return { working: error === null, latencyMs: Math.round((performance.now() - t0) * 1000) / 1000, error };
  }

  // ---------------------------------------------------------------- retrieval

  async retrieve(o: RetrieveOptions): Promise<RetrieveResult> {
    await this.ready();
    const now = new Date();
    const reasons: string[] = [];
    let strategyUsed: Strategy = o.strategy;
    let embeddingSource: EmbeddingSourceKind | null = null;
    let embeddingModel: string | null = null;
    let vectorStore: VectorStoreKind = 'none';
    let vecTier: Tier = 'vector';
    const pool = Math.max(50, o.limit * 3);
    const vecHits = new Map<number, number>(); // seq -> similarity, in rank order

    if (o.strategy !== 'exact') {
      const source = this.active;
      let qv: Float32Array | undefined;
      if (!source) reasons.push(`no embedding source available (${this.embeddingReason()})`);
      else {
        try {
          qv = (await this.embed([o.query], source))[0];
        } catch (err) {
          reasons.push(`query embedding failed (${message(err)})`);
        }
      }
      if (!source || !qv) strategyUsed = 'exact';
      else {
        embeddingSource = source.kind;
        embeddingModel = source.model;
        let hits: Array<{ seq: number; similarity: number }> | undefined;
        const ext = this.external;
        if (ext) {
          if (ext.recentlyDown()) reasons.push(`external vector store unavailable (${ext.health().error}); embedded store used`);
          else {
            try {
              await this.ensureExternal(this.activeSig!, source.dimensions);
              const found = await ext.search(qv, [...new Set(o.scopes.map(partitionOf))], pool * 2);
              const rows = this.store.byIds(found.map((f) => f.id), now);
              hits = found.filter((f) => rows.has(f.id)).map((f) => ({ seq: rows.get(f.id)!.seq, similarity: f.score }));
              vectorStore = 'external-vec';
              vecTier = 'external-vec';
            } catch (err) {
              reasons.push(`external vector store unavailable (${message(err)}); embedded store used`);
            }
          }
        }
        if (!hits) {
          vectorStore = 'embedded-vec';
          const knn = isZero(qv) ? [] : this.store.knn(qv, o.scopes, pool * 2);
          const live = this.store.bySeqs(knn.map((k) => k.seq), now);
          hits = knn.filter((k) => live.has(k.seq));
        }
        for (const h of hits) if (h.similarity >= this.settingsValue.minSimilarity && !vecHits.has(h.seq)) vecHits.set(h.seq, h.similarity);
      }
    }
    const ftsHits = new Map<number, number>();
    if (strategyUsed !== 'semantic') for (const f of this.store.ftsSearch(o.query, o.scopes, pool, now)) ftsHits.set(f.seq, f.score);

    let ordered = fuse(strategyUsed, ftsHits, vecHits, vecTier);
    const rows = this.store.bySeqs(ordered.map((c) => c.seq), now);
    ordered = ordered.filter((c) => rows.has(c.seq));

    let rerankApplied = false;
    const rerankModel = this.settingsValue.rerankModel;
    if (rerankModel && this.services && ordered.length > 1) {
      const head = ordered.slice(0, this.settingsValue.rerankCandidates);
      try {
        const ranked = await remoteRerank(
          this.services,
          rerankModel,
          o.query,
          head.map((c) => memoryText(rows.get(c.seq)!.key, rows.get(c.seq)!.content)),
        );
        ordered = applyRerank(ordered, head.length, ranked);
        rerankApplied = true;
        this.rerankError = null;
      } catch (err) {
        this.rerankError = message(err);
        reasons.push(`rerank failed (${this.rerankError}); fused order kept`);
      }
    }

    const { memories, picked, used } = packIntoBudget(ordered, rows, o.limit, o.maxTokens);
    if (!o.dryRun && picked.length) this.store.touchHits(picked, now);
    return {
      memories,
      resolution: {
        embeddingSource,
        embeddingModel,
        vectorStore,
        strategyUsed,
        rerankApplied,
        fallbackReason: reasons.length ? reasons.join('; ') : null,
      },
      totalTokensUsed: used,
      budgetMaxTokens: o.maxTokens,
    };
  }

  private embeddingReason(): string {
    if (this.active) return `using ${this.active.kind} model ${this.active.model}`;
    if (this.settingsValue.embeddingOrder.length === 0) return 'keyword only: embeddingOrder is empty';
    return this.probes.length ? this.probes.map((p) => `${p.kind}: ${p.reason}`).join('; ') : 'not probed yet';
  }

  // ---------------------------------------------------------------- status

  async status(): Promise<EngineStatus> {
    await this.ready();
    const s = this.settingsValue;
    const ext = this.external;
    if (ext) await ext.check();
    const extHealth = ext?.health();
    const storedSig = this.store.meta('embedding_signature') ?? null;
    const backend: VectorStoreKind = !this.active ? 'none' : ext && extHealth?.healthy ? 'external-vec' : 'embedded-vec';
    let vsReason: string;
    if (!this.active) vsReason = 'no embedding source: keyword search only';
    else if (ext && !extHealth?.healthy) vsReason = `external vector store unavailable (${extHealth?.error ?? 'unknown'}); embedded store used`;
    else if (backend === 'external-vec') vsReason = `Qdrant collection ${ext!.collection} at ${ext!.url}`;
    else vsReason = 'sqlite-vec (vec0) in the router database';
    if (this.lastReindexError) vsReason += `; last reindex error: ${this.lastReindexError}`;
    let rerank: EngineStatus['rerank'];
    if (!s.rerankModel) rerank = { enabled: false, provider: null, model: null, available: false, reason: 'no rerank model configured (rerankModel)' };
    else {
      const slash = s.rerankModel.indexOf('/');
      const reach = this.services ? modelReachable(this.services, s.rerankModel) : { ok: false as const, reason: 'engine not started' };
      const available = reach.ok && this.rerankError === null;
      rerank = {
        enabled: true,
        provider: s.rerankModel.slice(0, slash),
        model: s.rerankModel.slice(slash + 1),
        available,
        reason: !reach.ok ? reach.reason : this.rerankError ? `last rerank call failed: ${this.rerankError}` : 'ready',
      };
    }
    return {
      keyword: { available: this.ftsAvailable(), backend: 'FTS5' },
      embedding: {
        source: this.active?.kind ?? null,
        model: this.active?.model ?? null,
        dimensions: this.active?.dimensions ?? null,
        available: this.active !== null,
        reason: this.embeddingReason(),
        cacheStats: this.cache.stats(),
      },
      vectorStore: {
        backend,
        available: this.active !== null && this.store.hasVecTable(),
        rowCount: this.store.vecRowCount(),
        needsReindex: this.store.needsReindex(this.activeSig ?? storedSig),
        reason: vsReason,
      },
      externalVector: {
        enabled: ext !== null,
        healthy: extHealth?.healthy ?? null,
        latencyMs: extHealth?.latencyMs ?? null,
        error: extHealth?.error ?? null,
      },
      rerank,
    };
  }

  private ftsAvailable(): boolean {
    try {
      this.db.prepare("SELECT 1 FROM memories_fts WHERE memories_fts MATCH '\"x\"' LIMIT 1").all();
      return true;
    } catch {
      return false;
    }
  }

  /** GET /api/memory/embedding-providers: providers with an embeddings endpoint and their embedding models. */
  embeddingProviders(): Array<{ provider: string; hasKey: boolean; models: Array<{ id: string; name: string; dimensions: number | null }> }> {
    const services = this.services;
    if (!services) return [];
    const remote = this.settingsValue.remoteModel;
    const out = [];
    for (const def of services.providers.all()) {
      if (!def.endpoints?.embeddings) continue;
      const pub = services.providers.publicId(def);
      const ids = new Set(services.providers.models(def).map((m) => m.id).filter((id) => /embed/i.test(id)));
      if (remote) {
        const split = services.providers.split(remote);
        if (split && split.def.id === def.id) ids.add(split.model);
      }
      const models = [...ids].map((id) => {
        const probed = Number(this.store.meta(`remote_dims:${pub}/${id}:`) ?? 0);
        return { id: `${pub}/${id}`, name: id, dimensions: probed || KNOWN_DIMENSIONS[id] || null };
      });
      out.push({ provider: pub, hasKey: services.connections.active(def.id).length > 0, models });
    }
    return out;
  }

  // ---------------------------------------------------------------- conversations

  /** Queues extraction of memories from one exchange; never awaited by the request. */
  enqueueExtraction(job: ExtractionJob): void {
    if (!this.closed) this.extraction.push(job);
  }

  private async extract(job: ExtractionJob): Promise<void> {
    const s = this.settingsValue;
    let found: Extracted[];
    if (s.extractionModel && this.services) {
      const reply = await callModel(this.services, s.extractionModel, EXTRACTION_PROMPT, `User:\n${job.userText.slice(0, 8000)}\n\nAssistant:\n${job.assistantText.slice(0, 8000)}`);
      found = parseExtraction(reply);
    } else found = heuristicExtract(job.userText);
    const meta = { source: 'extraction', traceId: job.traceId, model: job.model };
    for (const f of found) {
      if (this.closed) return;
      const existing = this.store.findByKey(job.apiKeyId, f.key);
      if (existing && existing.content.trim().toLowerCase() === f.content.trim().toLowerCase()) continue;
      if (existing && existing.type === f.type) await this.update(existing.id, { content: f.content, metadata: { ...existing.metadata, ...meta } });
      else await this.create({ ...f, apiKeyId: job.apiKeyId, sessionId: job.sessionId, metadata: meta });
    }
    if (s.extractEpisodes && job.userText.trim() && !this.closed) {
      const clip = (t: string) => (t.length > 600 ? `${t.slice(0, 600)}...` : t);
      await this.create({
        type: 'episodic',
        key: `exchange ${new Date().toISOString().slice(0, 16).replace('T', ' ')}`,
        content: `User: ${clip(job.userText.trim())}\nAssistant: ${clip(job.assistantText.trim())}`,
        apiKeyId: job.apiKeyId,
        sessionId: job.sessionId,
        metadata: meta,
      });
    }
  }

  /**
   * Folds old episodic memories of one scope (per session) into `semantic` summaries written by the
   * summarization model; the originals are archived (still listed, no longer retrieved).
   */
  async summarize(o: SummarizeOptions): Promise<{ summaries: MemoryEntry[]; archived: number; groups: Array<{ sessionId: string | null; count: number }> }> {
    const model = this.settingsValue.summarizationModel;
    if (!model) throw new Error('no summarization model configured (summarizationModel)');
    if (!this.services) throw new Error('engine not started');
    const days = o.olderThanDays ?? this.settingsValue.summarizeOlderThanDays;
    const before = new Date(Date.now() - days * 86_400_000);
    const rows = this.store.episodicBefore(o.apiKeyId, before, o.sessionId);
    const bySession = new Map<string | null, StoredMemory[]>();
    for (const r of rows) bySession.set(r.sessionId, [...(bySession.get(r.sessionId) ?? []), r]);
    const chunks: StoredMemory[][] = [];
    for (const list of bySession.values()) {
      let cur: StoredMemory[] = [];
      let tokens = 0;
      for (const r of list) {
        if (cur.length && (tokens + r.tokens > 6000 || cur.length >= 100)) {
          chunks.push(cur);
          cur = [];
          tokens = 0;
        }
        cur.push(r);
        tokens += r.tokens;
      }
      if (cur.length) chunks.push(cur);
    }
    const groups = chunks.filter((c) => c.length >= 2);
    const plan = groups.map((g) => ({ sessionId: g[0]!.sessionId, count: g.length }));
    if (o.dryRun) return { summaries: [], archived: 0, groups: plan };
    const summaries: MemoryEntry[] = [];
    let archived = 0;
    for (const g of groups) {
      const listing = g.map((m) => `- [${m.createdAt}] ${m.key}: ${m.content}`).join('\n');
      const text = (await callModel(this.services, model, SUMMARY_PROMPT, listing, 1024)).trim();
      if (!text || this.closed) continue;
      const from = g[0]!.createdAt;
      const to = g.at(-1)!.createdAt;
      const entry = await this.create({
        type: 'semantic',
        key: `summary of ${g.length} episodes ${from.slice(0, 10)}..${to.slice(0, 10)}`,
        content: text,
        sessionId: g[0]!.sessionId,
        apiKeyId: o.apiKeyId,
        metadata: { source: 'summarization', model, summaryOf: g.map((m) => m.id), from, to },
      });
      this.store.archive(g.map((m) => m.seq));
      archived += g.length;
      summaries.push(entry);
    }
    return { summaries, archived, groups: plan };
  }

  private async autoSummarize(): Promise<void> {
    const s = this.settingsValue;
    if (!s.autoSummarize || !s.summarizationModel) return;
    for (const scope of this.store.episodicScopes()) {
      if (this.closed || scope === HEALTH_SCOPE) return;
      try {
        await this.summarize({ apiKeyId: scope });
      } catch (err) {
        this.log.warn('memory: auto-summarization failed', { error: message(err) });
        return;
      }
    }
  }
}
