import type { Logger } from '../logger.js';
import type { Services } from '../services.js';
import type { Db } from '../store/db.js';
import { EmbeddingSelector } from './embedding/selector.js';
import { isZero } from './embedding/source.js';
import type { Importer } from './embedding/transformers.js';
import { EXTRACTION_PROMPT, heuristicExtract, parseExtraction, SUMMARY_PROMPT, type Extracted } from './extract.js';
import { VectorIndex } from './vector-index.js';
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
  RetrieveResult,
  Scope,
  Strategy,
  Tier,
  VectorStoreKind,
} from './types.js';
import { callModel, modelReachable, remoteRerank } from './upstream.js';

const PRUNE_EVERY_MS = 5 * 60_000;
const SUMMARIZE_EVERY_MS = 6 * 3600_000;
/** Scope of the health route's probe entry; never a real key id (those are uuids). */
export const HEALTH_SCOPE = '__router_health__';

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
  /** The embedding source in use and its LRU. */
  readonly sources: EmbeddingSelector;
  /** Vectors: embedded (sqlite-vec) and external (Qdrant), with the background reindex. */
  readonly vectors: VectorIndex;
  private refreshing: Promise<void> = Promise.resolve();
  private rerankError: string | null = null;
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly extraction = new ExtractionQueue(
    (job) => this.extract(job),
    (err) => this.log.warn('memory: extraction failed', { error: message(err) }),
  );
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
    /** The state folder's secret key file: the Qdrant API key is stored sealed with it. */
    private readonly keyFile: string,
  ) {
    this.store = new MemoryStore(db);
    this.keySettings = new KeySettingsStore(db);
    this.settingsValue = loadMemorySettings(db, keyFile);
    const settings = () => this.settingsValue;
    const closed = () => this.closed;
    this.sources = new EmbeddingSelector({
      store: this.store,
      log,
      settings,
      services: () => this.services,
      closed,
      onSelected: () => {
        if (this.settingsValue.autoReindex) void this.vectors.schedule();
      },
    });
    this.vectors = new VectorIndex({ store: this.store, log, sources: this.sources, settings, closed, later: (ms, fn) => this.later(ms, fn) });
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
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    this.extraction.close();
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
    const prev = this.settingsValue;
    const next = { ...prev, ...patch } as MemorySettings;
    saveMemorySettings(this.db, next, this.keyFile);
    this.settingsValue = next;
    if (next.embeddingCacheSize !== prev.embeddingCacheSize) this.sources.cache.resize(next.embeddingCacheSize);
    const externalChanged = (['qdrantUrl', 'qdrantCollection', 'qdrantApiKey', 'qdrantTimeoutMs'] as const).some((k) => next[k] !== prev[k]);
    if (externalChanged) this.vectors.resetExternal();
    if (next.rerankModel !== prev.rerankModel) this.rerankError = null;
    this.refreshing = this.refreshing.then(() => this.refresh());
    await this.ready();
    return next;
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
    return { signature: sig, pending: this.store.needsReindex(sig), error: this.vectors.lastError };
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
    await this.vectors.index([row]);
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
    await this.vectors.index([row]);
    return publicMemory(this.store.getAny(id) ?? row);
  }

  /** DELETE: the row, its vector and, best-effort, its external point. */
  async delete(id: string): Promise<boolean> {
    const row = this.store.get(id);
    if (!row) return false;
    this.store.delete(id);
    if (this.vectors.external) {
      try {
        await this.vectors.external.delete([id]);
      } catch (err) {
        this.log.warn('memory: external point delete failed', { error: message(err) });
      }
    }
    return true;
  }

  list(f: ListFilter) {
    const r = this.store.list(f);
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

  private prune(): void {
    try {
      const gone = this.store.pruneExpired();
      if (gone.length && this.vectors.external) this.vectors.external.delete(gone.map((g) => g.id)).catch(() => undefined);
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

  // ---------------------------------------------------------------- status

  async status(): Promise<EngineStatus> {
    await this.ready();
    const s = this.settingsValue;
    const ext = this.vectors.external;
    if (ext) await ext.check();
    const extHealth = ext?.health();
    const storedSig = this.store.meta('embedding_signature') ?? null;
    const backend: VectorStoreKind = !this.sources.active ? 'none' : ext && extHealth?.healthy ? 'external-vec' : 'embedded-vec';
    let vsReason: string;
    if (!this.sources.active) vsReason = 'no embedding source: keyword search only';
    else if (ext && !extHealth?.healthy) vsReason = `external vector store unavailable (${extHealth?.error ?? 'unknown'}); embedded store used`;
    else if (backend === 'external-vec') vsReason = `Qdrant collection ${ext!.collection} at ${ext!.url}`;
    else vsReason = 'sqlite-vec (vec0) in the router database';
    if (this.vectors.lastError) vsReason += `; last reindex error: ${this.vectors.lastError}`;
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
        source: this.sources.active?.kind ?? null,
        model: this.sources.active?.model ?? null,
        dimensions: this.sources.active?.dimensions ?? null,
        available: this.sources.active !== null,
        reason: this.sources.reason(),
        cacheStats: this.sources.cache.stats(),
      },
      vectorStore: {
        backend,
        available: this.sources.active !== null && this.store.hasVecTable(),
        rowCount: this.store.vecRowCount(),
        needsReindex: this.store.needsReindex(this.sources.activeSig ?? storedSig),
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
  embeddingProviders(): ReturnType<EmbeddingSelector['providers']> {
    return this.sources.providers();
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
