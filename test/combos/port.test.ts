import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ComboRepository } from '../../src/daemon/combos/port.js';
import { SqlComboRepository } from '../../src/daemon/combos/sql-repository.js';
import { ComboStore, type ComboChange, type ComboInput, type ComboRecord } from '../../src/daemon/combos/store.js';
import { sharedFeed } from '../support/port-fixtures.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

function record(over: Partial<ComboRecord> = {}): ComboRecord {
  return {
    id: randomUUID(),
    name: `combo-${randomUUID().slice(0, 6)}`,
    strategy: 'weighted',
    models: [{ model: 'openai/gpt-5', weight: 3 }, { model: 'anthropic/claude-sonnet-4-5' }],
    targetTimeoutMs: 5000,
    affinity: 'off',
    hedgeAfterMs: 1500,
    midStreamRecovery: 'continue',
    contextFit: true,
    createdAt: '2026-01-02T03:04:05.678Z',
    updatedAt: '2026-01-02T03:04:05.678Z',
    ...over,
  };
}

const input = (name: string, models: string[]): ComboInput => ({
  name,
  strategy: 'priority',
  models: models.map((model) => ({ model })),
  targetTimeoutMs: null,
  affinity: 'off',
  hedgeAfterMs: null,
  midStreamRecovery: null,
  contextFit: false,
});

const byId = (rows: ComboRecord[]) => new Map(rows.map((r) => [r.id, r]));

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('ComboRepository', adapter), () => {
    const open = async (): Promise<{ repo: ComboRepository; second: () => Promise<ComboRepository> }> => {
      const storage = await adapter.open();
      return { repo: new SqlComboRepository(storage.driver), second: async () => new SqlComboRepository(await storage.connect()) };
    };

    it('stores a combo and loads it back field for field (models JSON, flags, nullable numbers)', async () => {
      const { repo } = await open();
      const a = record();
      const b = record({ strategy: 'priority', models: [{ model: 'a' }], targetTimeoutMs: null, hedgeAfterMs: null, midStreamRecovery: null, contextFit: false, affinity: 'session' });
      expect(await repo.insert(a)).toBe('stored');
      expect(await repo.insert(b)).toBe('stored');
      const loaded = byId(await repo.loadAll());
      expect(loaded.get(a.id)).toEqual(a);
      expect(loaded.get(b.id)).toEqual(b);
    });

    it('names are unique: insert and update report name-taken and change nothing; an unknown id is missing', async () => {
      const { repo } = await open();
      const a = record({ name: 'a' });
      const b = record({ name: 'b' });
      await repo.insert(a);
      await repo.insert(b);
      expect(await repo.insert(record({ name: 'a' }))).toBe('name-taken');
      expect(await repo.update({ ...b, name: 'a' })).toBe('name-taken');
      expect(await repo.update(record())).toBe('missing');
      const next = { ...b, name: 'b2', strategy: 'random' as const, models: [{ model: 'x/y' }], updatedAt: '2026-02-01T00:00:00.000Z' };
      expect(await repo.update(next)).toBe('stored');
      expect(byId(await repo.loadAll())).toEqual(new Map([[a.id, a], [b.id, next]]));
      expect(await repo.remove(a.id)).toBe(true);
      expect(await repo.remove(a.id)).toBe(false);
      expect(await repo.loadAll()).toEqual([next]);
    });

    it("a second node's store follows creates, updates, renames and removes of the first; its listeners hear each", async () => {
      const { repo, second } = await open();
      const { feed, delivered } = sharedFeed();
      const one = await ComboStore.create(repo, undefined, feed());
      const two = await ComboStore.create(await second(), undefined, feed());
      const heard: Array<Pick<ComboChange, 'type'> & { name: string; previous?: string }> = [];
      two.onChange((c) => heard.push({ type: c.type, name: c.combo.name, ...(c.type === 'updated' ? { previous: c.previous.name } : {}) }));

      const a = await one.create(input('a', ['openai/gpt-5']));
      const b = await one.create(input('b', ['a']));
      await delivered();
      expect(two.byName('a')).toEqual(a);
      expect(two.list().map((c) => c.name)).toEqual(['a', 'b']);
      expect(Object.isFrozen(two.byName('a'))).toBe(true);

      await one.update(a.id, input('renamed', ['openai/gpt-4.1']));
      await one.remove(b.id);
      await delivered();
      expect(two.byName('a')).toBeUndefined();
      expect(two.byName('renamed')?.models).toEqual([{ model: 'openai/gpt-4.1' }]);
      expect(two.get(b.id)).toBeUndefined();
      expect(heard).toEqual([
        { type: 'created', name: 'a' },
        { type: 'created', name: 'b' },
        // One reload after both writes: the update and the removal.
        { type: 'updated', name: 'renamed', previous: 'a' },
        { type: 'removed', name: 'b' },
      ]);
      // Nothing changed: a reload tells nobody.
      await two.reload();
      expect(heard).toHaveLength(4);
    });

    it('the snapshot and listeners stay unchanged when a write fails', async () => {
      const { repo } = await open();
      const failing: ComboRepository = {
        loadAll: () => repo.loadAll(),
        insert: () => Promise.reject(new Error('database down')),
        update: () => Promise.reject(new Error('database down')),
        remove: () => Promise.reject(new Error('database down')),
      };
      const good = await ComboStore.create(repo);
      const a = await good.create(input('a', ['openai/gpt-5']));
      const store = await ComboStore.create(failing);
      const heard: ComboChange[] = [];
      store.onChange((c) => heard.push(c));
      await expect(store.create(input('b', ['x/y']))).rejects.toThrow('database down');
      await expect(store.update(a.id, input('a2', ['x/y']))).rejects.toThrow('database down');
      await expect(store.remove(a.id)).rejects.toThrow('database down');
      expect(store.list()).toEqual([a]);
      expect(heard).toEqual([]);
    });
  });
}
