import { describe, expect, it } from 'vitest';
import { DEFAULT_PRICES, PricingStore, type Price } from '../../src/daemon/usage/pricing.js';
import type { PriceOverride, PricingRepository } from '../../src/daemon/usage/pricing-port.js';
import { SqlPricingRepository } from '../../src/daemon/usage/pricing-sql.js';
import { sharedFeed } from '../support/port-fixtures.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

const key = (o: PriceOverride) => `${o.provider}/${o.model}`;
const byKey = (rows: PriceOverride[]) => new Map(rows.map((o) => [key(o), o]));
const MILLION = { inputTokens: 1_000_000, outputTokens: 1_000_000 };

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('PricingRepository', adapter), () => {
    const open = async (): Promise<{ repo: PricingRepository; second: () => Promise<PricingRepository> }> => {
      const storage = await adapter.open();
      return { repo: new SqlPricingRepository(storage.driver), second: async () => new SqlPricingRepository(await storage.connect()) };
    };

    it('stores overrides and loads them back field for field (fractional rates, absent rates, unit rates JSON)', async () => {
      const { repo } = await open();
      const tokens: PriceOverride = { provider: 'openai', model: 'gpt-4o', price: { input: 2.5, output: 10, cacheRead: 1.25, cacheWrite: 3.125, reasoning: 0.000123 } };
      const bare: PriceOverride = { provider: 'node-7f3a', model: 'llama/3.3-70b', price: { input: 0.59, output: 0.79 } };
      const media: PriceOverride = { provider: 'openai', model: 'dall-e-3', price: { input: 0, output: 0, perImage: { 'hd/1024x1792': 0.12, '*/*': 0.04 }, minAudioSeconds: 5 } };
      for (const o of [tokens, bare, media]) await repo.upsert(o, '2026-11-29T12:00:00.000Z');
      expect(byKey(await repo.loadAll())).toEqual(byKey([tokens, bare, media]));
    });

    it('an upsert replaces the whole price; remove says whether there was one', async () => {
      const { repo } = await open();
      await repo.upsert({ provider: 'anthropic', model: 'claude-sonnet-4-5', price: { input: 3, output: 15, cacheRead: 0.3, perSearchUnit: 1 } }, '2026-11-29T12:00:00.000Z');
      const next: PriceOverride = { provider: 'anthropic', model: 'claude-sonnet-4-5', price: { input: 4, output: 16 } };
      await repo.upsert(next, '2026-11-29T12:01:00.000Z');
      expect(await repo.loadAll()).toEqual([next]);
      expect(await repo.remove('anthropic', 'claude-sonnet-4-5')).toBe(true);
      expect(await repo.remove('anthropic', 'claude-sonnet-4-5')).toBe(false);
      expect(await repo.loadAll()).toEqual([]);
    });

    it("a price set on one node prices the other node's replies once its notice arrives; a reset there restores the default", async () => {
      const { repo, second } = await open();
      const { feed, delivered } = sharedFeed();
      const one = await PricingStore.create(repo, undefined, feed());
      const two = await PricingStore.create(await second(), undefined, feed());
      const builtin = DEFAULT_PRICES.openai!['gpt-4o']!;
      // Resolved (and memoized) before the change: the reload must drop the memo.
      expect(two.cost('openai', 'gpt-4o-2024-08-06', MILLION)).toMatchObject({ costUsd: builtin.input + builtin.output, priceVersion: 'router@2026-11' });
      const mine: Price = { input: 1, output: 2 };
      await one.set('openai', 'gpt-4o', mine);
      await one.set('custom-node', 'local-model', { input: 0.5, output: 0.5 });
      await delivered();
      expect(two.cost('openai', 'gpt-4o-2024-08-06', MILLION)).toEqual({ costUsd: 3, costSource: 'computed', priceVersion: 'override' });
      expect(two.entry('openai', 'gpt-4o')).toMatchObject({ input: 1, output: 2, source: 'override' });
      expect(two.lookup('custom-node', 'local-model')).toEqual({ input: 0.5, output: 0.5 });

      // The other node resets it (storage decides: it holds the row), and the first follows.
      expect(await two.reset('openai', 'gpt-4o')).toBe(true);
      await delivered();
      expect(one.lookup('openai', 'gpt-4o')).toEqual(builtin);
      expect(one.entry('openai', 'gpt-4o')).toMatchObject({ source: 'default' });
      expect(await one.reset('openai', 'gpt-4o')).toBe(false);
      expect(one.lookup('custom-node', 'local-model')).toEqual({ input: 0.5, output: 0.5 });
    });

    it('a reset removes a price another node stored before its notice arrived', async () => {
      const { repo, second } = await open();
      const one = await PricingStore.create(repo);
      const two = await PricingStore.create(await second());
      await one.set('openai', 'o3', { input: 9, output: 9 });
      expect(two.override('openai', 'o3')).toBeUndefined();
      expect(await two.reset('openai', 'o3')).toBe(true);
      expect(await repo.loadAll()).toEqual([]);
    });

    it('the snapshot stays unchanged and nothing is published when a write fails', async () => {
      const { repo } = await open();
      await repo.upsert({ provider: 'openai', model: 'gpt-4o', price: { input: 1, output: 1 } }, '2026-11-29T12:00:00.000Z');
      const failing: PricingRepository = {
        loadAll: () => repo.loadAll(),
        upsert: () => Promise.reject(new Error('database down')),
        remove: () => Promise.reject(new Error('database down')),
      };
      const published: string[] = [];
      const store = await PricingStore.create(failing, undefined, { publish: (t) => published.push(t), subscribe: () => () => {} });
      await expect(store.set('openai', 'gpt-4o', { input: 5, output: 5 })).rejects.toThrow('database down');
      await expect(store.set('openai', 'o3', { input: 5, output: 5 })).rejects.toThrow('database down');
      await expect(store.reset('openai', 'gpt-4o')).rejects.toThrow('database down');
      expect(store.lookup('openai', 'gpt-4o')).toEqual({ input: 1, output: 1 });
      expect(store.lookup('openai', 'o3')).toEqual(DEFAULT_PRICES.openai!.o3);
      expect(published).toEqual([]);
    });
  });
}
