import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { loadStaticModel, type StaticModel } from '../../src/daemon/memory/embedding/static.js';
import { loadTransformersModel } from '../../src/daemon/memory/embedding/transformers.js';
import { startApp, writeStaticModel, type TestApp } from './helpers.js';

let t: TestApp;
let mock: MockUpstream;
let modelDir: string;
let topicModel: StaticModel;

/** The mock's embeddings endpoint answering with the topic model's vectors (a meaningful remote model). */
function topicEmbeddings(counter?: { calls: number; inputs: string[] }) {
  return mock.handle((req) => {
    if (req.endpoint !== 'openai.embeddings') return undefined;
    return {
      type: 'custom',
      fn: (r, res) => {
        const input: string[] = Array.isArray(r.json.input) ? r.json.input : [r.json.input];
        if (counter) {
          counter.calls++;
          counter.inputs.push(...input);
        }
        const data = input.map((s, index) => ({ object: 'embedding', index, embedding: Array.from(topicModel.embedOne(s)) }));
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ object: 'list', data, model: r.json.model, usage: { prompt_tokens: 1, total_tokens: 1 } }));
      },
    };
  });
}

beforeAll(async () => {
  mock = await startMockUpstream();
  modelDir = mkdtempSync(join(tmpdir(), 'router-static-src-'));
  writeStaticModel(modelDir);
  topicModel = loadStaticModel(modelDir);
  t = await startApp();
  const c = await t.request('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-memory-test-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
  expect(c.status).toBe(201);
  // A rerank provider (OpenAI has none): Jina's /v1/rerank on the mock.
  const j = await t.request('POST', '/api/providers', { provider: 'jina', apiKey: 'jina-memory-test-0123456789', providerSpecificData: { baseUrl: mock.jinaBase } });
  expect(j.status).toBe(201);
});
afterEach(() => mock.reset());
afterAll(async () => {
  t.close();
  await mock.close();
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

describe('transformers source', () => {
  it('reports available:false when @huggingface/transformers is not installed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-onnx-'));
    try {
      await expect(loadTransformersModel(dir)).rejects.toThrow('@huggingface/transformers is not installed');
      await t.request('PUT', '/api/memory/settings', { embeddingOrder: ['transformers'], transformersModelPath: dir });
      const s = await status();
      expect(s.embedding).toMatchObject({ source: null, available: false, model: null, dimensions: null });
      expect(s.embedding.reason).toBe('transformers: @huggingface/transformers is not installed');
      expect(s.vectorStore.backend).toBe('none');
      const p = await preview({ query: 'anything', strategy: 'semantic' });
      expect(p.resolution).toMatchObject({ strategyUsed: 'exact', embeddingSource: null, vectorStore: 'none' });
      expect(p.resolution.fallbackReason).toContain('@huggingface/transformers is not installed');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('is used, lazily and from the local folder only, when the package is present', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'router-onnx-'));
    writeFileSync(join(dir, 'config.json'), JSON.stringify({ hidden_size: 16 }));
    const seen: Array<{ task: string; model: string; options: unknown; env: unknown }> = [];
    const env = { allowRemoteModels: true, allowLocalModels: false, localModelPath: '' };
    const fake = {
      env,
      pipeline: async (task: string, model: string, options: unknown) => {
        seen.push({ task, model, options, env: { ...env } });
        return async (texts: string[]) => {
          const vecs = texts.map((s) => Array.from(topicModel.embedOne(s)));
          return { data: Float32Array.from(vecs.flat()), dims: [texts.length, 16] };
        };
      },
    };
    try {
      let imported = 0;
      t.services.memory.setTransformersImporter(async (spec) => {
        imported++;
        expect(spec).toBe('@huggingface/transformers');
        return fake;
      });
      await t.request('PUT', '/api/memory/settings', { embeddingOrder: ['transformers'], transformersModelPath: join(dir, '.') });
      const s = await status();
      expect(s.embedding).toMatchObject({ source: 'transformers', available: true, dimensions: 16 });
      expect(imported).toBe(1);
      expect(seen[0]).toMatchObject({ task: 'feature-extraction', options: { local_files_only: true }, env: { allowRemoteModels: false, allowLocalModels: true } });
      const m = await t.request('POST', '/api/memory', { key: 'pet', content: 'Has a golden retriever.' });
      const p = await preview({ query: 'puppy', strategy: 'semantic' });
      expect(p.resolution).toMatchObject({ embeddingSource: 'transformers', strategyUsed: 'semantic' });
      expect(p.memories[0].id).toBe(m.json.id);
      await t.request('DELETE', `/api/memory/${m.json.id}`);
    } finally {
      t.services.memory.setTransformersImporter(undefined);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('remote source (router proxy path to a provider embeddings endpoint)', () => {
  it('embeds through the configured provider connection, caches, and reports the figures', async () => {
    const counter = { calls: 0, inputs: [] as string[] };
    topicEmbeddings(counter);
    const put = await t.request('PUT', '/api/memory/settings', { embeddingOrder: ['remote', 'static'], remoteModel: 'openai/text-embedding-3-small', staticModelPath: modelDir });
    expect(put.status).toBe(200);
    let s = await status();
    expect(s.embedding).toMatchObject({ source: 'remote', model: 'openai/text-embedding-3-small', dimensions: 16, available: true });
    const probe = mock.requests.find((r) => r.endpoint === 'openai.embeddings')!;
    expect(probe.headers.authorization).toBe('Bearer sk-memory-test-0123456789');
    expect(probe.json.model).toBe('text-embedding-3-small');
    const dog = await t.request('POST', '/api/memory', { key: 'dog', content: 'The user has a golden retriever called Max.', apiKeyId: 'remote-scope' });
    await t.request('POST', '/api/memory', { key: 'money', content: 'Tracks every expense in a spreadsheet.', apiKeyId: 'remote-scope' });
    expect(counter.inputs).toContain('dog: The user has a golden retriever called Max.');
    const misses0 = s.embedding.cacheStats.misses;
    const p = await preview({ query: 'Which animal lives here?', apiKeyId: 'remote-scope', strategy: 'semantic' });
    expect(p.resolution).toEqual({ embeddingSource: 'remote', embeddingModel: 'openai/text-embedding-3-small', vectorStore: 'embedded-vec', strategyUsed: 'semantic', rerankApplied: false, fallbackReason: null });
    expect(p.memories[0].id).toBe(dog.json.id);
    const calls = counter.calls;
    await preview({ query: 'Which animal lives here?', apiKeyId: 'remote-scope', strategy: 'semantic' });
    expect(counter.calls).toBe(calls); // served from the LRU
    s = await status();
    expect(s.embedding.cacheStats.hits).toBeGreaterThanOrEqual(1);
    expect(s.embedding.cacheStats.misses).toBeGreaterThan(misses0);
    expect(s.embedding.cacheStats.size).toBeGreaterThanOrEqual(3);
    const list = await t.request('GET', '/api/memory?apiKeyId=remote-scope');
    expect(list.json.stats.cacheStats).toEqual({ hits: s.embedding.cacheStats.hits, misses: s.embedding.cacheStats.misses });
    // Listed in embedding-providers with the probed width.
    const prov = (await t.request('GET', '/api/memory/embedding-providers')).json.providers.find((x: any) => x.provider === 'openai');
    expect(prov.hasKey).toBe(true);
    expect(prov.models).toContainEqual({ id: 'openai/text-embedding-3-small', name: 'text-embedding-3-small', dimensions: 16 });
  });

  it('a failing remote model at query time falls back to keyword search and says why', async () => {
    mock.handle((req) => (req.endpoint === 'openai.embeddings' ? { type: 'status', status: 500, message: 'embedding backend exploded' } : undefined));
    const p = await preview({ query: 'golden retriever brand new phrasing', apiKeyId: 'remote-scope', strategy: 'hybrid' });
    expect(p.resolution.strategyUsed).toBe('exact');
    expect(p.resolution.embeddingSource).toBeNull();
    expect(p.resolution.fallbackReason).toMatch(/query embedding failed.*500/);
    expect(p.memories.length).toBeGreaterThan(0);
    // A create while the remote is down still succeeds; the row waits for the reindex.
    const c = await t.request('POST', '/api/memory', { key: 'pending', content: 'embedded later', apiKeyId: 'remote-scope' });
    expect(c.status).toBe(201);
    expect((await status()).vectorStore.needsReindex).toBeGreaterThanOrEqual(1);
    mock.reset();
    topicEmbeddings();
    expect((await t.request('POST', '/api/memory/reindex', {})).json).toMatchObject({ pending: 0, error: null });
  });

  it('selection order: an unusable first source falls through to the next, with the reason kept', async () => {
    await t.request('PUT', '/api/memory/settings', { remoteModel: 'nosuchprovider/model-x' });
    const s = await status();
    expect(s.embedding).toMatchObject({ source: 'static', model: 'topic-static', available: true });
    await t.request('PUT', '/api/memory/settings', { embeddingOrder: ['remote'] });
    const r = await status();
    expect(r.embedding.available).toBe(false);
    expect(r.embedding.reason).toMatch(/^remote: Unknown model 'nosuchprovider\/model-x'/);
    await t.request('PUT', '/api/memory/settings', { embeddingOrder: [] });
    const none = await status();
    expect(none.embedding).toMatchObject({ source: null, available: false, reason: 'keyword only: embeddingOrder is empty' });
    const p = await preview({ query: 'retriever', strategy: 'hybrid', apiKeyId: 'remote-scope' });
    expect(p.resolution).toMatchObject({ strategyUsed: 'exact', vectorStore: 'none', fallbackReason: expect.stringContaining('no embedding source available') });
  });
});

describe('rerank', () => {
  it('reorders candidates through the rerank provider (/v1/rerank shape) and reports it', async () => {
    await t.request('PUT', '/api/memory/settings', { embeddingOrder: ['static'], staticModelPath: modelDir, rerankModel: 'jina/rerank-test' });
    const a = await t.request('POST', '/api/memory', { key: 'tennis', content: 'Plays tennis on Saturdays.', apiKeyId: 'rr' });
    const b = await t.request('POST', '/api/memory', { key: 'tennis club', content: 'Member of a tennis club; tennis twice a week.', apiKeyId: 'rr' });
    let body: any;
    mock.handle((req) => {
      if (req.path !== '/v1/rerank') return undefined;
      body = req.json;
      return {
        type: 'custom',
        fn: (_r, res) => {
          res.writeHead(200, { 'content-type': 'application/json' });
          // Prefer the document that mentions Saturdays.
          const results = (body.documents as string[]).map((d, index) => ({ index, relevance_score: d.includes('Saturdays') ? 0.99 : 0.1 }));
          res.end(JSON.stringify({ results }));
        },
      };
    });
    const p = await preview({ query: 'tennis', apiKeyId: 'rr', strategy: 'exact' });
    expect(body).toMatchObject({ model: 'rerank-test', query: 'tennis', top_n: 2 });
    expect(p.resolution.rerankApplied).toBe(true);
    expect(p.memories.map((m: any) => m.id)).toEqual([a.json.id, b.json.id]);
    expect(p.memories[0].score).toBeCloseTo(0.99);
    const s = await status();
    expect(s.rerank).toEqual({ enabled: true, provider: 'jina', model: 'rerank-test', available: true, reason: 'ready' });

    mock.reset();
    mock.handle((req) => (req.path === '/v1/rerank' ? { type: 'status', status: 503 } : undefined));
    const f = await preview({ query: 'tennis', apiKeyId: 'rr', strategy: 'exact' });
    expect(f.resolution.rerankApplied).toBe(false);
    expect(f.resolution.fallbackReason).toMatch(/rerank failed/);
    expect(f.memories).toHaveLength(2);
    const s2 = await status();
    expect(s2.rerank).toMatchObject({ enabled: true, available: false, reason: expect.stringContaining('last rerank call failed') });
    await t.request('PUT', '/api/memory/settings', { rerankModel: null });
    expect((await status()).rerank).toMatchObject({ enabled: false, provider: null, model: null, available: false });
  });
});
