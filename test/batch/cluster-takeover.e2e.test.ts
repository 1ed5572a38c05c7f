/**
 * CONTRACT "Cluster mode": a batch job whose node dies is resumed by another node without resending
 * finished lines. Three real daemons on one real PostgreSQL 15 (test/support/cluster.ts; batch leases of
 * 1.5 s through ROUTER_TEST_BATCH_LEASE_MS); the node running a batch is killed with SIGKILL mid-batch; another
 * node takes the batch over once the lease lapsed and finishes it; every line recorded before the kill
 * reached the upstream exactly once, and any node serves the result file.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { clusterUnavailable, startCluster, type ClusterUnderTest } from '../support/cluster.js';
import { chatLine, fileLines, jsonl, sdk, upload, userText, waitBatch } from './helpers.js';

const missing = clusterUnavailable();
let cluster: ClusterUnderTest;
let mock: MockUpstream;

beforeAll(async () => {
  if (missing) return;
  mock = await startMockUpstream();
  mock.handle((req) => (req.endpoint === 'openai.chat' ? { type: 'delay', ms: 40, then: { type: 'text', text: `done: ${userText(req.json)}` } } : undefined));
  cluster = await startCluster({ nodes: 1, env: { ROUTER_TEST_BATCH_LEASE_MS: '1500' } });
}, 120_000);

afterAll(async () => {
  await cluster?.stop();
  await mock?.close();
}, 60_000);

async function pgQuery<T>(sql: string, params: unknown[]): Promise<T[]> {
  const client = new pg.Client({ connectionString: cluster.databaseUrl });
  await client.connect();
  try {
    return (await client.query(sql, params)).rows as T[];
  } finally {
    await client.end();
  }
}

describe.skipIf(missing)(`a killed node's batch is finished by another node${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('resumes on a live node after SIGKILL without re-sending the lines the dead node recorded', async () => {
    const a = cluster.nodes[0]!;
    expect((await a.manage('PATCH', '/api/settings', { batchConcurrency: 4 })).status).toBe(200);
    const key = (await a.manage('POST', '/api/keys', { name: 'batch', scopes: ['proxy'] })).json.key as string;
    // The other nodes start after the key exists, so they know it without the change feed.
    const b = await cluster.startNode();
    const c = await cluster.startNode();
    // Provider accounts are still each node's own (not yet on the shared database): each node gets one.
    for (const node of [a, b, c]) await node.addConnection({ provider: 'openai', apiKey: 'sk-upstream', providerSpecificData: { baseUrl: mock.openaiBase } });

    const lines = Array.from({ length: 150 }, (_, i) => chatLine(`line-${i}`, 'openai/gpt-4o-mini', `item ${i}`));
    const client = sdk(a, key);
    const file = await upload(client, jsonl(lines));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitBatch(client, batch.id, (x) => x.request_counts!.completed >= 40);
    await a.kill();

    const doneBefore = (await pgQuery<{ line: number }>('SELECT line FROM batch_lines WHERE batch_id = $1', [batch.id])).map((r) => r.line);
    expect(doneBefore.length).toBeGreaterThanOrEqual(40);
    expect(doneBefore.length).toBeLessThan(150);

    // Any live node sees the batch; one of them finishes it.
    const clientC = sdk(c, key);
    const done = await waitBatch(clientC, batch.id, undefined, 60_000);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 150, completed: 150, failed: 0 });

    const perLine = new Map<string, number>();
    for (const r of mock.requests) if (r.endpoint === 'openai.chat') perLine.set(userText(r.json)!, (perLine.get(userText(r.json)!) ?? 0) + 1);
    for (const line of doneBefore) expect(perLine.get(`item ${line}`), `line ${line}`).toBe(1);
    expect(perLine.size).toBe(150);
    expect([...perLine.values()].filter((n) => n > 1).length).toBeLessThanOrEqual(4);

    for (const reader of [sdk(b, key), clientC]) {
      const output = await fileLines(reader, done.output_file_id);
      expect(output.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
    }
  }, 150_000);
});
