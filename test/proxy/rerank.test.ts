/**
 * POST /v1/rerank through the real daemon against mock upstreams that speak Cohere v2, Jina, Voyage and
 * Text Embeddings Inference exactly (test/mocks/formats/rerank.ts: strict fields, own error bodies): the
 * Jina and Cohere request shapes, same-format and translated; failover in a combo; a key scope refusal;
 * usage rows with their cost (search units, tokens); the body limit at its edge; the memory engine's rerank
 * through the same path.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { mockScore, mockTokens } from '../mocks/formats/rerank.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { eventually } from '../usage/helpers.js';

let mock: MockUpstream;
let router: RouterProcess;
let key: string;

const DOCS = ['Paris is the capital of France.', 'Berlin is the capital of Germany.', 'The capital of Spain is Madrid, not Paris.'];
const QUERY = 'capital of France';

async function rerank(body: unknown, apiKey = key): Promise<{ status: number; json: any; headers: Headers }> {
  const res = await fetch(`${router.url}/v1/rerank`, {
    method: 'POST',
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}

async function rowsOf(trace: string): Promise<any[]> {
  return eventually(async () => {
    const r = await router.manage('GET', '/api/logs?limit=500');
    const rows = (r.json.logs as any[]).filter((l) => l.traceId === trace);
    return rows.length ? rows : undefined;
  });
}

/** The order the mock's scoring gives. */
function expectedOrder(docs: string[]): number[] {
  return docs.map((d, i) => ({ i, s: mockScore(QUERY, d) })).sort((a, b) => b.s - a.s || a.i - b.i).map((x) => x.i);
}

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  key = await router.createKey();
  await router.addConnection({ provider: 'cohere', apiKey: 'co-up-key', providerSpecificData: { baseUrl: mock.cohereBase } });
  await router.addConnection({ provider: 'jina', apiKey: 'jina-up-key', providerSpecificData: { baseUrl: mock.jinaBase } });
  await router.addConnection({ provider: 'voyage', apiKey: 'pa-up-key', providerSpecificData: { baseUrl: mock.voyageBase } });
  await router.addConnection({ provider: 'openai', apiKey: 'sk-up-key', providerSpecificData: { baseUrl: mock.openaiBase } });
  await router.addConnection({ provider: 'together', apiKey: 'tg-up-key', providerSpecificData: { baseUrl: mock.openaiBase } });
  const tei = await router.manage('POST', '/api/provider-nodes', { name: 'TEI', prefix: 'tei', type: 'openai-compatible', baseUrl: mock.teiBase, rerankFormat: 'tei' });
  expect(tei.status, JSON.stringify(tei.json)).toBe(201);
  const vllm = await router.manage('POST', '/api/provider-nodes', { name: 'vLLM', prefix: 'vllm', type: 'openai-compatible', baseUrl: mock.openaiBase });
  expect(vllm.status).toBe(201);
  expect(vllm.json.rerankFormat).toBe('cohere');
});
afterEach(() => mock.reset());
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

describe('POST /v1/rerank', () => {
  it('Jina shape to Jina (same format): body passed on with the model rewritten, documents echoed as Jina does', async () => {
    const r = await rerank({ model: 'jina/jina-reranker-v2-base-multilingual', query: QUERY, documents: [DOCS[0], { text: DOCS[1] }, DOCS[2]], top_n: 2, truncation: true });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const sent = mock.requests[0]!;
    expect(sent.path).toBe('/v1/rerank');
    expect(sent.headers.authorization).toBe('Bearer jina-up-key');
    expect(sent.json).toEqual({ model: 'jina-reranker-v2-base-multilingual', query: QUERY, documents: [DOCS[0], { text: DOCS[1] }, DOCS[2]], top_n: 2, truncation: true });
    const order = expectedOrder(DOCS);
    expect(r.json.model).toBe('jina/jina-reranker-v2-base-multilingual');
    expect(r.json.results).toEqual(order.slice(0, 2).map((i) => ({ index: i, relevance_score: mockScore(QUERY, DOCS[i]!), document: { text: DOCS[i] } })));
    expect(r.json.usage).toEqual({ total_tokens: mockTokens(QUERY, DOCS) });
    const [row] = await rowsOf(r.headers.get('x-router-trace-id')!);
    expect(row).toMatchObject({ endpoint: '/v1/rerank', provider: 'jina', model: 'jina-reranker-v2-base-multilingual', status: 200, tokensIn: mockTokens(QUERY, DOCS), estimated: false });
  });

  it('Cohere shape (object documents, rank_fields, return_documents) translated to Cohere v2: strings only, search units priced', async () => {
    const docs = DOCS.map((text, i) => ({ title: `doc ${i}`, text }));
    const r = await rerank({ model: 'cohere/rerank-v3.5', query: QUERY, documents: docs, rank_fields: ['text'], top_n: 3, return_documents: true });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    const sent = mock.requests[0]!;
    // The mock refuses any field Cohere v2 does not know (return_documents, rank_fields): their absence is checked there.
    expect(sent.path).toBe('/v2/rerank');
    expect(sent.json).toEqual({ model: 'rerank-v3.5', query: QUERY, documents: DOCS.map((d) => `text: ${d}`), top_n: 3 });
    expect(r.json.results.map((x: any) => x.index)).toEqual(expectedOrder(DOCS));
    // Cohere v2 never echoes documents: router returns the client's own objects.
    expect(r.json.results[0].document).toEqual(docs[r.json.results[0].index]);
    expect(r.json.usage).toEqual({ search_units: 1 });
    const [row] = await rowsOf(r.headers.get('x-router-trace-id')!);
    expect(row).toMatchObject({ endpoint: '/v1/rerank', provider: 'cohere', model: 'rerank-v3.5', status: 200 });
    expect(row.costUsd).toBeCloseTo(0.002, 12);
  });

  it('to Voyage: top_n becomes top_k, its data list read back, tokens priced from the price table', async () => {
    const r = await rerank({ model: 'voyage/rerank-2.5', query: QUERY, documents: DOCS, top_n: 1, return_documents: false });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(mock.requests[0]!.path).toBe('/voyage/v1/rerank');
    expect(mock.requests[0]!.json).toEqual({ model: 'rerank-2.5', query: QUERY, documents: DOCS, top_k: 1 });
    expect(r.json.results).toEqual([{ index: 0, relevance_score: mockScore(QUERY, DOCS[0]!) }]);
    const [row] = await rowsOf(r.headers.get('x-router-trace-id')!);
    expect(row.tokensIn).toBe(mockTokens(QUERY, DOCS));
    expect(row.costUsd).toBeCloseTo((mockTokens(QUERY, DOCS) * 0.05) / 1e6, 12);
  });

  it('to a TEI node ({query, texts} -> [{index, score}]), to Together and to a vLLM node (Cohere/Jina shape)', async () => {
    const tei = await rerank({ model: 'tei/BAAI/bge-reranker-base', query: QUERY, documents: DOCS, top_n: 2, return_documents: true });
    expect(tei.status, JSON.stringify(tei.json)).toBe(200);
    expect(mock.requests[0]!.path).toBe('/tei/rerank');
    expect(mock.requests[0]!.json).toEqual({ query: QUERY, texts: DOCS, return_text: false, raw_scores: false });
    expect(tei.json.results).toEqual(expectedOrder(DOCS).slice(0, 2).map((i) => ({ index: i, relevance_score: mockScore(QUERY, DOCS[i]!), document: { text: DOCS[i] } })));
    const together = await rerank({ model: 'together/Salesforce/Llama-Rank-V1', query: QUERY, documents: DOCS, return_documents: false });
    expect(together.status).toBe(200);
    expect(mock.requests[1]!.headers.authorization).toBe('Bearer tg-up-key');
    expect(together.json.results).toHaveLength(3);
    expect(together.json.results[0]).not.toHaveProperty('document');
    const vllm = await rerank({ model: 'vllm/BAAI/bge-reranker-v2-m3', query: QUERY, documents: DOCS });
    expect(vllm.status).toBe(200);
    expect(mock.requests[2]!.json.model).toBe('BAAI/bge-reranker-v2-m3');
  });

  it('fails over in a combo: Cohere answers 503, Jina serves; both attempts have usage rows', async () => {
    const c = await router.manage('POST', '/api/combos', { name: 'rr-combo', models: ['cohere/rerank-v3.5', 'jina/jina-reranker-m0'] });
    expect(c.status, JSON.stringify(c.json)).toBe(201);
    mock.handle((req) => (req.endpoint === 'cohere.rerank' ? { type: 'status', status: 503 } : undefined));
    const r = await rerank({ model: 'rr-combo', query: QUERY, documents: DOCS });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(mock.requests.map((q) => q.endpoint)).toEqual(['cohere.rerank', 'jina.rerank']);
    expect(r.json.model).toBe('jina/jina-reranker-m0');
    const rows = await rowsOf(r.headers.get('x-router-trace-id')!);
    expect(rows.map((x) => [x.provider, x.status]).sort()).toEqual([['cohere', 503], ['jina', 200]]);
    expect(rows.every((x) => x.combo === 'rr-combo')).toBe(true);
  });

  it("relays an upstream's refusal as the standard error (Cohere 429 with its message and Retry-After)", async () => {
    mock.handle((req) => (req.endpoint === 'cohere.rerank' ? { type: 'status', status: 429, headers: { 'retry-after': '7' } } : undefined));
    const r = await rerank({ model: 'cohere/rerank-v3.5', query: QUERY, documents: DOCS });
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('7');
    expect(r.json.error.type).toBe('rate_limit_error');
    expect(r.json.error.message).toContain('Trial key');
    // Jina's FastAPI-style {detail} error reads as its message too.
    mock.handle((req) => (req.endpoint === 'jina.rerank' ? { type: 'status', status: 400, message: 'Model jina-x not found' } : undefined));
    const j = await rerank({ model: 'jina/jina-x', query: QUERY, documents: DOCS });
    expect(j.status).toBe(400);
    expect(j.json.error.message).toContain('Model jina-x not found');
  });

  it('refuses outside the key scope (403), bad input (400 naming the field), providers without rerank (400), and image documents for text-only dialects', async () => {
    const scoped = await router.createKey(['model:jina/*']);
    const refused = await rerank({ model: 'cohere/rerank-v3.5', query: QUERY, documents: DOCS }, scoped);
    expect(refused.status).toBe(403);
    expect(refused.json.error.type).toBe('permission_error');
    expect((await rerank({ model: 'jina/jina-reranker-m0', query: QUERY, documents: DOCS }, scoped)).status).toBe(200);
    const noQuery = await rerank({ model: 'jina/jina-reranker-m0', documents: DOCS });
    expect(noQuery.status).toBe(400);
    expect(noQuery.json.error.param).toBe('query');
    const badDocs = await rerank({ model: 'jina/jina-reranker-m0', query: QUERY, documents: [1, 2] });
    expect(badDocs.json.error.param).toBe('documents');
    const badTop = await rerank({ model: 'jina/jina-reranker-m0', query: QUERY, documents: DOCS, top_n: 0 });
    expect(badTop.json.error.param).toBe('top_n');
    const noRerank = await rerank({ model: 'openai/gpt-4o', query: QUERY, documents: DOCS });
    expect(noRerank.status).toBe(400);
    expect(noRerank.json.error.message).toContain('no rerank endpoint');
    const image = await rerank({ model: 'voyage/rerank-2.5', query: QUERY, documents: [{ image: 'https://example.com/a.png' }] });
    expect(image.status).toBe(400);
    expect(image.json.error.param).toBe('documents');
    expect(mock.requests.filter((q) => q.endpoint !== 'jina.rerank')).toHaveLength(0);
  });

  it('takes a body of exactly the limit and refuses one byte more with 413', async () => {
    const limit = 4096;
    expect((await router.manage('PATCH', '/api/settings', { maxRequestBodyBytes: limit })).status).toBe(200);
    try {
      const base = JSON.stringify({ model: 'jina/jina-reranker-m0', query: QUERY, documents: ['x'] });
      const pad = limit - Buffer.byteLength(base);
      const exact = JSON.stringify({ model: 'jina/jina-reranker-m0', query: QUERY, documents: [`x${'y'.repeat(pad)}`] });
      expect(Buffer.byteLength(exact)).toBe(limit);
      expect((await rerank(exact)).status).toBe(200);
      const over = await rerank(`${exact.slice(0, -1)} }`);
      expect(over.status).toBe(413);
      expect(over.json.error.code).toBe('payload_too_large');
    } finally {
      await router.manage('PATCH', '/api/settings', { maxRequestBodyBytes: 32 * 1024 * 1024 });
    }
  });
});

/**
 * Cohere's own clients unmodified. The request bodies are exactly what cohere-ai 8.1.0 serializes
 * (api/resources/v2/client/Client.js posts V2RerankRequest `{model, query, documents: string[], top_n,
 * max_tokens_per_doc, priority}` to `{base}/v2/rerank`; Client.js `rerank` posts RerankRequest `{model,
 * query, documents: (string | {text})[], top_n, rank_fields, return_documents, max_chunks_per_doc}` to
 * `{base}/v1/rerank`), and the replies are checked against the SDK's response schemas (V2RerankResponse:
 * `{id?, results: [{index, relevance_score}], meta?: {api_version?, billed_units?: {search_units?,
 * input_tokens?...}}}`; RerankResponse adds `document?: {text}` to a result).
 */
describe('Cohere clients', () => {
  // rerank-v4.0-pro: rerank-v3.5 may still be cooling down from the 429 test above.
  async function post(path: string, body: unknown): Promise<{ status: number; json: any; headers: Headers }> {
    const res = await fetch(`${router.url}${path}`, {
      method: 'POST',
      // The SDK's own headers: bearer token, its client name; JSON body.
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'x-fern-language': 'JavaScript', 'x-fern-sdk-name': 'cohere-ai' },
      body: JSON.stringify(body),
    });
    return { status: res.status, json: await res.json(), headers: res.headers };
  }

  it('POST /v2/rerank answers in Cohere v2 shape, to Cohere (same dialect) and to Jina (translated)', async () => {
    const body = { model: 'cohere/rerank-v4.0-pro', query: QUERY, documents: DOCS, top_n: 2, max_tokens_per_doc: 512, priority: 0 };
    const r = await post('/v2/rerank', body);
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(mock.requests[0]!.path).toBe('/v2/rerank');
    expect(mock.requests[0]!.json).toEqual({ model: 'rerank-v4.0-pro', query: QUERY, documents: DOCS, top_n: 2, max_tokens_per_doc: 512 });
    const order = expectedOrder(DOCS);
    expect(r.json).toEqual({
      id: expect.any(String),
      results: order.slice(0, 2).map((i) => ({ index: i, relevance_score: mockScore(QUERY, DOCS[i]!) })),
      meta: { api_version: { version: '2' }, billed_units: { search_units: 1 } },
    });
    const [row] = await rowsOf(r.headers.get('x-router-trace-id')!);
    expect(row).toMatchObject({ endpoint: '/v2/rerank', provider: 'cohere', status: 200 });
    expect(row.costUsd).toBeCloseTo(0.002, 12);
    // Jina echoes documents; a v2 reply carries none; its tokens are billed units.
    const jina = await post('/v2/rerank', { ...body, model: 'jina/jina-reranker-m0', max_tokens_per_doc: undefined, priority: undefined });
    expect(jina.status, JSON.stringify(jina.json)).toBe(200);
    expect(jina.json.results.every((x: any) => Object.keys(x).sort().join() === 'index,relevance_score')).toBe(true);
    expect(jina.json.meta).toEqual({ api_version: { version: '2' }, billed_units: { input_tokens: mockTokens(QUERY, DOCS) } });
    expect(jina.json).not.toHaveProperty('model');
  });

  it('POST /v2/rerank: bad input is a 400 naming the field; a key scope refusal is a 403', async () => {
    const bad = await post('/v2/rerank', { model: 'cohere/rerank-v4.0-pro', query: QUERY, documents: DOCS, top_n: -1 });
    expect(bad.status).toBe(400);
    expect(bad.json.error.param).toBe('top_n');
    const scoped = await router.createKey(['model:jina/*']);
    const res = await fetch(`${router.url}/v2/rerank`, {
      method: 'POST',
      headers: { authorization: `Bearer ${scoped}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'cohere/rerank-v4.0-pro', query: QUERY, documents: DOCS }),
    });
    expect(res.status).toBe(403);
    expect(mock.requests).toHaveLength(0);
  });

  it("POST /v1/rerank takes Cohere's v1 body (object documents, rank_fields, max_chunks_per_doc) and its reply carries v1 meta", async () => {
    const docs = DOCS.map((text) => ({ text }));
    const r = await post('/v1/rerank', { model: 'cohere/rerank-v4.0-pro', query: QUERY, documents: docs, top_n: 3, return_documents: true, max_chunks_per_doc: 10 });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    // Cohere v2 upstream: v1-only fields (max_chunks_per_doc, return_documents) are not sent.
    expect(mock.requests[0]!.json).toEqual({ model: 'rerank-v4.0-pro', query: QUERY, documents: DOCS, top_n: 3 });
    expect(r.json.results.map((x: any) => x.document)).toEqual(expectedOrder(DOCS).map((i) => ({ text: DOCS[i] })));
    expect(r.json.meta).toEqual({ api_version: { version: '1' }, billed_units: { search_units: 1 } });
  });
});

describe('memory rerank', () => {
  it('goes through the rerank path: the TEI node gets its own dialect and the call has a memory:rerank usage row', async () => {
    expect((await router.manage('PUT', '/api/memory/settings', { rerankModel: 'tei/bge-reranker' })).status).toBe(200);
    const a = await router.manage('POST', '/api/memory', { key: 'tennis', content: 'Plays tennis on Saturdays.', apiKeyId: 'rr' });
    const b = await router.manage('POST', '/api/memory', { key: 'tennis club', content: 'Member of a tennis club; tennis twice a week.', apiKeyId: 'rr' });
    expect(a.status).toBe(201);
    const p = await router.manage('POST', '/api/memory/retrieve-preview', { query: 'tennis Saturdays', apiKeyId: 'rr', strategy: 'exact' });
    expect(p.status, JSON.stringify(p.json)).toBe(200);
    expect(p.json.resolution.rerankApplied).toBe(true);
    const sent = mock.requests.find((q) => q.endpoint === 'tei.rerank');
    expect(sent?.json).toMatchObject({ query: 'tennis Saturdays', return_text: false });
    expect(sent?.json.texts).toHaveLength(2);
    expect(p.json.memories.map((m: any) => m.id)).toEqual([a.json.id, b.json.id]);
    const row = await eventually(async () => {
      const r = await router.manage('GET', '/api/logs?limit=500');
      return (r.json.logs as any[]).find((l) => l.endpoint === 'memory:rerank');
    });
    expect(row).toMatchObject({ provider: expect.any(String), model: 'bge-reranker', status: 200 });
    await router.manage('PUT', '/api/memory/settings', { rerankModel: null });
  });
});
