/**
 * The request hooks' storage port on both adapters (migrated temp SQLite, real PostgreSQL 15), and the
 * service over it: run order, unique names, a second node following through the change feed, a name taken
 * on another node meanwhile (409), and a snapshot that stays put when a write fails.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { hookInputSchema } from '../../src/daemon/hooks/config.js';
import type { HookRepository, StoredHook } from '../../src/daemon/hooks/port.js';
import { SqlHookRepository } from '../../src/daemon/hooks/sql-repository.js';
import { HookService } from '../../src/daemon/hooks/store.js';
import { linkedFeeds } from '../support/port-fixtures.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

function row(over: Partial<StoredHook> = {}): StoredHook {
  return {
    id: randomUUID(),
    name: `hook-${randomUUID().slice(0, 6)}`,
    position: 100,
    enabled: true,
    definition: { match: { model: 'openai/*' }, actions: [{ type: 'set_header', name: 'X-Team', value: 'ünïcode' }] },
    createdAt: '2026-01-01T00:00:00.000Z',
    updatedAt: '2026-01-01T00:00:00.000Z',
    ...over,
  };
}

const input = (name: string, over: Record<string, unknown> = {}) => hookInputSchema.parse({ name, actions: [{ type: 'tag', tag: name }], ...over });

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('HookRepository', adapter), () => {
    const open = async () => {
      const storage = await adapter.open();
      return { repo: new SqlHookRepository(storage.driver), connect: () => storage.connect() };
    };

    it('stores hooks and loads them field for field in run order: position, creation time, then insertion', async () => {
      const { repo } = await open();
      const late = row({ position: 10, createdAt: '2026-01-03T00:00:00.000Z' });
      const tieA = row({ position: 10, createdAt: '2026-01-02T00:00:00.000Z' });
      const tieB = row({ position: 10, createdAt: '2026-01-02T00:00:00.000Z', enabled: false });
      const first = row({ position: 1, createdAt: '2026-01-09T00:00:00.000Z' });
      for (const h of [late, tieA, tieB, first]) await repo.insert(h);
      expect(await repo.loadAll()).toEqual([first, tieA, tieB, late]);
      expect(await repo.count()).toBe(4);
    });

    it('refuses a second hook of the same name; updates and removes once', async () => {
      const { repo } = await open();
      const a = row();
      await repo.insert(a);
      await expect(repo.insert(row({ name: a.name }))).rejects.toThrow();
      const next = { ...a, name: 'renamed', position: 5, enabled: false, definition: { match: {}, actions: [] }, updatedAt: '2026-02-01T00:00:00.000Z' };
      expect(await repo.update(next)).toBe(true);
      expect(await repo.update(row())).toBe(false);
      expect(await repo.loadAll()).toEqual([next]);
      expect(await repo.remove(a.id)).toBe(true);
      expect(await repo.remove(a.id)).toBe(false);
      expect(await repo.count()).toBe(0);
    });

    it('a second node follows the first through the change feed (create, change, delete), in run order', async () => {
      const { repo, connect } = await open();
      const [feedA, feedB] = linkedFeeds(2);
      const one = await HookService.create(repo, feedA);
      const two = await HookService.create(new SqlHookRepository(await connect()), feedB);
      await one.create(input('second', { order: 20 }));
      await one.create(input('first', { order: 10 }));
      await expect.poll(() => two.compiled().map((h) => h.name), { timeout: 2000 }).toEqual(['first', 'second']);
      await one.patch('first', { enabled: false });
      await expect.poll(() => two.compiled().map((h) => h.name), { timeout: 2000 }).toEqual(['second']);
      await two.delete('second');
      await expect.poll(() => one.list().map((h) => h.name), { timeout: 2000 }).toEqual(['first']);
    });

    it('a name another node took meanwhile answers 409, as a name taken here does', async () => {
      const { repo, connect } = await open();
      // No feed between them: the second node has not heard of the first one's hook yet.
      const one = await HookService.create(repo);
      const two = await HookService.create(new SqlHookRepository(await connect()));
      await one.create(input('shared'));
      await expect(two.create(input('shared'))).rejects.toMatchObject({ status: 409 });
      expect(two.list().map((h) => h.name)).toEqual(['shared']);
      await expect(one.create(input('shared'))).rejects.toMatchObject({ status: 409 });
    });

    it('keeps its snapshot unchanged when a write fails', async () => {
      const { repo } = await open();
      const down = () => Promise.reject(new Error('database down'));
      const failing: HookRepository = { loadAll: () => repo.loadAll(), count: () => repo.count(), insert: down, update: down, remove: down };
      const good = await HookService.create(repo);
      await good.create(input('kept'));
      const hooks = await HookService.create(failing);
      await expect(hooks.create(input('lost'))).rejects.toThrow('database down');
      await expect(hooks.patch('kept', { order: 1 })).rejects.toThrow('database down');
      await expect(hooks.delete('kept')).rejects.toThrow('database down');
      expect(hooks.list().map((h) => [h.name, h.order])).toEqual([['kept', 100]]);
      expect(hooks.compiled().map((h) => h.name)).toEqual(['kept']);
    });
  });
}
