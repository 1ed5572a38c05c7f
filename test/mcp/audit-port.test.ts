/**
 * The MCP audit log's storage port on both adapters (migrated temp SQLite, real PostgreSQL 15): rows round
 * trip; newest-first pages by cursor, tool, caller and outcome; per-tool stats per bucket; pruning; two nodes
 * write one log that a listing on either covers; calls are batched (no statement per call) and stored by a
 * listing, at close, and after storage comes back.
 */
import { describe, expect, it } from 'vitest';
import type { AuthInfo } from '../../src/daemon/auth/pipeline.js';
import { McpAudit } from '../../src/daemon/mcp/audit.js';
import type { AuditRow, McpAuditRepository } from '../../src/daemon/mcp/audit-port.js';
import { SqlMcpAuditRepository } from '../../src/daemon/mcp/audit-sql.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

const T0 = Date.parse('2026-05-06T07:08:00.000Z');

const row = (tool: string, over: Partial<AuditRow> = {}): AuditRow => ({
  ts: T0,
  caller: 'key:k1',
  keyId: 'k1',
  transport: 'stream',
  sessionId: 's-1',
  tool,
  argBytes: 17,
  argSha256: 'a'.repeat(64),
  durationMs: 40,
  ok: true,
  error: null,
  ...over,
});

const cliAuth = { via: 'cli-token', loopback: true } as unknown as AuthInfo;

/** Counts the port's inserts (how many statements the calls cost). */
function counting(repo: McpAuditRepository) {
  const calls = { inserts: 0, fail: false };
  const wrapped: McpAuditRepository = {
    insertMany: async (rows) => {
      calls.inserts += 1;
      if (calls.fail) throw new Error('database unavailable');
      return repo.insertMany(rows);
    },
    list: (q) => repo.list(q),
    stats: (b, f, t) => repo.stats(b, f, t),
    prune: (b) => repo.prune(b),
  };
  return { wrapped, calls };
}

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('McpAuditRepository', adapter), () => {
    const open = async () => {
      const storage = await adapter.open();
      return { repo: new SqlMcpAuditRepository(storage.driver), connect: async () => new SqlMcpAuditRepository(await storage.connect()) };
    };

    it('round trips rows field for field; pages newest first by cursor; filters by tool, caller and outcome', async () => {
      const { repo } = await open();
      const failed = row('chat', { ok: false, error: 'Unknown model ünï', keyId: null, caller: 'cli', sessionId: null, transport: 'assistant' });
      await repo.insertMany([row('list_models'), failed, row('chat', { ts: T0 + 1 }), row('usage_summary', { ts: T0 + 2 })]);
      const all = await repo.list({ limit: 10 });
      expect(all.map((r) => r.tool)).toEqual(['usage_summary', 'chat', 'chat', 'list_models']);
      expect(all[2]).toEqual({ ...failed, id: all[2]!.id });
      expect(all[0]!.id).toBeGreaterThan(all[1]!.id);
      const page = await repo.list({ limit: 2 });
      expect(page).toHaveLength(3); // one more than asked: a next page exists
      const next = await repo.list({ limit: 2, before: page[1]!.id });
      expect(next.map((r) => r.tool)).toEqual(['chat', 'list_models']);
      expect((await repo.list({ limit: 10, tool: 'chat', ok: false })).map((r) => r.error)).toEqual(['Unknown model ünï']);
      expect((await repo.list({ limit: 10, caller: 'cli' })).map((r) => r.transport)).toEqual(['assistant']);
      expect(await repo.list({ limit: 10, ok: true, tool: 'nope' })).toEqual([]);
    });

    it('stats per tool and bucket over a range; pruning drops older rows', async () => {
      const { repo } = await open();
      const min = 60_000;
      await repo.insertMany([
        row('chat', { durationMs: 10 }),
        row('chat', { ts: T0 + 30_000, durationMs: 30, ok: false, error: 'x' }),
        row('chat', { ts: T0 + min + 5, durationMs: 7 }),
        row('b_tool', { ts: T0 + 10 }),
        row('chat', { ts: T0 - 86_400_000 * 40 }),
      ]);
      const points = await repo.stats(min, T0, T0 + 2 * min);
      expect(points).toEqual([
        { bucket: T0, tool: 'b_tool', calls: 1, errors: 0, avgMs: 40 },
        { bucket: T0, tool: 'chat', calls: 2, errors: 1, avgMs: 20 },
        { bucket: T0 + min, tool: 'chat', calls: 1, errors: 0, avgMs: 7 },
      ]);
      const day = await repo.stats(86_400_000, T0 - 86_400_000 * 50, T0 + 2 * min);
      expect(day.map((p) => [new Date(p.bucket).toISOString(), p.tool, p.calls])).toEqual([
        ['2026-03-27T00:00:00.000Z', 'chat', 1],
        ['2026-05-06T00:00:00.000Z', 'b_tool', 1],
        ['2026-05-06T00:00:00.000Z', 'chat', 3],
      ]);
      expect(await repo.prune(T0 - 86_400_000)).toBe(1);
      expect(await repo.list({ limit: 10 })).toHaveLength(4);
    });

    it('two nodes write one log; a listing on either covers both, each stored within a batch', async () => {
      const { repo, connect } = await open();
      const a = new McpAudit(repo);
      const b = new McpAudit(await connect());
      a.record({ ts: T0, auth: cliAuth, transport: 'stream', tool: 'chat', args: '{"model":"x"}', durationMs: 5.4 });
      b.record({ ts: T0 + 1, auth: cliAuth, transport: 'sse', sessionId: 'sb', tool: 'list_models', args: '{}', durationMs: 1, error: 'boom' });
      // B's call reaches storage with its batch (within 200 ms) without anyone asking B.
      const deadline = Date.now() + 3000;
      let seen: string[] = [];
      while (Date.now() < deadline) {
        seen = (await a.list({ limit: 10 })).entries.map((e) => e.tool);
        if (seen.length === 2) break;
        await new Promise((r) => setTimeout(r, 25));
      }
      expect(seen).toEqual(['list_models', 'chat']);
      const fromB = await b.list({ limit: 10 });
      expect(fromB.entries[1]).toMatchObject({ caller: 'cli', keyId: null, transport: 'stream', tool: 'chat', argBytes: 13, durationMs: 5, ok: true, error: null, time: new Date(T0).toISOString() });
      expect(fromB.entries[1]!.argSha256).toMatch(/^[0-9a-f]{64}$/);
      expect(fromB.entries[0]).toMatchObject({ transport: 'sse', sessionId: 'sb', ok: false, error: 'boom' });
      const stats = await b.stats({ bucket: 'minute', from: T0 - 60_000, to: T0 + 60_000 });
      expect(stats.tools).toEqual([
        { tool: 'chat', calls: 1, errors: 0 },
        { tool: 'list_models', calls: 1, errors: 1 },
      ]);
    });

    it('calls are batched: many calls, one statement; kept while storage fails and stored once it is back; close stores the rest', async () => {
      const { repo } = await open();
      const { wrapped, calls } = counting(repo);
      const audit = new McpAudit(wrapped);
      for (let i = 0; i < 50; i++) {
        audit.record({ ts: T0 + i, auth: cliAuth, transport: 'stream', tool: 'chat', args: '{}', durationMs: 1 });
        await new Promise((r) => setImmediate(r)); // calls one after another, as they come
      }
      expect(calls.inserts).toBe(0); // no statement per call: the batch waits for its timer
      expect((await audit.list({ limit: 100 })).entries).toHaveLength(50);
      expect(calls.inserts).toBe(1);
      calls.fail = true;
      audit.record({ ts: T0 + 100, auth: cliAuth, transport: 'stream', tool: 'while-down', args: '{}', durationMs: 1 });
      await audit.flush();
      calls.fail = false;
      audit.record({ ts: T0 + 101, auth: cliAuth, transport: 'stream', tool: 'after', args: '{}', durationMs: 1 });
      await audit.close();
      expect((await repo.list({ limit: 2 })).slice(0, 2).map((r) => r.tool)).toEqual(['after', 'while-down']);
    });
  });
}
