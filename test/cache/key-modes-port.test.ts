import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CacheKeyModes } from '../../src/daemon/cache/key-modes.js';
import type { CacheKeyModeRepository, KeyCacheMode } from '../../src/daemon/cache/key-modes-port.js';
import { SqlCacheKeyModeRepository } from '../../src/daemon/cache/key-modes-sql.js';
import { SqlKeyRepository } from '../../src/daemon/keys/sql-repository.js';
import { insertKeyRow, sharedFeed } from '../support/port-fixtures.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

const sorted = (rows: KeyCacheMode[]) => [...rows].sort((a, b) => a.keyId.localeCompare(b.keyId));

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('CacheKeyModeRepository', adapter), () => {
    const open = async () => {
      const storage = await adapter.open();
      return { storage, repo: new SqlCacheKeyModeRepository(storage.driver), second: async () => new SqlCacheKeyModeRepository(await storage.connect()) };
    };

    it("stores a key's mode, replaces it, and loads every mode back", async () => {
      const { storage, repo } = await open();
      const a = await insertKeyRow(storage.driver);
      const b = await insertKeyRow(storage.driver);
      expect(await repo.set({ keyId: a, mode: 'always' }, '2026-11-29T12:00:00.000Z')).toBe('stored');
      expect(await repo.set({ keyId: b, mode: 'off' }, '2026-11-29T12:00:00.000Z')).toBe('stored');
      expect(await repo.set({ keyId: a, mode: 'request' }, '2026-11-29T12:01:00.000Z')).toBe('stored');
      expect(sorted(await repo.loadAll())).toEqual(sorted([{ keyId: a, mode: 'request' }, { keyId: b, mode: 'off' }]));
    });

    it('a key that is gone is missing-key (nothing stored); deleting a key deletes its mode', async () => {
      const { storage, repo } = await open();
      expect(await repo.set({ keyId: randomUUID(), mode: 'always' }, '2026-11-29T12:00:00.000Z')).toBe('missing-key');
      const a = await insertKeyRow(storage.driver);
      await repo.set({ keyId: a, mode: 'always' }, '2026-11-29T12:00:00.000Z');
      await new SqlKeyRepository(storage.driver).remove(a);
      expect(await repo.loadAll()).toEqual([]);
      const store = await CacheKeyModes.create(repo);
      expect(await store.set(a, 'off')).toBe(false);
      expect(store.get(a)).toBe('request');
    });

    it("a mode set on one node is what the other node's cache stage reads once its notice arrives", async () => {
      const { storage, repo, second } = await open();
      const a = await insertKeyRow(storage.driver);
      const b = await insertKeyRow(storage.driver);
      const { feed, delivered } = sharedFeed();
      const one = await CacheKeyModes.create(repo, feed());
      const two = await CacheKeyModes.create(await second(), feed());
      expect(two.get(a)).toBe('request');
      expect(await one.set(a, 'always')).toBe(true);
      expect(await one.set(b, 'off')).toBe(true);
      await delivered();
      expect(two.get(a)).toBe('always');
      expect(two.get(b)).toBe('off');
      expect(await two.set(a, 'request')).toBe(true);
      await delivered();
      expect(one.get(a)).toBe('request');
      expect(one.get(undefined)).toBe('request');
    });

    it('the snapshot stays unchanged and nothing is published when the write fails', async () => {
      const { storage, repo } = await open();
      const a = await insertKeyRow(storage.driver);
      await repo.set({ keyId: a, mode: 'off' }, '2026-11-29T12:00:00.000Z');
      const failing: CacheKeyModeRepository = { loadAll: () => repo.loadAll(), set: () => Promise.reject(new Error('database down')) };
      const published: string[] = [];
      const store = await CacheKeyModes.create(failing, { publish: (t) => published.push(t), subscribe: () => () => {} });
      await expect(store.set(a, 'always')).rejects.toThrow('database down');
      expect(store.get(a)).toBe('off');
      expect(published).toEqual([]);
    });
  });
}
