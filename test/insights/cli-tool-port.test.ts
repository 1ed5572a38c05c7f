/**
 * The CLI-tool change log's storage port on both adapters (migrated temp SQLite, real PostgreSQL 15):
 * round trip, newest-first pages by cursor and tool, pruning to the newest N, two nodes writing one log.
 */
import { describe, expect, it } from 'vitest';
import { CliToolLog } from '../../src/daemon/insights/cli-tool-log.js';
import { SqlCliToolLogRepository } from '../../src/daemon/insights/cli-tool-sql.js';
import type { CliToolChangeInput } from '../../src/shared/observability.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

const change = (tool: string, over: Partial<CliToolChangeInput> = {}): CliToolChangeInput => ({
  tool,
  action: 'apply',
  files: [{ path: '/home/u/.codex/config.toml', action: 'modified' }],
  ...over,
});

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('CliToolLogRepository', adapter), () => {
    const open = async () => {
      const storage = await adapter.open();
      return { repo: new SqlCliToolLogRepository(storage.driver), connect: () => storage.connect() };
    };

    it('records a change field for field with its time and an ascending id', async () => {
      const { repo } = await open();
      const at = Date.parse('2026-05-06T07:08:09.123Z');
      const full = change('claude-code', { backup: '/home/u/.router/backups/x ünï', keyId: 'k1', model: 'openai/gpt-4o', baseUrl: 'http://127.0.0.1:20128/v1' });
      const a = await repo.record(at, full, 100);
      const b = await repo.record(at + 1, change('codex', { action: 'undo' }), 100);
      expect(a).toEqual({ ...full, id: a.id, at: '2026-05-06T07:08:09.123Z' });
      expect(b).toMatchObject({ tool: 'codex', action: 'undo', backup: null, keyId: null, model: null, baseUrl: null });
      expect(b.id).toBeGreaterThan(a.id);
      expect(await repo.list({ limit: 10 })).toEqual([b, a]);
    });

    it('pages newest first by cursor and tool; keeps only the newest N', async () => {
      const { repo } = await open();
      const log = new CliToolLog(repo);
      for (let i = 0; i < 6; i++) await log.record(change(i % 2 ? 'codex' : 'claude-code', { model: `m${i}` }));
      const first = await log.list({ limit: 2 });
      expect(first.changes.map((c) => c.model)).toEqual(['m5', 'm4']);
      const second = await log.list({ limit: 2, before: Number(first.nextCursor) });
      expect(second.changes.map((c) => c.model)).toEqual(['m3', 'm2']);
      const codex = await log.list({ limit: 10, tool: 'codex' });
      expect(codex).toEqual({ changes: expect.any(Array), nextCursor: null });
      expect(codex.changes.map((c) => c.model)).toEqual(['m5', 'm3', 'm1']);
      await repo.record(Date.now(), change('codex', { model: 'm6' }), 3);
      expect((await repo.list({ limit: 10 })).map((c) => c.model)).toEqual(['m6', 'm5', 'm4']);
    });

    it('two nodes write one log and read the same', async () => {
      const { repo, connect } = await open();
      const one = new CliToolLog(repo);
      const two = new CliToolLog(new SqlCliToolLogRepository(await connect()));
      await one.record(change('codex', { model: 'from-one' }));
      await two.record(change('codex', { model: 'from-two' }));
      expect((await one.list({ limit: 10 })).changes.map((c) => c.model)).toEqual(['from-two', 'from-one']);
    });
  });
}
