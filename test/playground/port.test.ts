/**
 * The playground presets' storage port on both adapters (migrated temp SQLite, real PostgreSQL 15): the same
 * checks against each, as test/keys/port.test.ts does for keys.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SqlKeyRepository } from '../../src/daemon/keys/sql-repository.js';
import { PresetStore } from '../../src/daemon/playground/presets.js';
import type { PresetRepository } from '../../src/daemon/playground/port.js';
import type { Preset } from '../../src/daemon/playground/schema.js';
import { SqlPresetRepository } from '../../src/daemon/playground/sql-repository.js';
import { insertKeyRow } from '../support/port-fixtures.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

function preset(over: Partial<Preset> = {}): Preset {
  return {
    id: randomUUID(),
    name: 'review',
    model: 'openai/gpt-4o',
    system: 'You review code.',
    messages: [
      { role: 'user', content: 'Look at this ‘diff’ — ünïcode' },
      { role: 'assistant', content: 'Fine.' },
    ],
    parameters: { temperature: 0.2, maxTokens: 300, stop: ['END'] },
    tags: ['code', 'review'],
    createdAt: '2026-01-02T03:04:05.678Z',
    updatedAt: '2026-01-02T03:04:05.678Z',
    ...over,
  };
}

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('PresetRepository', adapter), () => {
    const open = async () => {
      const storage = await adapter.open();
      return { driver: storage.driver, repo: new SqlPresetRepository(storage.driver) as PresetRepository, connect: () => storage.connect() };
    };

    it('stores a preset and reads it back field for field (JSON messages, parameters, tags)', async () => {
      const { driver, repo } = await open();
      const key = await insertKeyRow(driver);
      const a = preset();
      const b = preset({ system: '', messages: [], parameters: {}, tags: [] });
      await repo.insert(key, a);
      await repo.insert(null, b);
      expect(await repo.get(key, a.id)).toEqual(a);
      expect(await repo.get(null, b.id)).toEqual(b);
      expect(await repo.list(key)).toEqual([a]);
    });

    it("scopes every call to its owner: a key, another key and the dashboard (null) never see each other's", async () => {
      const { driver, repo } = await open();
      const k1 = await insertKeyRow(driver);
      const k2 = await insertKeyRow(driver);
      const mine = preset();
      const dash = preset();
      await repo.insert(k1, mine);
      await repo.insert(null, dash);
      expect(await repo.get(k2, mine.id)).toBeUndefined();
      expect(await repo.get(null, mine.id)).toBeUndefined();
      expect(await repo.get(k1, dash.id)).toBeUndefined();
      expect((await repo.list(null)).map((p) => p.id)).toEqual([dash.id]);
      expect(await repo.list(k2)).toEqual([]);
      expect(await repo.replace(k2, mine.id, { ...preset(), name: 'stolen' }, '2026-02-01T00:00:00.000Z')).toBe(false);
      expect(await repo.replace(null, mine.id, { ...preset(), name: 'stolen' }, '2026-02-01T00:00:00.000Z')).toBe(false);
      expect(await repo.remove(k2, mine.id)).toBe(false);
      expect(await repo.remove(null, mine.id)).toBe(false);
      expect((await repo.get(k1, mine.id))?.name).toBe('review');
    });

    it('lists newest first; presets created in the same millisecond keep their creation order', async () => {
      const { repo } = await open();
      const ids: string[] = [];
      for (let i = 0; i < 5; i++) {
        const p = preset({ name: `p${i}`, createdAt: i < 3 ? '2026-01-01T00:00:00.000Z' : `2026-01-0${i}T00:00:00.000Z` });
        await repo.insert(null, p);
        ids.push(p.id);
      }
      expect((await repo.list(null)).map((p) => p.id)).toEqual([ids[4], ids[3], ids[2], ids[1], ids[0]]);
    });

    it('replaces every field but id and createdAt; removes once; a deleted key takes its presets along', async () => {
      const { driver, repo } = await open();
      const key = await insertKeyRow(driver);
      const a = preset();
      await repo.insert(key, a);
      const body = { name: 'renamed', model: 'anthropic/claude', system: 's', messages: [], parameters: { topP: 0.5 }, tags: ['x'] };
      expect(await repo.replace(key, a.id, body, '2026-03-01T00:00:00.000Z')).toBe(true);
      expect(await repo.get(key, a.id)).toEqual({ ...body, id: a.id, createdAt: a.createdAt, updatedAt: '2026-03-01T00:00:00.000Z' });
      expect(await repo.remove(key, a.id)).toBe(true);
      expect(await repo.remove(key, a.id)).toBe(false);
      const b = preset();
      await repo.insert(key, b);
      await new SqlKeyRepository(driver).remove(key);
      expect(await repo.get(key, b.id)).toBeUndefined();
    });

    it('a preset saved through one node is read, changed and deleted through another (no per-node copy)', async () => {
      const { repo, connect } = await open();
      const one = new PresetStore(repo);
      const two = new PresetStore(new SqlPresetRepository(await connect()));
      const created = await one.create(null, { name: 'shared', model: 'openai/gpt-4o', system: '', messages: [], parameters: {}, tags: [] });
      expect(await two.get(null, created.id)).toEqual(created);
      const changed = await two.replace(null, created.id, { name: 'changed', model: 'm', system: '', messages: [], parameters: {}, tags: [] });
      expect((await one.get(null, created.id))?.name).toBe('changed');
      expect(changed?.createdAt).toBe(created.createdAt);
      expect(await two.remove(null, created.id)).toBe(true);
      expect(await one.list(null)).toEqual([]);
    });
  });
}
