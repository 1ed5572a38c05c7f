/** Cost against the price table for every token kind; model id normalization; overrides persist. */
import { describe, expect, it } from 'vitest';
import { openDatabase } from '../../src/daemon/store/db.js';
import { migrate } from '../../src/daemon/store/migrate.js';
import { computeCost, DEFAULT_PRICES, normalizeModelId, PricingStore, type Price } from '../../src/daemon/usage/pricing.js';
import { SqlPricingRepository } from '../../src/daemon/usage/pricing-sql.js';
import { SqliteDriver } from '../../src/daemon/store/sqlite-driver.js';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const M = 1_000_000;
const full: Price = { input: 3, output: 15, cacheRead: 0.3, cacheWrite: 3.75, reasoning: 20 };

describe('computeCost: one token kind at a time (IR convention)', () => {
  it('uncached input is billed at the input rate', () => {
    expect(computeCost(full, { inputTokens: M, outputTokens: 0 })).toBeCloseTo(3, 12);
  });
  it('cache reads are billed at the cache-read rate, not as input', () => {
    expect(computeCost(full, { inputTokens: M, outputTokens: 0, cacheReadTokens: M })).toBeCloseTo(0.3, 12);
  });
  it('cache writes are billed at the cache-write rate, not as input', () => {
    expect(computeCost(full, { inputTokens: M, outputTokens: 0, cacheWriteTokens: M })).toBeCloseTo(3.75, 12);
  });
  it('visible output is billed at the output rate', () => {
    expect(computeCost(full, { inputTokens: 0, outputTokens: M })).toBeCloseTo(15, 12);
  });
  it('reasoning is billed at the reasoning rate, not as output', () => {
    expect(computeCost(full, { inputTokens: 0, outputTokens: M, reasoningTokens: M })).toBeCloseTo(20, 12);
  });
  it('all kinds together follow the documented formula', () => {
    const u = { inputTokens: 10_000, outputTokens: 3_000, cacheReadTokens: 4_000, cacheWriteTokens: 1_000, reasoningTokens: 500 };
    const expected = (5_000 * 3 + 4_000 * 0.3 + 1_000 * 3.75 + 2_500 * 15 + 500 * 20) / M;
    expect(computeCost(full, u)).toBeCloseTo(expected, 15);
  });
});

describe('computeCost: absent rates fall back', () => {
  const bare: Price = { input: 2, output: 8 };
  it('cache read and write to the input rate', () => {
    expect(computeCost(bare, { inputTokens: M, outputTokens: 0, cacheReadTokens: M / 2, cacheWriteTokens: M / 2 })).toBeCloseTo(2, 12);
  });
  it('reasoning to the output rate', () => {
    expect(computeCost(bare, { inputTokens: 0, outputTokens: M, reasoningTokens: M / 4 })).toBeCloseTo(8, 12);
  });
  it('inconsistent counts never go negative', () => {
    expect(computeCost(bare, { inputTokens: 10, outputTokens: 1, cacheReadTokens: 50, reasoningTokens: 7 })).toBeCloseTo((50 * 2 + 7 * 8) / M, 15);
    expect(computeCost(bare, { inputTokens: -5, outputTokens: Number.NaN })).toBe(0);
  });
});

describe('shipped defaults', () => {
  it('cover the main models of the seven providers', () => {
    for (const [provider, model] of [
      ['openai', 'gpt-4o'],
      ['openai', 'gpt-5'],
      ['anthropic', 'claude-sonnet-4-5'],
      ['anthropic', 'claude-haiku-4-5'],
      ['gemini', 'gemini-2.5-flash'],
      ['deepseek', 'deepseek-chat'],
      ['groq', 'llama-3.3-70b-versatile'],
      ['mistral', 'mistral-large-latest'],
      ['xai', 'grok-4'],
    ]) {
      const p = DEFAULT_PRICES[provider!]?.[model!];
      expect(p, `${provider}/${model}`).toBeDefined();
      expect(p!.input).toBeGreaterThan(0);
    }
  });
  it('anthropic: cache writes cost more than input, cache reads less', () => {
    for (const p of Object.values(DEFAULT_PRICES.anthropic!)) {
      expect(p.cacheWrite!).toBeGreaterThan(p.input);
      expect(p.cacheRead!).toBeLessThan(p.input);
    }
  });
});

describe('model id normalization (fallback only)', () => {
  it.each([
    ['gpt-4o-2024-08-06', 'gpt-4o'],
    ['claude-sonnet-4-5-20250929', 'claude-sonnet-4-5'],
    ['claude-sonnet-4-5@20250929', 'claude-sonnet-4-5'],
    ['claude-3-5-haiku-latest', 'claude-3-5-haiku'],
    ['grok-4-0709', 'grok-4'],
    ['models/gemini-2.5-flash', 'gemini-2.5-flash'],
    ['gemini-2.0-flash-001', 'gemini-2.0-flash'],
  ])('%s -> %s', (id, base) => {
    expect(normalizeModelId(id)).toBe(base);
  });
  it('leaves undated ids alone', () => {
    for (const id of ['gpt-4o', 'claude-opus-4-1', 'o3', 'openai/gpt-oss-120b']) expect(normalizeModelId(id)).toBeUndefined();
  });

  it('a dated id uses its own price when it has one, the base price otherwise', async () => {
    const home = mkdtempSync(join(tmpdir(), 'router-pricing-'));
    const db = openDatabase(join(home, 'router.db'));
    try {
      migrate(db);
      const store = await PricingStore.create(new SqlPricingRepository(new SqliteDriver(db)));
      expect(store.lookup('openai', 'gpt-4o-2024-08-06')).toEqual(DEFAULT_PRICES.openai!['gpt-4o']);
      expect(store.lookup('anthropic', 'claude-sonnet-4-5-20250929')).toEqual(DEFAULT_PRICES.anthropic!['claude-sonnet-4-5']);
      expect(store.lookup('openai', 'no-such-model')).toBeUndefined();
      expect(store.cost('openai', 'no-such-model', { inputTokens: 5, outputTokens: 5 })).toEqual({ costUsd: null, costSource: 'unpriced', priceVersion: null });
      // An exact entry wins over normalization.
      await store.set('openai', 'gpt-4o-2024-05-13', { input: 5, output: 15 });
      expect(store.lookup('openai', 'gpt-4o-2024-05-13')).toEqual({ input: 5, output: 15 });
      expect(store.lookup('openai', 'gpt-4o-2024-08-06')).toEqual(DEFAULT_PRICES.openai!['gpt-4o']);
      // Overrides apply to the base id (and so to dated ids that fall back to it) and persist.
      await store.set('openai', 'gpt-4o', { input: 1, output: 2, reasoning: 3 });
      const reopened = await PricingStore.create(new SqlPricingRepository(new SqliteDriver(db)));
      expect(reopened.lookup('openai', 'gpt-4o-2024-08-06')).toEqual({ input: 1, output: 2, reasoning: 3 });
      expect(await reopened.reset('openai', 'gpt-4o')).toBe(true);
      expect(reopened.lookup('openai', 'gpt-4o')).toEqual(DEFAULT_PRICES.openai!['gpt-4o']);
      expect(await reopened.reset('openai', 'gpt-4o')).toBe(false);
    } finally {
      db.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('unit rates of media and rerank models', () => {
  it('are part of the one table: defaults listed, overrides persisted with their unit rates', async () => {
    const home = mkdtempSync(join(tmpdir(), 'router-pricing-'));
    const db = openDatabase(join(home, 'router.db'));
    try {
      migrate(db);
      const store = await PricingStore.create(new SqlPricingRepository(new SqliteDriver(db)));
      expect(store.lookup('cohere', 'rerank-v3.5')).toMatchObject({ perSearchUnit: 0.002 });
      expect(store.entry('openai', 'dall-e-3')).toMatchObject({ input: 0, output: 0, perImage: { 'hd/*': 0.12 }, source: 'default' });
      // A token-only entry shows no unit fields.
      expect(Object.keys(store.entry('openai', 'gpt-4o')!)).not.toContain('perImage');
      await store.set('openai', 'whisper-1', { input: 0, output: 0, perAudioMinute: 0.5, minAudioSeconds: 5 });
      await store.set('openai', 'dall-e-3', { input: 0, output: 0, perImage: { '*/*': 0.3 } });
      const reopened = await PricingStore.create(new SqlPricingRepository(new SqliteDriver(db)));
      expect(reopened.lookup('openai', 'whisper-1')).toEqual({ input: 0, output: 0, perAudioMinute: 0.5, minAudioSeconds: 5 });
      expect(reopened.entry('openai', 'dall-e-3')).toMatchObject({ perImage: { '*/*': 0.3 }, source: 'override' });
    } finally {
      db.close();
      rmSync(home, { recursive: true, force: true });
    }
  });
});
