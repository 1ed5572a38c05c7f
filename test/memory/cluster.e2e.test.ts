import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { clusterUnavailable, startCluster, type ClusterUnderTest } from '../support/cluster.js';
import { writeStaticModel } from './helpers.js';

const missing = clusterUnavailable();
let cluster: ClusterUnderTest;
const modelDir = mkdtempSync(join(tmpdir(), 'router-memory-cluster-model-'));

beforeAll(async () => {
  if (missing) return;
  writeStaticModel(modelDir);
  cluster = await startCluster({ nodes: 2 });
}, 120_000);
afterAll(async () => {
  await cluster?.stop();
  rmSync(modelDir, { recursive: true, force: true });
}, 60_000);

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, what: string, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(missing)(`memory shared by two daemons on one PostgreSQL${missing ? ` (skipped: ${missing})` : ''}`, () => {
  it('a memory written on one node is found on the other by keyword and by meaning; a delete is seen by both', async () => {
    const [a, b] = cluster.nodes;
    expect((await a!.manage('PUT', '/api/memory/settings', { staticModelPath: modelDir, embeddingOrder: ['static'] })).status).toBe(200);
    // The setting reaches B over the change feed; B selects the same model and keeps the shared vectors.
    await until(() => b!.manage('GET', '/api/memory/engine-status'), (r) => r.json.embedding?.model === 'topic-static', "the model on B");
    const created = await a!.manage('POST', '/api/memory', { key: 'dog', content: 'Has a golden retriever puppy called Biscuit.' });
    expect(created.status).toBe(201);
    const preview = (node: typeof a, query: string, strategy: string) => node!.manage('POST', '/api/memory/retrieve-preview', { query, strategy, limit: 5 });
    const exact = await preview(b, 'Biscuit', 'exact');
    expect(exact.json.memories.map((m: { id: string }) => m.id)).toEqual([created.json.id]);
    const semantic = await until(() => preview(b, 'my dog', 'semantic'), (r) => r.json.memories?.some((m: { id: string }) => m.id === created.json.id), 'the vector on B', 2000);
    expect(semantic.json.resolution).toMatchObject({ strategyUsed: 'semantic', vectorStore: 'embedded-vec' });
    expect((await b!.manage('GET', '/api/memory/engine-status')).json.keyword).toEqual({ available: true, backend: 'tsvector' });
    expect((await b!.manage('DELETE', `/api/memory/${created.json.id}`)).status).toBe(200);
    expect((await a!.manage('GET', `/api/memory/${created.json.id}`)).status).toBe(404);
    await until(() => a!.manage('GET', '/api/memory/engine-status'), (r) => r.json.vectorStore?.rowCount === 0, "A's index dropping the vector", 2000);
  });
});
