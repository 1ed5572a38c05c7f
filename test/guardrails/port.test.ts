/**
 * The guardrails' storage port on both adapters (migrated temp SQLite, real PostgreSQL 15), and the service
 * over it: loads, upserts, key cascade, a second node following changes through the change feed, and a
 * snapshot that stays put when a write fails.
 */
import { describe, expect, it } from 'vitest';
import { guardrailConfigSchema } from '../../src/daemon/guardrails/config.js';
import type { GuardrailRepository } from '../../src/daemon/guardrails/port.js';
import { SqlGuardrailRepository } from '../../src/daemon/guardrails/sql-repository.js';
import { GuardrailService } from '../../src/daemon/guardrails/store.js';
import { SqlKeyRepository } from '../../src/daemon/keys/sql-repository.js';
import { insertKeyRow, linkedFeeds } from '../support/port-fixtures.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

const config = (over: Record<string, unknown>) => guardrailConfigSchema.parse(over);

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('GuardrailRepository', adapter), () => {
    const open = async () => {
      const storage = await adapter.open();
      return { driver: storage.driver, repo: new SqlGuardrailRepository(storage.driver), connect: () => storage.connect() };
    };

    it('starts empty; the global document and overrides are upserted and read back as stored', async () => {
      const { driver, repo } = await open();
      expect(await repo.load()).toEqual({ config: undefined, overrides: [] });
      const k1 = await insertKeyRow(driver);
      const k2 = await insertKeyRow(driver);
      await repo.saveConfig(config({ pii: { mode: 'redact' } }), '2026-01-01T00:00:00.000Z');
      await repo.saveConfig(config({ secrets: { mode: 'block', kinds: ['aws_access_key_id'] } }), '2026-01-02T00:00:00.000Z');
      await repo.saveOverride(k1, { pii: { mode: 'log' } }, '2026-01-01T00:00:00.000Z');
      await repo.saveOverride(k1, { blockedTerms: { terms: ['ünïcode ‘x’'] } }, '2026-01-02T00:00:00.000Z');
      await repo.saveOverride(k2, { maxInputSize: { maxChars: 10 } }, '2026-01-01T00:00:00.000Z');
      const loaded = await repo.load();
      expect(loaded.config).toEqual(config({ secrets: { mode: 'block', kinds: ['aws_access_key_id'] } }));
      expect(new Map(loaded.overrides.map((o) => [o.keyId, o.config]))).toEqual(
        new Map<string, unknown>([
          [k1, { blockedTerms: { terms: ['ünïcode ‘x’'] } }],
          [k2, { maxInputSize: { maxChars: 10 } }],
        ]),
      );
      await repo.deleteOverride(k2);
      await repo.deleteOverride(k2);
      await new SqlKeyRepository(driver).remove(k1);
      expect((await repo.load()).overrides).toEqual([]);
    });

    it('the service loads what is stored; a document that no longer validates falls back to the defaults', async () => {
      const { driver, repo } = await open();
      const key = await insertKeyRow(driver);
      await repo.saveConfig({ pii: { mode: 'no-such-mode' } }, '2026-01-01T00:00:00.000Z');
      await repo.saveOverride(key, { secrets: { mode: 'block' } }, '2026-01-01T00:00:00.000Z');
      const g = await GuardrailService.create(repo);
      expect(g.get()).toEqual(config({}));
      expect(g.effective(key).secrets.mode).toBe('block');
    });

    it('a second node follows the first through the change feed: global set and patch, override set and removal', async () => {
      const { driver, repo, connect } = await open();
      const key = await insertKeyRow(driver);
      const [feedA, feedB] = linkedFeeds(2);
      const one = await GuardrailService.create(repo, feedA);
      const two = await GuardrailService.create(new SqlGuardrailRepository(await connect()), feedB);
      await one.set(config({ pii: { mode: 'redact' } }));
      await expect.poll(() => two.get().pii.mode, { timeout: 2000 }).toBe('redact');
      await one.patch({ promptInjection: { mode: 'block' } });
      await expect.poll(() => two.policyFor().config.promptInjection.mode, { timeout: 2000 }).toBe('block');
      await one.setOverride(key, { pii: { mode: 'off' } });
      await expect.poll(() => two.effective(key).pii.mode, { timeout: 2000 }).toBe('off');
      expect(two.overridesList()).toEqual([{ keyId: key, override: { pii: { mode: 'off' } } }]);
      await one.deleteOverride(key);
      await expect.poll(() => two.effective(key).pii.mode, { timeout: 2000 }).toBe('redact');
      // Written on the second node, heard on the first.
      await two.set(config({}));
      await expect.poll(() => one.get().pii.mode, { timeout: 2000 }).toBe('off');
    });

    it('keeps its snapshot unchanged when a write fails', async () => {
      const { driver, repo } = await open();
      const key = await insertKeyRow(driver);
      const down = () => Promise.reject(new Error('database down'));
      const failing: GuardrailRepository = { load: () => repo.load(), saveConfig: down, saveOverride: down, deleteOverride: down };
      await repo.saveOverride(key, { pii: { mode: 'log' } }, '2026-01-01T00:00:00.000Z');
      const g = await GuardrailService.create(failing);
      await expect(g.set(config({ pii: { mode: 'block' } }))).rejects.toThrow('database down');
      await expect(g.patch({ secrets: { mode: 'block' } })).rejects.toThrow('database down');
      expect(g.get()).toEqual(config({}));
      await expect(g.setOverride(key, { pii: { mode: 'block' } })).rejects.toThrow('database down');
      await expect(g.deleteOverride(key)).rejects.toThrow('database down');
      expect(g.override(key)).toEqual({ pii: { mode: 'log' } });
    });
  });
}
