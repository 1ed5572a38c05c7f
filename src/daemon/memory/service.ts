import { randomUUID } from 'node:crypto';
import type { Logger } from '../logger.js';
import type { PipelineDeps } from '../proxy/deps.js';
import type { ChangeFeed } from '../store/changes.js';
import { EmbeddingSelector } from './embedding/selector.js';
import { isZero } from './embedding/source.js';
import type { Importer } from './embedding/transformers.js';
import { extractMemories, summarizeEpisodes, type EpisodeContext, type SummarizeOptions, type SummaryResult } from './episodes.js';
import { VectorIndex } from './vector-index.js';
import {
  KeySettingsStore,
  loadMemorySettings,
  parseMemorySettings,
  saveMemorySettings,
  type KeySettings,
  type MemorySettings,
  type MemorySettingsPatch,
} from './settings.js';
import type { ListFilter, MemoryRepository } from './port.js';
import { publicMemory } from './store.js';
import { partitionOf } from './vector-storage.js';
import { countTokens, memoryText } from './tokens.js';
import { applyRerank, fuse, packIntoBudget } from './fusion.js';
import { ExtractionQueue, type ExtractionJob } from './extraction-queue.js';
import type {
  CreateInput,
  EmbeddingSourceKind,
  EngineStatus,
  MemoryEntry,
  MemoryType,
  RetrieveOptions,
  RetrieveResult,
  Scope,
  Strategy,
  Tier,
  VectorStoreKind,
} from './types.js';
import { modelReachable, remoteRerank } from './upstream.js';

const PRUNE_EVERY_MS = 5 * 60_000;
const SUMMARIZE_EVERY_MS = 6 * 3600_000;
/** Scope of the health route's probe entry; never a real key id (those are uuids). */
export const HEALTH_SCOPE = '__router_health__';
/** Change topics: entries' vectors (each node's local index follows them), and the settings. */
export const MEMORY_TOPIC = 'memory';
export const MEMORY_SETTINGS_TOPIC = 'memory-settings';

export interface MemoryServiceOptions {
  /** The memory storage port (SQLite file, or PostgreSQL in cluster mode). */
  repo: MemoryRepository;
  /** Change notices between cluster nodes (LOCAL_CHANGES on one machine). */
  changes: ChangeFeed;
  log: Logger;
  /** The state folder's secret key file: the Qdrant API key is stored sealed with it. */
  keyFile: string;
  /**
   * The request pipeline the engine calls models through (remote embeddings, rerank, extraction, summaries).
   * Absent (storage-only tests): those calls answer 'engine has no pipeline'.
   */
  pipeline?: PipelineDeps;
}

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The memory engine: entries with a keyword index (FTS5, or a tsvector on PostgreSQL), embeddings (remote / static / transformers sources, an LRU),
 * the embedded vector store (sqlite-vec) and an optional external one (Qdrant), hybrid retrieval with
 * optional rerank, background reindex, pruning, summarization and extraction.
 */
export class MemoryService {
  readonly store: MemoryRepository;
  private readonly changes: ChangeFeed;
  private readonly log: Logger;
  private readonly keyFile: string;
  private readonly unsubscribe: Array<() => void> = [];
  private readonly services?: PipelineDeps;
  /** The embedding source in use and its LRU. */
  readonly sources: EmbeddingSelector;
  /** Vectors: embedded (sqlite-vec) and external (Qdrant), with the background reindex. */
  readonly vectors: VectorIndex;
  private refreshing: Promise<void> = Promise.resolve();
  private rerankError: string | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly extraction = new ExtractionQueue(
    (job) => extractMemories(this.episodes(), job),
    (err) => this.log.warn('memory: extraction failed', { error: message(err) }),
  );
  private closed = false;

  /**
   * Loads the engine's settings and the per-key settings from storage, and follows other nodes' changes.
   * A node-local vector index (cluster mode) is built when the embedding source is selected (start()), off
   * the boot: retrieval waits for it through ready().
   */
  static async create(opts: MemoryServiceOptions): Promise<MemoryService> {
    const [settings, keySettings] = await Promise.all([loadMemorySettings(opts.repo, opts.keyFile), KeySettingsStore.create(opts.repo)]);
    return new MemoryService(opts, settings, keySettings);
  }

  private constructor(
    opts: MemoryServiceOptions,
    private settingsValue: MemorySettings,
    readonly keySettings: KeySettingsStore,
  ) {
    this.store = opts.repo;
    this.changes = opts.changes;
    this.log = opts.log;
    this.keyFile = opts.keyFile;
    this.services = opts.pipeline;
    const settings = () => this.settingsValue;
    const closed = () => this.closed;
    const changed = () => this.changes.publish(MEMORY_TOPIC);
    this.sources = new EmbeddingSelector({
      store: this.store,
      log: this.log,
      settings,
      services: () => this.services,
      closed,
      changed,
      onSelected: () => {
        if (this.settingsValue.autoReindex) void this.vectors.schedule();
      },
    });
    this.vectors = new VectorIndex({ store: this.store, log: this.log, sources: this.sources, settings, closed, changed, later: (ms, fn) => this.later(ms, fn) });
    this.unsubscribe.push(
      this.changes.subscribe(MEMORY_TOPIC, () => void this.reloadVectors()),
      this.changes.subscribe(MEMORY_SETTINGS_TOPIC, () => void this.reloadSettings()),
    );
  }

  /** Another node wrote vectors: this node's index follows (rows and keyword index are shared storage). */
  async reloadVectors(): Promise<void> {
    try {
      await this.store.syncVectors();
    } catch (err) {
      this.log.warn('memory: vector index sync failed', { error: message(err) });
    }
  }

  /**
   * Another node changed the engine's or a key's settings: both are read again, and a changed engine
   * setting takes effect as a local write's does (cache size, external store, embedding source).
   */
  async reloadSettings(): Promise<void> {
    try {
      const [doc] = await Promise.all([this.store.loadSettings(), this.keySettings.reload()]);
      const next = parseMemorySettings(doc, this.keyFile).settings;
      if (JSON.stringify(next) !== JSON.stringify(this.settingsValue)) await this.applySettings(next);
    } catch (err) {
      this.log.warn('memory: settings reload failed', { error: message(err) });
    }
  }

  /**
   * Starts background work (pruning, auto-summaries, choosing the embedding source). Its request stage is
   * registered in boot.ts with every other stage.
   */
  start(): void {
    // The tokenizer is loaded on first use (countTokens), not here: it costs ~20 MB an idle daemon never needs.
    void this.prune();
    this.every(PRUNE_EVERY_MS, () => void this.prune());
    this.every(SUMMARIZE_EVERY_MS, () => void this.autoSummarize());
    this.refreshing = this.refresh();
  }

  /** Tests swap the importer of @huggingface/transformers. */
  setTransformersImporter(importer: Importer | undefined): void {
    this.sources.setTransformersImporter(importer);
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
    for (const off of this.unsubscribe.splice(0)) off();
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.extraction.close();
    this.store.close();
  }

  /** Waits for background work in flight (reindex, extraction); tests use it. */
  async idle(): Promise<void> {
    await this.ready();
    while (this.vectors.running || this.extraction.busy) {
      await this.vectors.running;
      await this.extraction.busy;
    }
  }

  // ---------------------------------------------------------------- settings and sources

  async updateSettings(patch: MemorySettingsPatch): Promise<MemorySettings> {
    const next = { ...this.settingsValue, ...patch } as MemorySettings;
    await saveMemorySettings(this.store, next, this.keyFile);
    this.changes.publish(MEMORY_SETTINGS_TOPIC);
    await this.applySettings(next);
    return next;
  }

  /** PUT /api/memory/keys/:keyId/settings. */
  async setKeySettings(apiKeyId: string, s: KeySettings): Promise<KeySettings> {
    const out = await this.keySettings.set(apiKeyId, s);
    this.changes.publish(MEMORY_SETTINGS_TOPIC);
    return out;
  }

  /** Puts stored settings in effect (a local write, or another node's). */
  private async applySettings(next: MemorySettings): Promise<void> {
    const prev = this.settingsValue;
    this.settingsValue = next;
    if (next.embeddingCacheSize !== prev.embeddingCacheSize) this.sources.cache.resize(next.embeddingCacheSize);
    const externalChanged = (['qdrantUrl', 'qdrantCollection', 'qdrantApiKey', 'qdrantTimeoutMs'] as const).some((k) => next[k] !== prev[k]);
    if (externalChanged) await this.vectors.resetExternal();
    if (next.rerankModel !== prev.rerankModel) this.rerankError = null;
    this.refreshing = this.refreshing.then(() => this.refresh());
    await this.ready();
  }

  /** Chooses the embedding source again (after start and every settings change). */
  private async refresh(): Promise<void> {
    try {
      await this.sources.select();
    } catch (err) {
      this.log.error('memory: embedding source selection failed', { error: message(err) });
    }
  }

  /** POST /api/memory/reindex. */
  async reindex(opts: { full: boolean; wait: boolean }): Promise<{ signature: string | null; pending: number; error: string | null }> {
    await this.ready();
    const run = this.vectors.reindex(opts.full);
    if (opts.wait) await run;
    const sig = this.sources.activeSig;
    return { signature: sig, pending: await this.store.needsReindex(sig, new Date()), error: this.vectors.lastError };
  }

  // ---------------------------------------------------------------- CRUD

  async create(input: CreateInput): Promise<MemoryEntry> {
    const tokens = await countTokens(memoryText(input.key, input.content));
    await this.ready();
    const id = randomUUID();
    await this.store.insert(
      {
        id,
        type: input.type,
        key: input.key,
        content: input.content,
        sessionId: input.sessionId ?? null,
        apiKeyId: input.apiKeyId ?? null,
        metadata: input.metadata ?? {},
        expiresAt: input.expiresAt ?? null,
        tokens,
      },
      new Date(),
    );
    const row = (await this.store.getAny(id))!;
    await this.vectors.index([row]);
    return publicMemory((await this.store.getAny(id)) ?? row);
  }

  async get(id: string): Promise<MemoryEntry | undefined> {
    const m = await this.store.get(id, new Date());
    return m ? publicMemory(m) : undefined;
  }

  /** PUT: type, key, content, metadata; the vector is regenerated when a source is available. */
  async update(id: string, patch: { type?: MemoryType; key?: string; content?: string; metadata?: Record<string, unknown> }): Promise<MemoryEntry | undefined> {
    const cur = await this.store.get(id, new Date());
    if (!cur) return undefined;
    const tokens = await countTokens(memoryText(patch.key ?? cur.key, patch.content ?? cur.content));
    await this.ready();
    const fields = { type: patch.type ?? cur.type, key: patch.key ?? cur.key, content: patch.content ?? cur.content, metadata: patch.metadata ?? cur.metadata, tokens };
    const textChanged = fields.key !== cur.key || fields.content !== cur.content;
    if (!(await this.store.update(id, fields, textChanged, new Date()))) return undefined;
    const row = (await this.store.getAny(id))!;
    await this.vectors.index([row]);
    return publicMemory((await this.store.getAny(id)) ?? row);
  }

  /** DELETE: the row, its vector and, best-effort, its external point. */
  async delete(id: string): Promise<boolean> {
    const row = await this.store.get(id, new Date());
    if (!row) return false;
    await this.store.deleteMany([row.seq]);
    this.changes.publish(MEMORY_TOPIC);
    if (this.vectors.external) {
      try {
        await this.vectors.external.delete([id]);
      } catch (err) {
        this.log.warn('memory: external point delete failed', { error: message(err) });
      }
    }
    return true;
  }

  async list(f: ListFilter) {
    const r = await this.store.list(f, new Date());
    const c = this.sources.cache.stats();
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

  /** Deletes expired entries, their vectors and (best-effort) their external points. */
  async prune(): Promise<void> {
    try {
      const gone = await this.store.expired(new Date());
      if (gone.length === 0) return;
      await this.store.deleteMany(gone.map((g) => g.seq));
      this.changes.publish(MEMORY_TOPIC);
      if (this.vectors.external) this.vectors.external.delete(gone.map((g) => g.id)).catch(() => undefined);
    } catch (err) {
      this.log.warn('memory: prune failed', { error: message(err) });
    }
  }

  /** GET /api/memory/health: a real create, list, keyword search, delete round trip in a reserved scope. */
  async health(): Promise<{ working: boolean; latencyMs: number; error: string | null }> {
    const t0 = performance.now();
    const id = randomUUID();
    let created = false;
    let error: string | null = null;
    try {
      const now = new Date();
      await this.store.insert(
        { id, type: 'factual', key: '__health__', content: 'memory health probe', sessionId: null, apiKeyId: HEALTH_SCOPE, metadata: {}, expiresAt: null, tokens: 0 },
        now,
      );
      created = true;
      const row = await this.store.getAny(id);
      if (!row) throw new Error('created entry could not be read back');
      const listed = await this.store.list({ apiKeyId: HEALTH_SCOPE, limit: 200, offset: 0 }, now);
      if (!listed.data.some((m) => m.id === id)) throw new Error('created entry was not listed');
      const found = await this.store.ftsSearch('memory health probe', [HEALTH_SCOPE], 5, now);
      if (!found.some((f) => f.seq === row.seq)) throw new Error('created entry was not found by the keyword index');
      await this.store.deleteMany([row.seq]);
      if (await this.store.getAny(id)) throw new Error('created entry could not be deleted');
      created = false;
    } catch (err) {
      error = message(err);
    } finally {
      if (created) {
        try {
          const left = await this.store.getAny(id);
          if (left) await this.store.deleteMany([left.seq]);
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
      const source = this.sources.active;
      let qv: Float32Array | undefined;
      if (!source) reasons.push(`no embedding source available (${this.sources.reason()})`);
      else {
        try {
          qv = (await this.sources.embed([o.query], source))[0];
        } catch (err) {
          reasons.push(`query embedding failed (${message(err)})`);
        }
      }
      if (!source || !qv) strategyUsed = 'exact';
      else {
        embeddingSource = source.kind;
        embeddingModel = source.model;
        let hits: Array<{ seq: number; similarity: number }> | undefined;
        const ext = this.vectors.external;
        if (ext) {
          if (ext.recentlyDown()) reasons.push(`external vector store unavailable (${ext.health().error}); embedded store used`);
          else {
            try {
              await this.vectors.ensureExternal(this.sources.activeSig!, source.dimensions);
              const found = await ext.search(qv, [...new Set(o.scopes.map(partitionOf))], pool * 2);
              const rows = await this.store.byIds(found.map((f) => f.id), now);
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
          const knn = isZero(qv) ? [] : await this.store.knn(qv, o.scopes, pool * 2);
          const live = await this.store.bySeqs(knn.map((k) => k.seq), now);
          hits = knn.filter((k) => live.has(k.seq));
        }
        for (const h of hits) if (h.similarity >= this.settingsValue.minSimilarity && !vecHits.has(h.seq)) vecHits.set(h.seq, h.similarity);
      }
    }
    const ftsHits = new Map<number, number>();
    if (strategyUsed !== 'semantic') for (const f of await this.store.ftsSearch(o.query, o.scopes, pool, now)) ftsHits.set(f.seq, f.score);

    let ordered = fuse(strategyUsed, ftsHits, vecHits, vecTier);
    const rows = await this.store.bySeqs(ordered.map((c) => c.seq), now);
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
    if (!o.dryRun && picked.length) await this.store.touchHits(picked, now);
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

  // ---------------------------------------------------------------- status

  async status(): Promise<EngineStatus> {
    await this.ready();
    const s = this.settingsValue;
    const ext = this.vectors.external;
    if (ext) await ext.check();
    const extHealth = ext?.health();
    const storedSig = (await this.store.meta('embedding_signature')) ?? null;
    const backend: VectorStoreKind = !this.sources.active ? 'none' : ext && extHealth?.healthy ? 'external-vec' : 'embedded-vec';
    let vsReason: string;
    if (!this.sources.active) vsReason = 'no embedding source: keyword search only';
    else if (ext && !extHealth?.healthy) vsReason = `external vector store unavailable (${extHealth?.error ?? 'unknown'}); embedded store used`;
    else if (backend === 'external-vec') vsReason = `Qdrant collection ${ext!.collection} at ${ext!.url}`;
    else vsReason = this.store.vectorBackend;
    if (this.vectors.lastError) vsReason += `; last reindex error: ${this.vectors.lastError}`;
    let rerank: EngineStatus['rerank'];
    if (!s.rerankModel) rerank = { enabled: false, provider: null, model: null, available: false, reason: 'no rerank model configured (rerankModel)' };
    else {
      const slash = s.rerankModel.indexOf('/');
      const reach = this.services ? modelReachable(this.services, s.rerankModel) : { ok: false as const, reason: 'engine has no pipeline' };
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
      keyword: { available: await this.store.ftsAvailable(), backend: this.store.keywordBackend },
      embedding: {
        source: this.sources.active?.kind ?? null,
        model: this.sources.active?.model ?? null,
        dimensions: this.sources.active?.dimensions ?? null,
        available: this.sources.active !== null,
        reason: this.sources.reason(),
        cacheStats: this.sources.cache.stats(),
      },
      vectorStore: {
        backend,
        available: this.sources.active !== null && (await this.store.hasVectorIndex()),
        rowCount: await this.store.vecRowCount(),
        needsReindex: await this.store.needsReindex(this.sources.activeSig ?? storedSig, new Date()),
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

  /** GET /api/memory/embedding-providers: providers with an embeddings endpoint and their embedding models. */
  embeddingProviders(): ReturnType<EmbeddingSelector['providers']> {
    return this.sources.providers();
  }

  // ---------------------------------------------------------------- conversations

  /** Queues extraction of memories from one exchange; never awaited by the request. */
  enqueueExtraction(job: ExtractionJob): void {
    if (!this.closed) this.extraction.push(job);
  }

  /** POST /api/memory/summarize (episodes.ts). */
  summarize(o: SummarizeOptions): Promise<SummaryResult> {
    return summarizeEpisodes(this.episodes(), o);
  }

  private episodes(): EpisodeContext {
    return { engine: this, services: this.services, closed: () => this.closed };
  }

  private async autoSummarize(): Promise<void> {
    const s = this.settingsValue;
    if (!s.autoSummarize || !s.summarizationModel) return;
    for (const scope of await this.store.episodicScopes()) {
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
