import type { Price } from '../usage/pricing.js';
import type { CatalogEntry, CatalogPrices } from '../../shared/catalog.js';
import { ROUTER_PROVIDER_ID, type CompactModel, type CompactProvider, type Snapshot } from './snapshot.js';

export { ROUTER_PROVIDER_ID };

export type { CatalogEntry, CatalogPrices };


/** What the catalog knows of one model (see CompactModel). */
export interface CatalogModel {
  provider: string;
  model: CompactModel;
}

/** Release suffixes models.dev keeps in ids and clients leave out (or the other way round). */
const DATED = /(?:-\d{4}-\d{2}-\d{2}|-\d{8})$/;

/**
 * The catalog in memory: the compact snapshot as parsed, with one index per provider built on first use.
 * Providers are keyed by router's id (ROUTER_PROVIDER_ID).
 */
export class ModelCatalog {
  readonly version: string;
  readonly source: string;
  private readonly providers = new Map<string, CompactProvider>();
  private readonly index = new Map<string, Map<string, CompactModel>>();

  constructor(snapshot: Snapshot) {
    this.version = snapshot.version;
    this.source = snapshot.source;
    for (const [id, p] of Object.entries(snapshot.providers)) this.providers.set(ROUTER_PROVIDER_ID[id] ?? id, p);
  }

  /** Provider ids (router's), in catalog order. */
  providerIds(): string[] {
    return [...this.providers.keys()];
  }

  provider(id: string): CompactProvider | undefined {
    return this.providers.get(id);
  }

  get modelCount(): number {
    let n = 0;
    for (const p of this.providers.values()) n += p.models.length;
    return n;
  }

  /**
   * A provider's model: the exact id, else the id without a `models/` prefix or a dated suffix, else the
   * dated id the catalog has for an undated one (`claude-3-7-sonnet` -> `claude-3-7-sonnet-20250219`).
   */
  model(provider: string, model: string): CompactModel | undefined {
    const idx = this.indexOf(provider);
    if (!idx) return undefined;
    const plain = model.startsWith('models/') ? model.slice(7) : model;
    return idx.get(plain) ?? idx.get(plain.replace(DATED, '')) ?? idx.get(`\u0000${plain}`);
  }

  /** The catalog's price of a provider's model, as router prices (absent rates fall back: pricing.ts). */
  price(provider: string, model: string): Price | undefined {
    const m = this.model(provider, model);
    return m ? priceOf(m) : undefined;
  }

  /** Every model of every provider, as the API lists them. */
  entries(): CatalogEntry[] {
    const out: CatalogEntry[] = [];
    for (const [provider, p] of this.providers) for (const m of p.models) out.push(entryOf(provider, m));
    return out;
  }

  private indexOf(provider: string): Map<string, CompactModel> | undefined {
    let idx = this.index.get(provider);
    if (idx) return idx;
    const p = this.providers.get(provider);
    if (!p) return undefined;
    idx = new Map();
    for (const m of p.models) idx.set(m[0], m);
    // Undated aliases of dated ids (only where no undated entry exists): `\0` marks them as second choice.
    for (const m of p.models) {
      const undated = m[0].replace(DATED, '');
      if (undated !== m[0] && !idx.has(undated)) idx.set(`\u0000${undated}`, m);
    }
    this.index.set(provider, idx);
    return idx;
  }
}

/** A compact model's prices, or null when input and output are not both published. */
export function pricesOf(m: CompactModel): CatalogPrices | null {
  const [, , , , , , , input, output, cacheRead, cacheWrite, reasoning, inputAudio, outputAudio] = m;
  if (input === null || output === null) return null;
  return { input, output, cacheRead, cacheWrite, reasoning, inputAudio, outputAudio };
}

function priceOf(m: CompactModel): Price | undefined {
  const p = pricesOf(m);
  if (!p) return undefined;
  const price: Price = { input: p.input, output: p.output };
  if (p.cacheRead !== null) price.cacheRead = p.cacheRead;
  if (p.cacheWrite !== null) price.cacheWrite = p.cacheWrite;
  if (p.reasoning !== null) price.reasoning = p.reasoning;
  if (p.inputAudio !== null) price.audioInput = p.inputAudio;
  if (p.outputAudio !== null) price.audioOutput = p.outputAudio;
  return price;
}

export function entryOf(provider: string, m: CompactModel): CatalogEntry {
  const [id, name, contextWindow, maxOutputTokens, inputs, outputs, flags] = m;
  return {
    id: `${provider}/${id}`,
    provider,
    name,
    contextWindow,
    maxOutputTokens,
    inputModalities: inputs ? inputs.split(',') : [],
    outputModalities: outputs ? outputs.split(',') : [],
    toolCall: flags.includes('t'),
    reasoning: flags.includes('r'),
    prices: pricesOf(m),
    source: 'catalog',
  };
}
