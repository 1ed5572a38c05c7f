import type { Logger } from '../../logger.js';
import type { PipelineDeps } from '../../proxy/deps.js';
import type { MemorySettings } from '../settings.js';
import type { MemoryRepository } from '../port.js';
import type { EmbeddingSourceKind } from '../types.js';
import { modelReachable, remoteEmbed } from '../upstream.js';
import { EmbeddingCache } from './cache.js';
import { signatureOf, type EmbeddingSource, type SourceProbe } from './source.js';
import { loadStaticModel, type StaticModel } from './static.js';
import { loadTransformersModel, type Importer } from './transformers.js';

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

function message(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** What the selector reads from the engine that owns it. */
export interface SelectorDeps {
  store: MemoryRepository;
  /** Tells the other nodes that vectors changed (a reset). */
  changed(): void;
  log: Logger;
  settings(): MemorySettings;
  services(): PipelineDeps | undefined;
  closed(): boolean;
  /** Called after a source was chosen (the engine schedules a reindex when that setting is on). */
  onSelected(): void;
}

/**
 * Embedding-source selection: probes the configured sources in order (remote model through router's
 * provider path, a static model folder, an ONNX model through @huggingface/transformers), keeps the first
 * available one with its signature (source:model:dimensions), and embeds through an LRU of vectors.
 */
export class EmbeddingSelector {
  active: EmbeddingSource | null = null;
  activeSig: string | null = null;
  probes: SourceProbe[] = [];
  readonly cache: EmbeddingCache;
  private seq = 0;
  private staticModel?: { path: string; model: StaticModel };
  private transformersModel?: { path: string; source: EmbeddingSource };
  private transformersImporter?: Importer;

  constructor(private readonly deps: SelectorDeps) {
    this.cache = new EmbeddingCache(deps.settings().embeddingCacheSize);
  }

  /** Tests swap the importer of @huggingface/transformers. */
  setTransformersImporter(importer: Importer | undefined): void {
    this.transformersImporter = importer;
    this.transformersModel = undefined;
  }

  private async probe(kind: EmbeddingSourceKind): Promise<SourceProbe> {
    const s = this.deps.settings();
    const { store } = this.deps;
    try {
      if (kind === 'remote') {
        if (!s.remoteModel) return { kind, available: false, model: null, reason: 'no remote embedding model configured (remoteModel)' };
        const services = this.deps.services();
        if (!services) throw new Error('engine has no pipeline');
        const reach = modelReachable(services, s.remoteModel);
        if (!reach.ok) return { kind, available: false, model: s.remoteModel, reason: reach.reason };
        const model = s.remoteModel;
        const dimsKey = `remote_dims:${model}:${s.remoteDimensions ?? ''}`;
        let dims = Number((await store.meta(dimsKey)) ?? 0);
        if (!dims) {
          dims = (await remoteEmbed(services, model, ['dimension probe'], s.remoteDimensions))[0]!.length;
          if (!dims) throw new Error('remote model returned an empty vector');
          await store.setMeta(dimsKey, String(dims), new Date());
        }
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
   * Picks the first available source of the configured order. A new signature resets the vec0 table to the
   * new width; every row then needs reindexing, which runs in the background.
   */
  async select(): Promise<void> {
    const seq = ++this.seq;
    const probes: SourceProbe[] = [];
    let chosen: EmbeddingSource | null = null;
    for (const kind of this.deps.settings().embeddingOrder) {
      const p = await this.probe(kind);
      probes.push(p);
      if (p.available) {
        chosen = p.source;
        break;
      }
    }
    if (this.deps.closed() || seq !== this.seq) return;
    this.probes = probes;
    if (!chosen) {
      this.active = null;
      this.activeSig = null;
      return;
    }
    const sig = signatureOf(chosen);
    const { store, log } = this.deps;
    if (await store.adoptSignature(sig, chosen.dimensions)) {
      this.deps.changed();
      log.info('memory: embedding signature changed, vectors will be reindexed', { signature: sig });
    }
    if (this.deps.closed() || seq !== this.seq) return;
    this.active = chosen;
    this.activeSig = sig;
    this.deps.onSelected();
  }

  /** Embeds texts with the active source (or `source`) through the LRU. */
  async embed(texts: string[], source = this.active): Promise<Float32Array[]> {
    if (!source) throw new Error('no embedding source available');
    const sig = signatureOf(source);
    const out: Array<Float32Array | undefined> = texts.map((t) => this.cache.get(sig, t));
    const missing = texts.map((_t, i) => (out[i] ? -1 : i)).filter((i) => i >= 0);
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

  /** Why the engine has (or has no) embedding source, for status replies. */
  reason(): string {
    if (this.active) return `using ${this.active.kind} model ${this.active.model}`;
    if (this.deps.settings().embeddingOrder.length === 0) return 'keyword only: embeddingOrder is empty';
    return this.probes.length ? this.probes.map((p) => `${p.kind}: ${p.reason}`).join('; ') : 'not probed yet';
  }

  /** GET /api/memory/embedding-providers: providers with an embeddings endpoint and their embedding models. */
  async providers(): Promise<Array<{ provider: string; hasKey: boolean; models: Array<{ id: string; name: string; dimensions: number | null }> }>> {
    const services = this.deps.services();
    if (!services) return [];
    const remote = this.deps.settings().remoteModel;
    const out = [];
    for (const def of services.providers.all()) {
      if (!def.endpoints?.embeddings) continue;
      const pub = services.providers.publicId(def);
      const ids = new Set(services.providers.models(def).map((m) => m.id).filter((id) => /embed/i.test(id)));
      if (remote) {
        const split = services.providers.split(remote);
        if (split && split.def.id === def.id) ids.add(split.model);
      }
      const models = [];
      for (const id of ids) {
        const probed = Number((await this.deps.store.meta(`remote_dims:${pub}/${id}:`)) ?? 0);
        models.push({ id: `${pub}/${id}`, name: id, dimensions: probed || KNOWN_DIMENSIONS[id] || null });
      }
      out.push({ provider: pub, hasKey: services.connections.active(def.id).length > 0, models });
    }
    return out;
  }
}
