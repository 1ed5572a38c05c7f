import type { PriceEntry, UnitRates } from '../../shared/pricing.js';
import { LOCAL_CHANGES, type ChangeFeed } from '../store/changes.js';
import { MEDIA_PRICES } from './media-prices.js';
import type { PriceOverride, PricingRepository } from './pricing-port.js';

export type { PriceEntry, UnitRates };

/** The unit-rate fields, in the order the price table lists them. */
export const UNIT_RATE_FIELDS = ['imageInput', 'imageOutput', 'audioInput', 'audioOutput', 'perImage', 'perAudioMinute', 'minAudioSeconds', 'perMillionCharacters', 'perSearchUnit'] as const;

/** Prices in USD per million tokens. Absent rates fall back: cache read and write to input, reasoning to output. */
export interface Price extends UnitRates {
  input: number;
  output: number;
  cacheRead?: number;
  /** Cache writes of the 5-minute kind (Anthropic's default), or of any kind where the provider has one. */
  cacheWrite?: number;
  reasoning?: number;
}

/** Anthropic's 1-hour cache writes cost twice the input rate (platform.claude.com pricing: "1h cache writes"). */
const ONE_HOUR_WRITE_FACTOR = 2;

/** Token counts in the IR convention: input includes cache reads and writes, output includes reasoning. */
export interface CostUsage {
  inputTokens: number;
  outputTokens: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
  /** The part of cacheWriteTokens written for one hour. */
  cacheWrite1hTokens?: number;
  reasoningTokens?: number;
  /** Parts of inputTokens / outputTokens in audio or images, billed at the audio and image rates. */
  audioInputTokens?: number;
  audioOutputTokens?: number;
  imageInputTokens?: number;
  imageOutputTokens?: number;
}

const p = (input: number, output: number, extra: Omit<Price, 'input' | 'output'> = {}): Price => ({ input, output, ...extra });

/**
 * Shipped default prices, USD per million tokens, standard (non-batch) tier, checked in November 2026.
 * Not exhaustive: users add or correct any model with PUT /api/pricing/:provider/:model.
 *
 * Sources (published price lists):
 * - openai:    https://developers.openai.com/api/docs/pricing ("cached input" = cacheRead)
 * - anthropic: https://platform.claude.com/docs/en/about-claude/pricing ("5m cache writes" = cacheWrite,
 *              "cache hits & refreshes" = cacheRead)
 * - gemini:    https://ai.google.dev/gemini-api/docs/pricing (prompts up to 200k tokens; "context caching"
 *              = cacheRead; thinking tokens are billed as output)
 * - deepseek:  https://api-docs.deepseek.com/quick_start/pricing (cache hit = cacheRead, cache miss = input)
 * - groq:      https://groq.com/pricing
 * - mistral:   https://mistral.ai/pricing#api-pricing
 * - xai:       https://docs.x.ai/developers/pricing ("cached input" = cacheRead)
 * - voyage:    https://docs.voyageai.com/docs/pricing (rerankers: tokens of query and documents = input)
 * Media models (images, audio) and Cohere's rerankers (per search unit) are in media-prices.ts, merged below.
 */
const TOKEN_PRICES: Readonly<Record<string, Readonly<Record<string, Price>>>> = {
  openai: {
    'gpt-5.5': p(5, 30, { cacheRead: 0.5 }),
    'gpt-5.4': p(2.5, 15, { cacheRead: 0.25 }),
    'gpt-5.4-mini': p(0.75, 4.5, { cacheRead: 0.075 }),
    'gpt-5.4-nano': p(0.2, 1.25, { cacheRead: 0.02 }),
    'gpt-5.2': p(1.75, 14, { cacheRead: 0.175 }),
    'gpt-5.1': p(1.25, 10, { cacheRead: 0.125 }),
    'gpt-5': p(1.25, 10, { cacheRead: 0.125 }),
    'gpt-5-mini': p(0.25, 2, { cacheRead: 0.025 }),
    'gpt-5-nano': p(0.05, 0.4, { cacheRead: 0.005 }),
    'gpt-4.1': p(2, 8, { cacheRead: 0.5 }),
    'gpt-4.1-mini': p(0.4, 1.6, { cacheRead: 0.1 }),
    'gpt-4.1-nano': p(0.1, 0.4, { cacheRead: 0.025 }),
    'gpt-4o': p(2.5, 10, { cacheRead: 1.25 }),
    'gpt-4o-mini': p(0.15, 0.6, { cacheRead: 0.075 }),
    o1: p(15, 60, { cacheRead: 7.5 }),
    o3: p(2, 8, { cacheRead: 0.5 }),
    'o3-mini': p(1.1, 4.4, { cacheRead: 0.55 }),
    'o4-mini': p(1.1, 4.4, { cacheRead: 0.275 }),
    'text-embedding-3-small': p(0.02, 0),
    'text-embedding-3-large': p(0.13, 0),
  },
  anthropic: {
    'claude-opus-5': p(5, 25, { cacheRead: 0.5, cacheWrite: 6.25 }),
    'claude-opus-4-8': p(5, 25, { cacheRead: 0.5, cacheWrite: 6.25 }),
    'claude-opus-4-7': p(5, 25, { cacheRead: 0.5, cacheWrite: 6.25 }),
    'claude-opus-4-6': p(5, 25, { cacheRead: 0.5, cacheWrite: 6.25 }),
    'claude-opus-4-5': p(5, 25, { cacheRead: 0.5, cacheWrite: 6.25 }),
    'claude-opus-4-1': p(15, 75, { cacheRead: 1.5, cacheWrite: 18.75 }),
    'claude-opus-4': p(15, 75, { cacheRead: 1.5, cacheWrite: 18.75 }),
    'claude-sonnet-4-6': p(3, 15, { cacheRead: 0.3, cacheWrite: 3.75 }),
    'claude-sonnet-4-5': p(3, 15, { cacheRead: 0.3, cacheWrite: 3.75 }),
    'claude-sonnet-4': p(3, 15, { cacheRead: 0.3, cacheWrite: 3.75 }),
    'claude-3-7-sonnet': p(3, 15, { cacheRead: 0.3, cacheWrite: 3.75 }),
    'claude-haiku-4-5': p(1, 5, { cacheRead: 0.1, cacheWrite: 1.25 }),
    'claude-3-5-haiku': p(0.8, 4, { cacheRead: 0.08, cacheWrite: 1 }),
    'claude-3-haiku': p(0.25, 1.25, { cacheRead: 0.03, cacheWrite: 0.3 }),
  },
  gemini: {
    'gemini-3.1-pro-preview': p(2, 12, { cacheRead: 0.2 }),
    'gemini-3-pro-preview': p(2, 12, { cacheRead: 0.2 }),
    'gemini-3-flash-preview': p(0.5, 3, { cacheRead: 0.05 }),
    'gemini-2.5-pro': p(1.25, 10, { cacheRead: 0.125 }),
    'gemini-2.5-flash': p(0.3, 2.5, { cacheRead: 0.03 }),
    'gemini-2.5-flash-lite': p(0.1, 0.4, { cacheRead: 0.01 }),
    'gemini-2.0-flash': p(0.1, 0.4, { cacheRead: 0.025 }),
  },
  deepseek: {
    'deepseek-chat': p(0.28, 0.42, { cacheRead: 0.028 }),
    'deepseek-reasoner': p(0.28, 0.42, { cacheRead: 0.028 }),
  },
  groq: {
    'llama-3.3-70b-versatile': p(0.59, 0.79),
    'llama-3.1-8b-instant': p(0.05, 0.08),
    'openai/gpt-oss-120b': p(0.15, 0.6, { cacheRead: 0.075 }),
    'openai/gpt-oss-20b': p(0.075, 0.3, { cacheRead: 0.0375 }),
  },
  mistral: {
    'mistral-large-latest': p(0.5, 1.5),
    'mistral-medium-latest': p(0.4, 2),
    'mistral-small-latest': p(0.1, 0.3),
    'codestral-latest': p(0.3, 0.9),
    'magistral-medium-latest': p(2, 5),
  },
  xai: {
    'grok-4.3': p(1.25, 2.5, { cacheRead: 0.2 }),
    'grok-4.20-0309-reasoning': p(1.25, 2.5, { cacheRead: 0.2 }),
    'grok-4.20-0309-non-reasoning': p(1.25, 2.5, { cacheRead: 0.2 }),
    'grok-4-1-fast-reasoning': p(0.2, 0.5, { cacheRead: 0.05 }),
    'grok-4-1-fast-non-reasoning': p(0.2, 0.5, { cacheRead: 0.05 }),
    'grok-4': p(3, 15, { cacheRead: 0.75 }),
    'grok-code-fast-1': p(0.2, 1.5, { cacheRead: 0.02 }),
    'grok-3': p(3, 15, { cacheRead: 0.75 }),
    'grok-3-mini': p(0.3, 0.5, { cacheRead: 0.075 }),
  },
  voyage: {
    'rerank-2.5': p(0.05, 0),
    'rerank-2.5-lite': p(0.02, 0),
  },
};

/** The shipped price table: token prices and the media/rerank models' unit rates (media-prices.ts). */
export const DEFAULT_PRICES: Readonly<Record<string, Readonly<Record<string, Price>>>> = mergeTables(TOKEN_PRICES, MEDIA_PRICES);

function mergeTables(...tables: Readonly<Record<string, Readonly<Record<string, Price>>>>[]): Record<string, Record<string, Price>> {
  const out: Record<string, Record<string, Price>> = {};
  for (const t of tables) for (const [provider, models] of Object.entries(t)) out[provider] = { ...out[provider], ...models };
  return out;
}

const PER = 1_000_000;

/**
 * Cost in USD of one reply (docs/usage.md "One usage model"):
 *   (input - cacheRead - cacheWrite - audioIn - imageIn) x input + cacheRead x cacheRead rate
 *   + cacheWrite5m x cacheWrite rate + cacheWrite1h x (2 x input) + audioIn x audioInput + imageIn x imageInput
 *   + (output - reasoning - audioOut - imageOut) x output + reasoning x reasoning rate
 *   + audioOut x audioOutput + imageOut x imageOutput
 * with each token count per million; absent rates fall back to input (cache, audio and image input) or
 * output. Negative differences (inconsistent upstream counts) count as 0.
 */
export function computeCost(price: Price, u: CostUsage): number {
  const cacheRead = nonNegative(u.cacheReadTokens);
  const cacheWrite = nonNegative(u.cacheWriteTokens);
  const write1h = Math.min(cacheWrite, nonNegative(u.cacheWrite1hTokens));
  const reasoning = nonNegative(u.reasoningTokens);
  const audioIn = nonNegative(u.audioInputTokens);
  const imageIn = nonNegative(u.imageInputTokens);
  const audioOut = nonNegative(u.audioOutputTokens);
  const imageOut = nonNegative(u.imageOutputTokens);
  const uncached = Math.max(0, nonNegative(u.inputTokens) - cacheRead - cacheWrite - audioIn - imageIn);
  const visibleOut = Math.max(0, nonNegative(u.outputTokens) - reasoning - audioOut - imageOut);
  return (
    (uncached * price.input +
      cacheRead * (price.cacheRead ?? price.input) +
      (cacheWrite - write1h) * (price.cacheWrite ?? price.input) +
      write1h * price.input * ONE_HOUR_WRITE_FACTOR +
      audioIn * (price.audioInput ?? price.input) +
      imageIn * (price.imageInput ?? price.input) +
      visibleOut * price.output +
      reasoning * (price.reasoning ?? price.output) +
      audioOut * (price.audioOutput ?? price.output) +
      imageOut * (price.imageOutput ?? price.output)) /
    PER
  );
}

function nonNegative(n: number | undefined): number {
  return typeof n === 'number' && n > 0 && Number.isFinite(n) ? n : 0;
}

// Release suffixes: -2024-08-06, -20250929, @20250929 (Vertex), -0709 (xAI), -001 (Gemini), -latest.
const SUFFIX_RE = /(?:-\d{4}-\d{2}-\d{2}|-\d{8}|@\d{8}|-\d{2}-\d{2}|-0\d{3}|-0\d{2}|-latest)$/;

/**
 * The lookup fallback for a model id with no price of its own: the id without a `models/` prefix and
 * without a dated or `-latest` release suffix (`gpt-4o-2024-08-06` -> `gpt-4o`,
 * `claude-sonnet-4-5-20250929` -> `claude-sonnet-4-5`). Returns undefined when nothing would change.
 */
export function normalizeModelId(model: string): string | undefined {
  let m = model.startsWith('models/') ? model.slice(7) : model;
  m = m.replace(SUFFIX_RE, '');
  return m !== model && m !== '' ? m : undefined;
}

const MEMO_MAX = 4096;

/** Where a row's cost came from (CONTRACT "Model catalog and cost"). */
export type CostSource = 'reported' | 'computed' | 'unpriced';

/** A price and the version of the table that holds it (`override`, BUILTIN_PRICE_VERSION or the catalog's). */
export interface Priced {
  price: Price;
  version: string;
}

/** A row's cost: USD (null when unpriced, never a silent 0), its source and the price version used. */
export interface RowCost {
  costUsd: number | null;
  costSource: CostSource;
  priceVersion: string | null;
}

/** The version of the shipped table above (the month its prices were checked). */
export const BUILTIN_PRICE_VERSION = 'router@2026-11';
/** The version of a user's price. */
export const OVERRIDE_PRICE_VERSION = 'override';

/** The model catalog as pricing reads it (catalog/service.ts): consulted after overrides and the shipped table. */
export interface PriceCatalog {
  get(): { version: string; price(provider: string, model: string): Price | undefined };
  onChange(fn: () => void): void;
}

/** The change-feed topic of the price overrides (docs/storage.md). */
export const PRICING_TOPIC = 'pricing';

const UNPRICED: RowCost = Object.freeze({ costUsd: null, costSource: 'unpriced', priceVersion: null }) as RowCost;

/**
 * The effective price table: the user's overrides, then the shipped defaults, then the model catalog
 * (models.dev; docs/catalog.md). Overrides are kept in memory (the snapshot) and written to storage through
 * the pricing port first: the snapshot changes only once stored. `resolve` is a Map read after the first
 * call for a model, so the proxy prices every reply without touching the database (the catalog is read from
 * memory too, loaded on the first model it is asked for). In a cluster, a price set on one node is published
 * on the change feed and the other nodes `reload()` their snapshot (and drop their resolved prices).
 */
export class PricingStore {
  private overrides = new Map<string, Map<string, Price>>();
  /** provider -> model -> price (null: none). Two levels, so a lookup builds no key string to hash. */
  private readonly memo = new Map<string, Map<string, Priced | null>>();
  private memoSize = 0;

  /** `initial`: the overrides as stored (`repo.loadAll()`); `create` loads them itself. */
  constructor(
    private readonly repo: PricingRepository,
    initial: readonly PriceOverride[],
    private readonly catalog?: PriceCatalog,
    private readonly changes: ChangeFeed = LOCAL_CHANGES,
    onReloadError: (error: unknown) => void = () => {},
  ) {
    this.overrides = byProvider(initial);
    catalog?.onChange(() => this.clearMemo());
    // The reload's promise is returned for feeds that wait for their subscribers (tests); it never rejects.
    this.changes.subscribe(PRICING_TOPIC, () => this.reload().catch(onReloadError));
  }

  static async create(repo: PricingRepository, catalog?: PriceCatalog, changes?: ChangeFeed, onReloadError?: (error: unknown) => void): Promise<PricingStore> {
    return new PricingStore(repo, await repo.loadAll(), catalog, changes, onReloadError);
  }

  /** Replaces the overrides with what storage holds now; prices resolved before are resolved again. */
  async reload(): Promise<void> {
    this.overrides = byProvider(await this.repo.loadAll());
    this.clearMemo();
  }

  /** The price for a provider's model (see `resolve`). */
  lookup(provider: string, model: string): Price | undefined {
    return this.resolve(provider, model)?.price;
  }

  /**
   * The price for a provider's model and its version: exact match first (override, then default), then the
   * normalized id, then the catalog. A user's price always wins over the catalog.
   */
  resolve(provider: string, model: string): Priced | undefined {
    let byModel = this.memo.get(provider);
    const hit = byModel?.get(model);
    if (hit !== undefined) return hit ?? undefined;
    let priced = this.exact(provider, model);
    if (!priced) {
      const normalized = normalizeModelId(model);
      if (normalized) priced = this.exact(provider, normalized) ?? this.exact(provider, normalizeModelId(normalized) ?? '');
    }
    if (!priced && this.catalog) {
      const catalog = this.catalog.get();
      const price = catalog.price(provider, model);
      if (price) priced = { price, version: catalog.version };
    }
    if (this.memoSize >= MEMO_MAX) {
      this.clearMemo();
      byModel = undefined;
    }
    if (!byModel) {
      byModel = new Map<string, Priced | null>();
      this.memo.set(provider, byModel);
    }
    byModel.set(model, priced ?? null);
    this.memoSize++;
    return priced;
  }

  /** The user's own price of exactly this provider and model, if set. */
  override(provider: string, model: string): Price | undefined {
    return this.overrides.get(provider)?.get(model);
  }

  private clearMemo(): void {
    this.memo.clear();
    this.memoSize = 0;
  }

  /** Cost of a reply: computed with the price in effect, or unpriced (`costUsd: null`) when none is known. */
  cost(provider: string, model: string, usage: CostUsage, factor = 1): RowCost {
    const priced = this.resolve(provider, model);
    if (!priced) return UNPRICED;
    return { costUsd: computeCost(priced.price, usage) * factor, costSource: 'computed', priceVersion: priced.version };
  }

  /** Every effective entry (defaults and overrides), sorted by provider then model. */
  list(provider?: string): PriceEntry[] {
    const out: PriceEntry[] = [];
    const providers = new Set([...Object.keys(DEFAULT_PRICES), ...this.overrides.keys()]);
    for (const prov of providers) {
      if (provider !== undefined && prov !== provider) continue;
      const models = new Set([...Object.keys(DEFAULT_PRICES[prov] ?? {}), ...(this.overrides.get(prov)?.keys() ?? [])]);
      for (const model of models) out.push(this.entry(prov, model)!);
    }
    return out.sort((a, b) => (a.provider === b.provider ? a.model.localeCompare(b.model) : a.provider.localeCompare(b.provider)));
  }

  /** The effective entry of exactly this provider and model (no normalization), or undefined. */
  entry(provider: string, model: string): PriceEntry | undefined {
    const override = this.overrides.get(provider)?.get(model);
    const def = DEFAULT_PRICES[provider]?.[model];
    const price = override ?? def;
    if (!price) return undefined;
    return {
      provider,
      model,
      input: price.input,
      output: price.output,
      cacheRead: price.cacheRead ?? null,
      cacheWrite: price.cacheWrite ?? null,
      reasoning: price.reasoning ?? null,
      ...unitRates(price),
      source: override ? 'override' : 'default',
      hasDefault: def !== undefined,
    };
  }

  /** Sets the user's price for a provider's model (stored first; the snapshot follows once it is). */
  async set(provider: string, model: string, price: Price): Promise<PriceEntry> {
    const own = { ...price };
    await this.repo.upsert({ provider, model, price: own }, new Date().toISOString());
    this.put(provider, model, own);
    this.changes.publish(PRICING_TOPIC);
    return this.entry(provider, model)!;
  }

  /**
   * Removes the user's price (the default, if any, applies again). False when storage held none. Storage
   * decides, not the snapshot: in a cluster, a price another node set a moment ago is removed too.
   */
  async reset(provider: string, model: string): Promise<boolean> {
    const removed = await this.repo.remove(provider, model);
    const models = this.overrides.get(provider);
    models?.delete(model);
    if (models?.size === 0) this.overrides.delete(provider);
    this.clearMemo();
    if (removed) this.changes.publish(PRICING_TOPIC);
    return removed;
  }

  private exact(provider: string, model: string): Priced | undefined {
    const override = this.overrides.get(provider)?.get(model);
    if (override) return { price: override, version: OVERRIDE_PRICE_VERSION };
    const def = DEFAULT_PRICES[provider]?.[model];
    return def && { price: def, version: BUILTIN_PRICE_VERSION };
  }

  private put(provider: string, model: string, price: Price): void {
    let models = this.overrides.get(provider);
    if (!models) this.overrides.set(provider, (models = new Map()));
    models.set(model, price);
    this.clearMemo();
  }
}

function byProvider(overrides: readonly PriceOverride[]): Map<string, Map<string, Price>> {
  const out = new Map<string, Map<string, Price>>();
  for (const o of overrides) {
    let models = out.get(o.provider);
    if (!models) out.set(o.provider, (models = new Map()));
    models.set(o.model, o.price);
  }
  return out;
}

/** The unit rates a price sets (no other field). */
export function unitRates(price: UnitRates): UnitRates {
  const out: Record<string, unknown> = {};
  for (const f of UNIT_RATE_FIELDS) if (price[f] !== undefined) out[f] = price[f];
  return out as UnitRates;
}
