import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockQdrant, type MockQdrant } from './mock-qdrant.js';
import { startApp, writeStaticModel, type TestApp } from './helpers.js';

let t: TestApp;
let q: MockQdrant;
let modelDir: string;
const COLLECTION = 'mem_test';

beforeAll(async () => {
  q = await startMockQdrant();
  modelDir = mkdtempSync(join(tmpdir(), 'router-static-ext-'));
  writeStaticModel(modelDir);
  t = await startApp();
  // Rows that exist before the external store is configured are pushed by the background sync.
  await t.request('PUT', '/api/memory/settings', { embeddingOrder: ['static'], staticModelPath: modelDir });
  await t.request('POST', '/api/memory', { key: 'dog', content: 'The user has a golden retriever called Max.' });
  await t.services.memory.idle();
});
afterAll(async () => {
  t.close();
  await q.close();
  rmSync(modelDir, { recursive: true, force: true });
});

async function status() {
  return (await t.request('GET', '/api/memory/engine-status')).json;
}
async function preview(body: Record<string, unknown>) {
  const r = await t.request('POST', '/api/memory/retrieve-preview', body);
  expect(r.status, JSON.stringify(r.json)).toBe(200);
  return r.json;
}

describe('external vector store (Qdrant REST API, mock server)', () => {
  it('configuring it creates the collection and syncs existing vectors', async () => {
    const put = await t.request('PUT', '/api/memory/settings', { qdrantUrl: q.url, qdrantCollection: COLLECTION, qdrantApiKey: 'qdrant-secret' });
    expect(put.status).toBe(200);
    expect(put.json.qdrantApiKey).toBe('qdra...');
    await t.services.memory.idle();
    const col = q.collections.get(COLLECTION)!;
    expect(col).toMatchObject({ size: 16, distance: 'Cosine' });
    expect(col.points.size).toBe(1);
    expect(q.requests.every((r) => r.headers['api-key'] === 'qdrant-secret')).toBe(true);
    const s = await status();
    expect(s.externalVector).toEqual({ enabled: true, healthy: true, latencyMs: expect.any(Number), error: null });
    expect(s.vectorStore).toMatchObject({ backend: 'external-vec', available: true });
  });

  it('writes go to both stores; retrieval searches the external one (tier external-vec) within the scope', async () => {
    const cat = await t.request('POST', '/api/memory', { key: 'budgie', content: 'Their daughters keep a budgie named Kiwi.' });
    const other = await t.request('POST', '/api/memory', { key: 'parrot', content: 'Owns a parrot.', apiKeyId: 'another-key' });
    const col = q.collections.get(COLLECTION)!;
    expect(col.points.get(cat.json.id)!.payload).toMatchObject({ scope: '' });
    expect(col.points.get(other.json.id)!.payload).toMatchObject({ scope: 'another-key' });
    const p = await preview({ query: 'pets animal', strategy: 'semantic' });
    expect(p.resolution).toEqual({ embeddingSource: 'static', embeddingModel: 'topic-static', vectorStore: 'external-vec', strategyUsed: 'semantic', rerankApplied: false, fallbackReason: null });
    expect(p.memories.map((m: any) => m.tier)).toEqual(['external-vec', 'external-vec']);
    expect(p.memories.map((m: any) => m.id)).not.toContain(other.json.id);
    const search = q.requests.filter((r) => r.path.endsWith('/points/search')).at(-1)!;
    expect(search.body.filter).toEqual({ must: [{ key: 'scope', match: { any: [''] } }] });
    const h = await preview({ query: 'budgie Kiwi', strategy: 'hybrid' });
    expect(h.memories[0]).toMatchObject({ id: cat.json.id, tier: 'hybrid-rrf' });
  });

  it('PUT re-upserts the point; DELETE removes it (and the row and the embedded vector)', async () => {
    const m = await t.request('POST', '/api/memory', { key: 'wine', content: 'Enjoys red wine.' });
    const before = q.collections.get(COLLECTION)!.points.get(m.json.id)!.vector;
    await t.request('PUT', `/api/memory/${m.json.id}`, { content: 'Plays tennis on Saturdays.' });
    const after = q.collections.get(COLLECTION)!.points.get(m.json.id)!.vector;
    expect(after).not.toEqual(before);
    const d = await t.request('DELETE', `/api/memory/${m.json.id}`);
    expect(d.json).toEqual({ success: true });
    expect(q.collections.get(COLLECTION)!.points.has(m.json.id)).toBe(false);
  });

  it('outage: retrieval falls back to the embedded store, status says so; writes and deletes still succeed', async () => {
    await q.stop();
    try {
      const s = await status();
      expect(s.externalVector).toMatchObject({ enabled: true, healthy: false, latencyMs: null, error: expect.stringMatching(/unreachable/) });
      expect(s.vectorStore).toMatchObject({ backend: 'embedded-vec', available: true, reason: expect.stringContaining('external vector store unavailable') });
      const p = await preview({ query: 'pets animal', strategy: 'semantic' });
      expect(p.resolution.vectorStore).toBe('embedded-vec');
      expect(p.resolution.strategyUsed).toBe('semantic');
      expect(p.resolution.fallbackReason).toMatch(/external vector store unavailable/);
      expect(p.memories.length).toBe(2);
      expect(p.memories.every((m: any) => m.tier === 'vector')).toBe(true);
      const c = await t.request('POST', '/api/memory', { key: 'cat', content: 'Adopted a kitten.' });
      expect(c.status).toBe(201);
      const gone = await t.request('POST', '/api/memory', { key: 'temp', content: 'to delete during the outage' });
      const d = await t.request('DELETE', `/api/memory/${gone.json.id}`);
      expect(d.status).toBe(200);
      expect(d.json).toEqual({ success: true });
      // The new row is in the embedded store and waits for the external one.
      const row = t.services.db.prepare('SELECT embedding_sig, external_sig FROM memories WHERE id = ?').get(c.json.id) as any;
      expect(row).toEqual({ embedding_sig: 'static:topic-static:16', external_sig: null });
    } finally {
      await q.start();
    }
  });

  it('after the outage the sync catches up and the external store serves again', async () => {
    await t.request('POST', '/api/memory/reindex', {});
    const col = q.collections.get(COLLECTION)!;
    const live = (t.services.db.prepare('SELECT count(*) AS n FROM memories WHERE api_key_id IS NULL OR api_key_id != ?').get('__router_health__') as { n: number }).n;
    expect(col.points.size).toBe(live);
    // The recent failure is remembered for a short while; a status check probes again.
    const s = await status();
    expect(s.externalVector).toMatchObject({ healthy: true, error: null });
    const p = await preview({ query: 'kitten', strategy: 'semantic' });
    expect(p.resolution.vectorStore).toBe('external-vec');
    expect(p.resolution.fallbackReason).toBeNull();
  });

  it('a store answering 503 is reported unhealthy and bypassed', async () => {
    q.mode = 'error';
    try {
      const s = await status();
      expect(s.externalVector).toMatchObject({ healthy: false, error: expect.stringContaining('503') });
      const p = await preview({ query: 'pets', strategy: 'semantic' });
      expect(p.resolution.vectorStore).toBe('embedded-vec');
    } finally {
      q.mode = 'up';
    }
    await t.services.memory.status();
  });

  it('turning it off returns to the embedded store', async () => {
    await t.request('PUT', '/api/memory/settings', { qdrantUrl: null });
    const s = await status();
    expect(s.externalVector).toEqual({ enabled: false, healthy: null, latencyMs: null, error: null });
    expect(s.vectorStore.backend).toBe('embedded-vec');
    expect((await preview({ query: 'pets', strategy: 'semantic' })).resolution).toMatchObject({ vectorStore: 'embedded-vec', fallbackReason: null });
  });
});
