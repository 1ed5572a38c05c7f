import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SqlSyncNonceRepository } from '../../src/daemon/sync/nonces.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

const nonce = () => randomBytes(16).toString('hex');
const NOW = Date.parse('2026-11-29T12:00:00.000Z');

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('SyncNonceRepository', adapter), () => {
    it('a nonce is taken once: a second take is a replay; other nonces are free', async () => {
      const storage = await adapter.open();
      const repo = new SqlSyncNonceRepository(storage.driver);
      const n = nonce();
      expect(await repo.take(n, NOW + 301_000, NOW)).toBe(true);
      expect(await repo.take(n, NOW + 302_000, NOW + 1000)).toBe(false);
      expect(await repo.take(nonce(), NOW + 301_000, NOW)).toBe(true);
    });

    it('a nonce used on one node is refused on another (the shared table decides)', async () => {
      const storage = await adapter.open();
      const a = new SqlSyncNonceRepository(storage.driver);
      const b = new SqlSyncNonceRepository(await storage.connect());
      const n = nonce();
      expect(await a.take(n, NOW + 301_000, NOW)).toBe(true);
      expect(await b.take(n, NOW + 301_000, NOW)).toBe(false);
      const m = nonce();
      expect(await b.take(m, NOW + 301_000, NOW)).toBe(true);
      expect(await a.take(m, NOW + 301_000, NOW)).toBe(false);
    });

    it('copies of one request racing on two nodes: exactly one is admitted', async () => {
      const storage = await adapter.open();
      const nodes = [new SqlSyncNonceRepository(storage.driver), new SqlSyncNonceRepository(await storage.connect())];
      for (let round = 0; round < 5; round++) {
        const n = nonce();
        const taken = await Promise.all(Array.from({ length: 8 }, (_, i) => nodes[i % 2]!.take(n, NOW + 301_000, NOW)));
        expect(taken.filter(Boolean)).toHaveLength(1);
      }
    });

    it('expired nonces are dropped when another is taken (the table stays bounded)', async () => {
      const storage = await adapter.open();
      const repo = new SqlSyncNonceRepository(storage.driver);
      const old = nonce();
      await repo.take(old, NOW + 1000, NOW);
      await repo.take(nonce(), NOW + 400_000, NOW + 2000);
      const rows = await storage.driver.query<{ nonce: string }>('SELECT nonce FROM sync_nonces WHERE nonce = ?', [old]);
      expect(rows).toEqual([]);
    });
  });
}
