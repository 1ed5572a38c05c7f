import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { checkSealingKey, StartRefused } from '../../src/daemon/cluster/identity.js';
import type { SettingsRepository } from '../../src/daemon/settings/port.js';
import { SqlSettingsRepository } from '../../src/daemon/settings/sql-repository.js';
import '../../src/daemon/settings-sections.js';
import { SettingsStore, type Settings } from '../../src/daemon/settings/store.js';
import { encryptWithKey } from '../../src/daemon/store/secrets.js';
import { sharedFeed } from '../support/port-fixtures.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

const T1 = '2026-01-02T03:04:05.678Z';
const T2 = '2026-01-03T00:00:00.000Z';
const byKey = <T extends { key: string }>(rows: T[]) => new Map(rows.map((r) => [r.key, r]));

const keyDir = mkdtempSync(join(tmpdir(), 'router-settings-port-'));
afterAll(() => rmSync(keyDir, { recursive: true, force: true }));

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('SettingsRepository', adapter), () => {
    const open = async (): Promise<{ repo: SettingsRepository; second: () => Promise<SettingsRepository> }> => {
      const storage = await adapter.open();
      return { repo: new SqlSettingsRepository(storage.driver), second: async () => new SqlSettingsRepository(await storage.connect()) };
    };

    it('writes rows in one go, replaces them, and loads them back with their times', async () => {
      const { repo } = await open();
      await repo.putMany([{ key: 'a', value: '1' }, { key: 'b', value: '{"x":[1,2]}' }], T1);
      await repo.putMany([{ key: 'a', value: '"two"' }], T2);
      await repo.putMany([], T2);
      const rows = byKey(await repo.loadAll());
      expect(rows.size).toBe(2);
      expect(rows.get('a')).toEqual({ key: 'a', value: '"two"', updatedAt: T2 });
      expect(rows.get('b')).toEqual({ key: 'b', value: '{"x":[1,2]}', updatedAt: T1 });
      expect(await repo.get('b')).toBe('{"x":[1,2]}');
      expect(await repo.get('none')).toBeUndefined();
    });

    it('insertIfAbsent keeps the first row; remove removes once', async () => {
      const { repo } = await open();
      expect(await repo.insertIfAbsent('k', '"first"', T1)).toBe(true);
      expect(await repo.insertIfAbsent('k', '"second"', T2)).toBe(false);
      expect(await repo.get('k')).toBe('"first"');
      expect(await repo.remove('k')).toBe(true);
      expect(await repo.remove('k')).toBe(false);
      expect(await repo.loadAll()).toEqual([]);
    });

    it('the store writes secrets sealed, reads them back, and keeps rows it does not know', async () => {
      const { repo } = await open();
      const keyFile = join(keyDir, `${adapter.name}-secret.key`);
      const store = await SettingsStore.create(repo, { keyFile });
      await store.update({ telegramBotToken: '123:SecretBotToken', usageRetentionDays: 9 });
      await store.putExtraRow('obsidianWebdav', '{"enc":"sealed-elsewhere"}');
      const raw = byKey(await repo.loadAll());
      expect(raw.get('telegramBotToken')?.value).not.toContain('SecretBotToken');
      expect(JSON.parse(raw.get('usageRetentionDays')?.value ?? '')).toBe(9);
      const again = await SettingsStore.create(repo, { keyFile });
      expect(again.get().telegramBotToken).toBe('123:SecretBotToken');
      expect(again.get().usageRetentionDays).toBe(9);
      expect(again.extraRow('obsidianWebdav')).toBe('{"enc":"sealed-elsewhere"}');
      expect(again.updatedTimes().get('usageRetentionDays')).toBe(store.updatedTimes().get('usageRetentionDays'));
      expect(await again.removeExtraRow('obsidianWebdav')).toBe(true);
      expect(await repo.get('obsidianWebdav')).toBeUndefined();
    });

    it('a plain secret from an older version is sealed in place at load', async () => {
      const { repo } = await open();
      const keyFile = join(keyDir, `${adapter.name}-plain.key`);
      await SettingsStore.create(repo, { keyFile }); // creates the key file
      await repo.putMany([{ key: 'telegramBotToken', value: JSON.stringify('888:OlderPlainToken') }], T1);
      const store = await SettingsStore.create(repo, { keyFile });
      expect(store.get().telegramBotToken).toBe('888:OlderPlainToken');
      expect(await repo.get('telegramBotToken')).not.toContain('OlderPlainToken');
    });

    it("a second node's store follows writes of the first on reload, and its listeners hear exactly the changed settings", async () => {
      const { repo, second } = await open();
      const keyFile = join(keyDir, `${adapter.name}-nodes.key`);
      const { feed, delivered } = sharedFeed();
      const one = await SettingsStore.create(repo, { keyFile, changes: feed() });
      const two = await SettingsStore.create(await second(), { keyFile, changes: feed() });
      const heard: Array<{ changed: (keyof Settings)[]; retention: number }> = [];
      two.onChange((next, changed) => heard.push({ changed: [...changed].sort(), retention: next.usageRetentionDays }));
      const local: (keyof Settings)[][] = [];
      one.onChange((_next, changed) => local.push(changed));

      await one.update({ usageRetentionDays: 12, cloudSync: { ...one.get().cloudSync, secret: 'shared-sync-secret' } });
      expect(local).toEqual([['usageRetentionDays', 'cloudSync']]);
      await delivered();
      expect(two.get().usageRetentionDays).toBe(12);
      expect(two.get().cloudSync.secret).toBe('shared-sync-secret');
      expect(heard).toEqual([{ changed: ['cloudSync', 'usageRetentionDays'], retention: 12 }]);
      expect(two.updatedTimes().get('usageRetentionDays')).toBe(one.updatedTimes().get('usageRetentionDays'));

      // Writing a value equal to the current one: stored again, but nothing changed for the listeners.
      await one.update({ usageRetentionDays: 12 });
      await delivered();
      expect(heard).toHaveLength(1);

      await one.putExtraRow('obsidianWebdav', '{"enc":"x"}');
      await delivered();
      expect(two.extraRow('obsidianWebdav')).toBe('{"enc":"x"}');
      expect(heard).toHaveLength(1);
      // A reload by hand (no notice) reads the same.
      await two.reload();
      expect(two.get().usageRetentionDays).toBe(12);
    });

    it('the snapshot and the listeners stay unchanged when the write fails', async () => {
      const { repo } = await open();
      const failing: SettingsRepository = { ...repo, loadAll: () => repo.loadAll(), get: (k) => repo.get(k), putMany: () => Promise.reject(new Error('database down')), insertIfAbsent: () => Promise.reject(new Error('database down')), remove: () => Promise.reject(new Error('database down')) };
      const store = await SettingsStore.create(failing);
      const heard: unknown[] = [];
      store.onChange((_n, changed) => heard.push(changed));
      await expect(store.update({ usageRetentionDays: 5 })).rejects.toThrow('database down');
      expect(store.get().usageRetentionDays).toBe(30);
      await expect(store.putExtraRow('obsidianWebdav', '{}')).rejects.toThrow('database down');
      expect(store.extraRow('obsidianWebdav')).toBeUndefined();
      expect(heard).toEqual([]);
    });

    it('the sealing check: the first node seals it, a node with the same key starts, one with another key is refused', async () => {
      const storage = await adapter.open();
      const repo = new SqlSettingsRepository(storage.driver);
      const key = Buffer.alloc(32, 7);
      const none = async () => undefined;
      // A secret sealed before under another key: the first start with this key is refused (nothing written).
      const foreign = { enc: encryptWithKey('x', Buffer.alloc(32, 9), 'connection:c1'), context: 'connection:c1' };
      await expect(checkSealingKey(repo, async () => foreign, key)).rejects.toBeInstanceOf(StartRefused);
      expect(await repo.get('_sealingCheck')).toBeUndefined();
      await checkSealingKey(repo, async () => ({ enc: encryptWithKey('x', key, 'connection:c1'), context: 'connection:c1' }), key);
      const sealed = await repo.get('_sealingCheck');
      expect(sealed).toMatch(/"enc"/);
      const other = await storage.connect();
      await checkSealingKey(new SqlSettingsRepository(other), none, key);
      expect(await repo.get('_sealingCheck')).toBe(sealed);
      await expect(checkSealingKey(new SqlSettingsRepository(other), none, Buffer.alloc(32, 8))).rejects.toBeInstanceOf(StartRefused);
    });
  });
}
