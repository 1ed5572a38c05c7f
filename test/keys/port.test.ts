import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { KeyRepository } from '../../src/daemon/keys/port.js';
import { SqlKeyRepository } from '../../src/daemon/keys/sql-repository.js';
import { KeyStore, type KeyRecord } from '../../src/daemon/keys/store.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

function record(over: Partial<KeyRecord> = {}): KeyRecord {
  const id = randomUUID();
  return {
    id,
    name: `key-${id.slice(0, 4)}`,
    maskedKey: 'rk_abcd...wxyz',
    scopes: ['proxy', 'model:openai/*'],
    isActive: true,
    createdAt: '2026-01-02T03:04:05.678Z',
    lastUsedAt: null,
    dailyRequestLimit: null,
    tokenLimits: [{ scope: 'provider:openai', period: 'month', limit: 5000 }],
    budget: null,
    keyHash: Buffer.from(randomUUID().replaceAll('-', '').repeat(2), 'hex'),
    ...over,
  };
}

const byId = (rows: KeyRecord[]) => new Map(rows.map((r) => [r.id, r]));

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('KeyRepository', adapter), () => {
    const open = async (): Promise<{ repo: KeyRepository; second: () => Promise<KeyRepository> }> => {
      const storage = await adapter.open();
      return { repo: new SqlKeyRepository(storage.driver), second: async () => new SqlKeyRepository(await storage.connect()) };
    };

    it('stores a key and loads it back field for field (hash bytes, scopes, limits, flags)', async () => {
      const { repo } = await open();
      const a = record();
      const b = record({ isActive: false, dailyRequestLimit: 0, tokenLimits: [], scopes: ['manage'] });
      await repo.insert(a);
      await repo.insert(b);
      const loaded = byId(await repo.loadAll());
      expect(loaded.size).toBe(2);
      expect(loaded.get(a.id)).toEqual(a);
      expect(loaded.get(b.id)).toEqual(b);
    });

    it('refuses a second key with the same hash', async () => {
      const { repo } = await open();
      const a = record();
      await repo.insert(a);
      await expect(repo.insert(record({ keyHash: a.keyHash }))).rejects.toThrow();
      expect(await repo.loadAll()).toHaveLength(1);
    });

    it('updates name, scopes, active flag and limits together; an unknown id changes nothing', async () => {
      const { repo } = await open();
      const a = record();
      await repo.insert(a);
      const next = { ...a, name: 'renamed', scopes: ['proxy'], isActive: false, dailyRequestLimit: 7, tokenLimits: [{ scope: 'global' as const, period: 'day' as const, limit: 9 }] };
      expect(await repo.update(next, '2026-02-01T00:00:00.000Z')).toBe(true);
      expect(await repo.update(record(), '2026-02-01T00:00:00.000Z')).toBe(false);
      expect(await repo.loadAll()).toEqual([next]);
    });

    it('removes a key once', async () => {
      const { repo } = await open();
      const a = record();
      await repo.insert(a);
      expect(await repo.remove(a.id)).toBe(true);
      expect(await repo.remove(a.id)).toBe(false);
      expect(await repo.loadAll()).toEqual([]);
    });

    it('records last uses in bulk; an older use (another node) never moves the time back; unknown ids are ignored', async () => {
      const { repo } = await open();
      const a = record();
      const b = record();
      await repo.insert(a);
      await repo.insert(b);
      // More uses than one statement carries, to cross the chunk boundary.
      const noise = Array.from({ length: 600 }, () => ({ id: randomUUID(), lastUsedAt: '2026-03-01T00:00:00.000Z' }));
      await repo.touchMany([...noise, { id: a.id, lastUsedAt: '2026-03-02T10:00:00.000Z' }, { id: b.id, lastUsedAt: '2026-03-02T09:00:00.000Z' }]);
      await repo.touchMany([{ id: a.id, lastUsedAt: '2026-03-02T08:00:00.000Z' }, { id: b.id, lastUsedAt: '2026-03-02T11:00:00.000Z' }]);
      const loaded = byId(await repo.loadAll());
      expect(loaded.get(a.id)?.lastUsedAt).toBe('2026-03-02T10:00:00.000Z');
      expect(loaded.get(b.id)?.lastUsedAt).toBe('2026-03-02T11:00:00.000Z');
      await repo.touchMany([]);
    });

    it('a second node sees a key created, revoked and deleted on the first after reload()', async () => {
      const { repo, second } = await open();
      const one = new KeyStore(repo, await repo.loadAll());
      const otherRepo = await second();
      const two = new KeyStore(otherRepo, await otherRepo.loadAll());
      const created = await one.create('shared', ['proxy']);
      expect(two.verify(created.key)).toBeUndefined();
      await two.reload();
      expect(two.verify(created.key)?.isActive).toBe(true);
      await one.update(created.id, { isActive: false });
      await two.reload();
      expect(two.verify(created.key)?.isActive).toBe(false);
      await one.remove(created.id);
      await two.reload();
      expect(two.verify(created.key)).toBeUndefined();
      expect(two.get(created.id)).toBeUndefined();
    });

    it('the store keeps its snapshot unchanged when a write fails, and retries unsaved last uses', async () => {
      const { repo } = await open();
      let down = true;
      const failing: KeyRepository = {
        loadAll: () => repo.loadAll(),
        insert: () => Promise.reject(new Error('database down')),
        update: () => Promise.reject(new Error('database down')),
        remove: () => Promise.reject(new Error('database down')),
        touchMany: (uses) => (down ? Promise.reject(new Error('database down')) : repo.touchMany(uses)),
      };
      const good = new KeyStore(repo, []);
      const created = await good.create('k');
      const store = new KeyStore(failing, await repo.loadAll());
      await expect(store.create('lost')).rejects.toThrow('database down');
      expect(store.list().map((k) => k.name)).toEqual(['k']);
      await expect(store.update(created.id, { name: 'x' })).rejects.toThrow('database down');
      expect(store.get(created.id)?.name).toBe('k');
      await expect(store.remove(created.id)).rejects.toThrow('database down');
      expect(store.get(created.id)).toBeDefined();
      const rec = store.verify(created.key);
      if (!rec) throw new Error('key not found');
      store.touch(rec);
      await expect(store.flush()).rejects.toThrow('database down');
      // Back up: the use noted before the failure is written by the next flush.
      down = false;
      await store.flush();
      expect((await repo.loadAll())[0]?.lastUsedAt).not.toBeNull();
    });
  });
}
