/**
 * The evals storage port on both adapters (migrated temp SQLite, real PostgreSQL 15): definitions, runs and
 * results round trip; newest-first lists; a name taken once; delete takes runs and results along; a run
 * started on one node is seen (running, then with its results) on another; a node starting marks only its
 * own unfinished runs interrupted.
 */
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SqlEvalRepository } from '../../src/daemon/evals/sql-repository.js';
import { EvalStore } from '../../src/daemon/evals/store.js';
import type { EvalBody } from '../../src/daemon/evals/schema.js';
import type { EvalCaseResult } from '../../src/shared/observability.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

const body = (name: string): EvalBody => ({
  name,
  description: 'checks ünïcode',
  models: ['openai/gpt-4o-mini', 'fast'],
  cases: [
    { name: 'json', prompt: 'six times seven?', checks: [{ type: 'json-valid' }, { type: 'contains', value: '42' }] },
    { prompt: 'capital?', checks: [{ type: 'regex', value: '\\bparis\\b', flags: 'i' }] },
  ],
  maxTokens: 256,
  concurrency: 2,
});

const result = (model: string, caseIndex: number, over: Partial<EvalCaseResult> = {}): EvalCaseResult => ({
  model,
  caseIndex,
  passed: true,
  checks: [{ type: 'contains', passed: true }],
  output: 'It is 42.',
  error: null,
  latencyMs: 12.34,
  tokensIn: 1000,
  tokensOut: 200,
  costUsd: 0.00123,
  provider: 'OpenAI',
  traceId: randomUUID(),
  ...over,
});

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('EvalRepository', adapter), () => {
    const open = async () => {
      const storage = await adapter.open();
      const repo = new SqlEvalRepository(storage.driver);
      return { repo, store: await EvalStore.create(repo, 'node-a'), connect: async () => new SqlEvalRepository(await storage.connect()) };
    };

    it('round trips a definition; newest first; a taken name is refused; by id or name', async () => {
      const { store } = await open();
      const a = await store.add(body('basics'));
      const b = await store.add(body('second'));
      expect(a).toBeDefined();
      expect(await store.add(body('basics'))).toBeUndefined();
      const got = await store.get('basics');
      expect(got).toEqual(a);
      expect(got?.cases[0]?.checks[1]).toEqual({ type: 'contains', value: '42' });
      expect(await store.get(a!.id)).toEqual(a);
      expect((await store.list()).map((e) => e.name)).toEqual(['second', 'basics']);
      expect((await store.list())[0]).toEqual(b);
      expect(await store.get('nope')).toBeUndefined();
    });

    it('runs and results: scores per model, unpriced kept apart, newest run first, delete takes all along', async () => {
      const { repo, store } = await open();
      const ev = (await store.add(body('runs')))!;
      const first = await store.startRun(ev.id, ev.models);
      expect(first).toMatchObject({ status: 'running', finishedAt: null, models: ev.models });
      expect(await store.isRunning(ev.id)).toBe(true);
      await store.addResult(first.id, result('fast', 1, { passed: false, error: 'upstream 500', output: null, costUsd: null, latencyMs: 3 }));
      await store.addResult(first.id, result('openai/gpt-4o-mini', 1));
      await store.addResult(first.id, result('openai/gpt-4o-mini', 0, { latencyMs: 20 }));
      await store.finishRun(first.id);
      expect(await store.isRunning(ev.id)).toBe(false);
      const got = (await store.run(ev.id, first.id, true))!;
      expect(got.status).toBe('completed');
      expect(got.finishedAt).not.toBeNull();
      expect(got.results?.map((r) => [r.model, r.caseIndex])).toEqual([
        ['fast', 1],
        ['openai/gpt-4o-mini', 0],
        ['openai/gpt-4o-mini', 1],
      ]);
      expect(got.results?.[0]).toEqual(result('fast', 1, { passed: false, error: 'upstream 500', output: null, costUsd: null, latencyMs: 3, traceId: got.results?.[0]?.traceId }));
      expect(got.scores[0]).toMatchObject({ model: 'openai/gpt-4o-mini', cases: 2, passed: 2, score: 1, avgLatencyMs: 16.17, tokensIn: 2000, costUsd: 0.00246 });
      expect(got.scores[1]).toMatchObject({ model: 'fast', cases: 1, passed: 0, errors: 1, unpricedRequests: 1, costUsd: 0 });
      const second = await store.startRun(ev.id, ['fast']);
      expect((await store.runs(ev.id, 10)).map((r) => r.id)).toEqual([second.id, first.id]);
      expect((await store.runs(ev.id, 1)).map((r) => r.id)).toEqual([second.id]);
      const other = (await store.add(body('never-run')))!;
      const latest = await store.latestRuns([ev.id, other.id]);
      expect([...latest.keys()]).toEqual([ev.id]);
      expect(latest.get(ev.id)?.id).toBe(second.id);
      expect(await store.run(other.id, first.id, false)).toBeUndefined();
      expect(await store.delete(ev.id)).toBe(true);
      expect(await store.delete(ev.id)).toBe(false);
      expect(await repo.getRun(ev.id, first.id)).toBeUndefined();
      expect((await repo.results([first.id])).get(first.id)).toEqual([]);
    });

    it.skipIf(adapter.name === 'sqlite')('two cluster nodes: a run started on A is seen running on B, its results as A writes them; B starting leaves it alone', async () => {
      const { store: a, connect } = await open();
      const ev = (await a.add(body('shared')))!;
      const run = await a.startRun(ev.id, ev.models);
      await a.addResult(run.id, result('fast', 0));
      const repoB = await connect();
      const b = await EvalStore.create(repoB, 'node-b');
      expect(await b.isRunning(ev.id)).toBe(true);
      const seen = (await b.run(ev.id, run.id, true))!;
      expect(seen.status).toBe('running');
      expect(seen.results?.map((r) => r.model)).toEqual(['fast']);
      await a.addResult(run.id, result('fast', 1));
      await a.finishRun(run.id);
      const done = (await b.run(ev.id, run.id, true))!;
      expect(done.status).toBe('completed');
      expect(done.results).toHaveLength(2);
      expect((await b.list()).map((e) => e.name)).toEqual(['shared']);
    });

    it.skipIf(adapter.name === 'sqlite')("a cluster node starting marks its own unfinished runs interrupted, not another node's", async () => {
      const { repo, connect } = await open();
      const a = await EvalStore.create(repo, 'node-a');
      const ev = (await a.add(body('restart')))!;
      const mine = await a.startRun(ev.id, ['fast']);
      const repoB = await connect();
      const b = await EvalStore.create(repoB, 'node-b');
      const theirs = await b.startRun(ev.id, ['fast']);
      await EvalStore.create(repo, 'node-a'); // node A restarts
      expect((await repo.getRun(ev.id, mine.id))?.status).toBe('interrupted');
      expect((await repo.getRun(ev.id, mine.id))?.finishedAt).toEqual(expect.any(Number));
      expect(await repo.getRun(ev.id, theirs.id)).toMatchObject({ status: 'running', nodeId: 'node-b' });
    });

    it.skipIf(adapter.name === 'postgres')('one machine: a restart marks every unfinished run interrupted', async () => {
      const { repo } = await open();
      const a = await EvalStore.create(repo, 'node-a');
      const ev = (await a.add(body('restart')))!;
      const run = await a.startRun(ev.id, ['fast']);
      await EvalStore.create(repo, 'node-renamed');
      expect(await repo.getRun(ev.id, run.id)).toMatchObject({ status: 'interrupted', nodeId: null });
      expect(await a.isRunning(ev.id)).toBe(false);
    });
  });
}
