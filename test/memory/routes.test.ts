import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { loadMemorySettings } from '../../src/daemon/memory/settings.js';
import { startApp, type TestApp } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startApp();
});
afterAll(() => t.close());

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

async function create(body: Record<string, unknown>) {
  const r = await t.request('POST', '/api/memory', body);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json;
}

function expectError(r: { status: number; json: any }, status: number) {
  expect(r.status, JSON.stringify(r.json)).toBe(status);
  expect(r.json.error).toEqual({ message: expect.any(String), type: expect.any(String), code: expect.any(String), ...(r.json.error.param ? { param: r.json.error.param } : {}) });
}

describe('auth', () => {
  it('every memory route needs management authentication (401)', async () => {
    const { buildApp } = await import('../../src/daemon/boot.js');
    const app = buildApp(t.services);
    const paths: Array<[string, string]> = [
      ['GET', '/api/memory'],
      ['POST', '/api/memory'],
      ['GET', `/api/memory/${randomUUID()}`],
      ['PUT', `/api/memory/${randomUUID()}`],
      ['DELETE', `/api/memory/${randomUUID()}`],
      ['GET', '/api/memory/health'],
      ['POST', '/api/memory/retrieve-preview'],
      ['GET', '/api/memory/embedding-providers'],
      ['GET', '/api/memory/engine-status'],
      ['GET', '/api/memory/settings'],
      ['PUT', '/api/memory/settings'],
      ['POST', '/api/memory/reindex'],
      ['POST', '/api/memory/summarize'],
    ];
    for (const [method, path] of paths) {
      const res = await app.request(path, { method, headers: { 'content-type': 'application/json' }, body: method === 'GET' || method === 'DELETE' ? undefined : '{}' }, { remoteAddress: '127.0.0.1' } as never);
      expect(res.status, `${method} ${path}`).toBe(401);
      expect((await res.json()).error.type).toBeTypeOf('string');
    }
  });
});

describe('POST /api/memory', () => {
  it('creates with defaults: type factual, global pool, empty metadata, no expiry', async () => {
    const m = await create({ content: 'Likes green tea', key: 'tea' });
    expect(m).toMatchObject({ content: 'Likes green tea', key: 'tea', type: 'factual', sessionId: null, apiKeyId: null, metadata: {}, expiresAt: null });
    expect(m.id).toMatch(UUID_RE);
    expect(m.tokens).toBeGreaterThan(0);
    expect(Date.parse(m.createdAt)).not.toBeNaN();
    expect(m.updatedAt).toBe(m.createdAt);
  });

  it('keeps every create field', async () => {
    const m = await create({
      content: 'Standup at 10:30',
      key: 'standup',
      type: 'procedural',
      sessionId: 's-1',
      apiKeyId: 'key-a',
      metadata: { source: 'test', nested: { n: 1 } },
      expiresAt: '2999-01-01T00:00:00+02:00',
    });
    expect(m).toMatchObject({ type: 'procedural', sessionId: 's-1', apiKeyId: 'key-a', metadata: { source: 'test', nested: { n: 1 } }, expiresAt: '2998-12-31T22:00:00.000Z' });
  });

  it.each([
    ['content missing', { key: 'k' }],
    ['key missing', { content: 'c' }],
    ['content empty', { content: '', key: 'k' }],
    ['key empty', { content: 'c', key: '' }],
    ['type unknown', { content: 'c', key: 'k', type: 'other' }],
    ['metadata not an object', { content: 'c', key: 'k', metadata: [1] }],
    ['metadata a string', { content: 'c', key: 'k', metadata: 'x' }],
    ['expiresAt not a date-time', { content: 'c', key: 'k', expiresAt: 'tomorrow' }],
    ['expiresAt a date only', { content: 'c', key: 'k', expiresAt: '2030-01-01' }],
    ['sessionId a number', { content: 'c', key: 'k', sessionId: 5 }],
    ['content a number', { content: 5, key: 'k' }],
  ])('400 when %s', async (_name, body) => {
    expectError(await t.request('POST', '/api/memory', body), 400);
  });

  it('400 on a body that is not JSON', async () => {
    expectError(await t.request('POST', '/api/memory', '{nope'), 400);
  });

  it('accepts null sessionId and expiresAt, and the minimal lengths', async () => {
    const m = await create({ content: 'x', key: 'y', sessionId: null, expiresAt: null });
    expect(m).toMatchObject({ content: 'x', key: 'y', sessionId: null, expiresAt: null });
  });
});

describe('GET /api/memory/:id', () => {
  it('returns the entry; 404 for an unknown uuid, a non-uuid id, and an expired entry', async () => {
    const m = await create({ content: 'Owns a bike', key: 'bike' });
    const got = await t.request('GET', `/api/memory/${m.id}`);
    expect(got.status).toBe(200);
    expect(got.json).toEqual(m);
    expectError(await t.request('GET', `/api/memory/${randomUUID()}`), 404);
    expectError(await t.request('GET', '/api/memory/not-a-uuid'), 404);
    const expired = await create({ content: 'old', key: 'old', expiresAt: '2001-01-01T00:00:00Z' });
    expectError(await t.request('GET', `/api/memory/${expired.id}`), 404);
  });
});

describe('PUT /api/memory/:id', () => {
  it('updates type, key, content and metadata; tokens follow the text', async () => {
    const m = await create({ content: 'a', key: 'k', metadata: { a: 1 } });
    const r = await t.request('PUT', `/api/memory/${m.id}`, { type: 'semantic', key: 'k2', content: 'a much longer content than before', metadata: { b: 2 } });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ id: m.id, type: 'semantic', key: 'k2', content: 'a much longer content than before', metadata: { b: 2 } });
    expect(r.json.tokens).toBeGreaterThan(m.tokens);
    expect(r.json.createdAt).toBe(m.createdAt);
    const only = await t.request('PUT', `/api/memory/${m.id}`, { content: 'short' });
    expect(only.json).toMatchObject({ type: 'semantic', key: 'k2', content: 'short', metadata: { b: 2 } });
    const empty = await t.request('PUT', `/api/memory/${m.id}`, {});
    expect(empty.status).toBe(200);
    expect(empty.json.content).toBe('short');
  });

  it.each([
    ['an unknown property', { content: 'c', extra: 1 }],
    ['apiKeyId (not updatable)', { apiKeyId: 'k' }],
    ['sessionId (not updatable)', { sessionId: 's' }],
    ['expiresAt (not updatable)', { expiresAt: '2030-01-01T00:00:00Z' }],
    ['id', { id: randomUUID() }],
    ['key empty', { key: '' }],
    ['content empty', { content: '' }],
    ['type unknown', { type: 'nope' }],
    ['metadata an array', { metadata: [] }],
  ])('400 with %s', async (_n, body) => {
    const m = await create({ content: 'c', key: 'k' });
    expectError(await t.request('PUT', `/api/memory/${m.id}`, body), 400);
    expect((await t.request('GET', `/api/memory/${m.id}`)).json.content).toBe('c');
  });

  it('404 for unknown and non-uuid ids', async () => {
    expectError(await t.request('PUT', `/api/memory/${randomUUID()}`, { content: 'x' }), 404);
    expectError(await t.request('PUT', '/api/memory/123', { content: 'x' }), 404);
  });
});

describe('DELETE /api/memory/:id', () => {
  it('deletes (200 {success: true}), then 404; non-uuid 404', async () => {
    const m = await create({ content: 'temp', key: 'temp' });
    const r = await t.request('DELETE', `/api/memory/${m.id}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ success: true });
    expectError(await t.request('GET', `/api/memory/${m.id}`), 404);
    expectError(await t.request('DELETE', `/api/memory/${m.id}`), 404);
    expectError(await t.request('DELETE', '/api/memory/zzz'), 404);
    const fts = t.services.db.prepare("SELECT count(*) AS n FROM memories_fts WHERE memories_fts MATCH '\"temp\"'").get() as { n: number };
    expect(fts.n).toBe(0);
  });
});

describe('GET /api/memory (list)', () => {
  const scope = 'list-scope';
  beforeAll(async () => {
    for (let i = 0; i < 7; i++) {
      await create({ content: `note number ${i}${i % 2 ? ' about apples' : ''}`, key: `n${i}`, apiKeyId: scope, type: i < 3 ? 'episodic' : 'factual', sessionId: i < 2 ? 'sess' : null });
    }
    await create({ content: 'expired note', key: 'gone', apiKeyId: scope, expiresAt: '2000-01-01T00:00:00Z' });
  });

  it('shape, newest first, stats; expired entries never listed', async () => {
    const r = await t.request('GET', `/api/memory?apiKeyId=${scope}`);
    expect(r.status).toBe(200);
    expect(Object.keys(r.json).sort()).toEqual(['data', 'stats', 'total', 'totalPages']);
    expect(r.json.total).toBe(7);
    expect(r.json.totalPages).toBe(1);
    expect(r.json.data.map((m: any) => m.key)).toEqual(['n6', 'n5', 'n4', 'n3', 'n2', 'n1', 'n0']);
    expect(r.json.stats).toEqual({ total: 7, tokensUsed: expect.any(Number), hitRate: 0, cacheStats: { hits: expect.any(Number), misses: expect.any(Number) } });
    expect(r.json.stats.tokensUsed).toBe(r.json.data.reduce((s: number, m: any) => s + m.tokens, 0));
  });

  it('apiKeyId omitted lists the global pool only', async () => {
    const r = await t.request('GET', '/api/memory?limit=200');
    expect(r.json.data.every((m: any) => m.apiKeyId === null)).toBe(true);
    expect(r.json.data.some((m: any) => m.key === 'n1')).toBe(false);
  });

  it('filters: type, sessionId, q', async () => {
    expect((await t.request('GET', `/api/memory?apiKeyId=${scope}&type=episodic`)).json.total).toBe(3);
    expect((await t.request('GET', `/api/memory?apiKeyId=${scope}&sessionId=sess`)).json.total).toBe(2);
    const q = await t.request('GET', `/api/memory?apiKeyId=${scope}&q=apples`);
    expect(q.json.data.map((m: any) => m.key)).toEqual(['n5', 'n3', 'n1']);
    expect((await t.request('GET', `/api/memory?apiKeyId=${scope}&q=${encodeURIComponent('100%_"')}`)).json.total).toBe(0);
  });

  it('paging: limit/page/offset and totalPages', async () => {
    const p1 = await t.request('GET', `/api/memory?apiKeyId=${scope}&limit=3`);
    expect(p1.json.data.map((m: any) => m.key)).toEqual(['n6', 'n5', 'n4']);
    expect(p1.json.totalPages).toBe(3);
    const p3 = await t.request('GET', `/api/memory?apiKeyId=${scope}&limit=3&page=3`);
    expect(p3.json.data.map((m: any) => m.key)).toEqual(['n0']);
    const p9 = await t.request('GET', `/api/memory?apiKeyId=${scope}&limit=3&page=9`);
    expect(p9.json.data).toEqual([]);
    expect(p9.json.total).toBe(7);
    const off = await t.request('GET', `/api/memory?apiKeyId=${scope}&limit=2&offset=1`);
    expect(off.json.data.map((m: any) => m.key)).toEqual(['n5', 'n4']);
    const max = await t.request('GET', `/api/memory?apiKeyId=${scope}&limit=200&offset=0&page=1`);
    expect(max.status).toBe(200);
    expect((await t.request('GET', `/api/memory?apiKeyId=${scope}&limit=1`)).json.data).toHaveLength(1);
  });

  it.each(['limit=0', 'limit=201', 'limit=-1', 'limit=1.5', 'limit=abc', 'page=0', 'page=-2', 'page=x', 'offset=-1', 'offset=1.2', 'type=other'])(
    '400 on %s',
    async (q) => {
      expectError(await t.request('GET', `/api/memory?${q}`), 400);
    },
  );

  it('default limit is 50', async () => {
    for (let i = 0; i < 52; i++) await create({ content: `bulk ${i}`, key: 'bulk', apiKeyId: 'bulk-scope' });
    const r = await t.request('GET', '/api/memory?apiKeyId=bulk-scope');
    expect(r.json.data).toHaveLength(50);
    expect(r.json.total).toBe(52);
    expect(r.json.totalPages).toBe(2);
  });
});

describe('GET /api/memory/health', () => {
  it('performs a real round trip and leaves nothing behind', async () => {
    const before = (t.services.db.prepare('SELECT count(*) AS n FROM memories').get() as { n: number }).n;
    const seqBefore = (t.services.db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'memories'").get() as { seq: number }).seq;
    const r = await t.request('GET', '/api/memory/health');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ working: true, latencyMs: expect.any(Number), error: null });
    expect((t.services.db.prepare('SELECT count(*) AS n FROM memories').get() as { n: number }).n).toBe(before);
    // A row really was created (the autoincrement moved) and then deleted.
    expect((t.services.db.prepare("SELECT seq FROM sqlite_sequence WHERE name = 'memories'").get() as { seq: number }).seq).toBe(seqBefore + 1);
  });

  it('reports a broken store as working: false with the error', async () => {
    t.services.db.exec('CREATE TRIGGER break_insert BEFORE INSERT ON memories BEGIN SELECT RAISE(ABORT, \'disk on fire\'); END');
    try {
      const r = await t.request('GET', '/api/memory/health');
      expect(r.status).toBe(200);
      expect(r.json).toMatchObject({ working: false, error: expect.stringContaining('disk on fire') });
    } finally {
      t.services.db.exec('DROP TRIGGER break_insert');
    }
  });
});

describe('POST /api/memory/retrieve-preview validation', () => {
  it.each([
    ['query missing', {}],
    ['query empty', { query: '' }],
    ['unknown property', { query: 'x', foo: 1 }],
    ['strategy unknown', { query: 'x', strategy: 'fuzzy' }],
    ['maxTokens 0', { query: 'x', maxTokens: 0 }],
    ['maxTokens 16001', { query: 'x', maxTokens: 16001 }],
    ['maxTokens fractional', { query: 'x', maxTokens: 1.5 }],
    ['limit 0', { query: 'x', limit: 0 }],
    ['limit 101', { query: 'x', limit: 101 }],
    ['limit a string', { query: 'x', limit: '5' }],
  ])('400 with %s', async (_n, body) => {
    expectError(await t.request('POST', '/api/memory/retrieve-preview', body), 400);
  });

  it('defaults: hybrid, 2000 tokens, limit 20; bounds accepted', async () => {
    const r = await t.request('POST', '/api/memory/retrieve-preview', { query: 'apples' });
    expect(r.status).toBe(200);
    expect(r.json.budgetMaxTokens).toBe(2000);
    expect(r.json.resolution).toEqual({
      embeddingSource: null,
      embeddingModel: null,
      vectorStore: 'none',
      strategyUsed: 'exact',
      rerankApplied: false,
      fallbackReason: expect.stringContaining('no embedding source'),
    });
    for (const body of [
      { query: 'x', maxTokens: 1, limit: 1 },
      { query: 'x', maxTokens: 16000, limit: 100, strategy: 'exact' },
      { query: 'x', strategy: 'semantic', apiKeyId: 'k' },
    ]) {
      expect((await t.request('POST', '/api/memory/retrieve-preview', body)).status).toBe(200);
    }
  });

  it('FTS syntax in user text never errors', async () => {
    await create({ content: 'The AND operator of NEAR queries', key: 'fts' });
    for (const query of ['"', 'AND', 'NEAR(', 'a OR', '*', 'col:val', '(((', '^x', "it's", '-', 'NOT NOT', '"unbalanced', '🙂', 'x'.repeat(5000)]) {
      const r = await t.request('POST', '/api/memory/retrieve-preview', { query, strategy: 'exact' });
      expect(r.status, query).toBe(200);
    }
    const r = await t.request('POST', '/api/memory/retrieve-preview', { query: 'NEAR( AND "operator', strategy: 'exact' });
    expect(r.json.memories.map((m: any) => m.key)).toContain('fts');
  });
});

describe('engine-status and embedding-providers', () => {
  it('engine status with nothing configured: keyword only', async () => {
    const r = await t.request('GET', '/api/memory/engine-status');
    expect(r.status).toBe(200);
    expect(r.json).toEqual({
      keyword: { available: true, backend: 'FTS5' },
      embedding: { source: null, model: null, dimensions: null, available: false, reason: expect.any(String), cacheStats: { hits: expect.any(Number), misses: expect.any(Number), size: expect.any(Number) } },
      vectorStore: { backend: 'none', available: false, rowCount: 0, needsReindex: 0, reason: expect.any(String) },
      externalVector: { enabled: false, healthy: null, latencyMs: null, error: null },
      rerank: { enabled: false, provider: null, model: null, available: false, reason: expect.any(String) },
    });
    expect(r.json.embedding.reason).toContain('remote: no remote embedding model configured');
  });

  it('embedding providers: provider, hasKey, models with provider/model ids', async () => {
    const r = await t.request('GET', '/api/memory/embedding-providers');
    expect(r.status).toBe(200);
    const openai = r.json.providers.find((p: any) => p.provider === 'openai');
    expect(openai.hasKey).toBe(false);
    expect(openai.models).toContainEqual({ id: 'openai/text-embedding-3-small', name: 'text-embedding-3-small', dimensions: 1536 });
    for (const p of r.json.providers) {
      expect(Object.keys(p).sort()).toEqual(['hasKey', 'models', 'provider']);
      for (const m of p.models) expect(m.id.startsWith(`${p.provider}/`)).toBe(true);
    }
    await t.request('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-test-0123456789abcdef' });
    const after = await t.request('GET', '/api/memory/embedding-providers');
    expect(after.json.providers.find((p: any) => p.provider === 'openai').hasKey).toBe(true);
  });
});

describe('settings routes', () => {
  it('GET defaults, PUT partial (others kept), unknown keys and bad values rejected, api key masked', async () => {
    const g = await t.request('GET', '/api/memory/settings');
    expect(g.json).toMatchObject({ embeddingOrder: ['remote', 'static', 'transformers'], remoteModel: null, qdrantUrl: null, rerankModel: null, autoReindex: true });
    const p = await t.request('PUT', '/api/memory/settings', { embeddingCacheSize: 10, qdrantApiKey: 'secret-key-123' });
    expect(p.status).toBe(200);
    expect(p.json).toMatchObject({ embeddingCacheSize: 10, qdrantApiKey: 'secr...', embeddingOrder: ['remote', 'static', 'transformers'] });
    const echo = await t.request('PUT', '/api/memory/settings', { qdrantApiKey: 'secr...' });
    expect(echo.status).toBe(200);
    expect(t.services.memory.settings.qdrantApiKey).toBe('secret-key-123');
    expectError(await t.request('PUT', '/api/memory/settings', { nope: 1 }), 400);
    expectError(await t.request('PUT', '/api/memory/settings', { remoteModel: 'no-slash' }), 400);
    expectError(await t.request('PUT', '/api/memory/settings', { embeddingOrder: ['static', 'static'] }), 400);
    expectError(await t.request('PUT', '/api/memory/settings', { qdrantUrl: 'not a url' }), 400);
    await t.request('PUT', '/api/memory/settings', { embeddingCacheSize: 2000, qdrantApiKey: null });
  });

  it('the Qdrant API key is stored sealed, and a plain one written by an older router is sealed on load', async () => {
    const stored = () => (t.services.db.prepare('SELECT value FROM memory_settings WHERE id = 1').get() as { value: string }).value;
    expect((await t.request('PUT', '/api/memory/settings', { qdrantApiKey: 'qdrant-secret-456' })).status).toBe(200);
    expect(stored()).not.toContain('qdrant-secret-456');
    expect(JSON.parse(stored()).qdrantApiKey.enc).toMatch(/^v1\./);
    expect(t.services.memory.settings.qdrantApiKey).toBe('qdrant-secret-456');
    // A plain value as older routers stored it: read back, then sealed in place.
    const doc = JSON.parse(stored());
    t.services.db.prepare('UPDATE memory_settings SET value = ? WHERE id = 1').run(JSON.stringify({ ...doc, qdrantApiKey: 'plain-old-789' }));
    expect((await loadMemorySettings(t.services.memory.store, t.services.paths.secretKey)).qdrantApiKey).toBe('plain-old-789');
    expect(stored()).not.toContain('plain-old-789');
    expect((await loadMemorySettings(t.services.memory.store, t.services.paths.secretKey)).qdrantApiKey).toBe('plain-old-789');
    await t.request('PUT', '/api/memory/settings', { qdrantApiKey: null });
    expect(JSON.parse(stored()).qdrantApiKey).toBeNull();
  });

  it('per-key settings: 404 unknown key; defaults; partial PUT', async () => {
    expectError(await t.request('GET', `/api/memory/keys/${randomUUID()}/settings`), 404);
    const key = await t.request('POST', '/api/keys', { name: 'mem' });
    const id = key.json.id;
    const g = await t.request('GET', `/api/memory/keys/${id}/settings`);
    expect(g.json).toEqual({ apiKeyId: id, inject: false, extract: false, injectMaxTokens: 1000, injectLimit: 10, strategy: 'hybrid', scope: 'both' });
    const p = await t.request('PUT', `/api/memory/keys/${id}/settings`, { inject: true, injectMaxTokens: 300 });
    expect(p.json).toMatchObject({ inject: true, extract: false, injectMaxTokens: 300, injectLimit: 10 });
    expectError(await t.request('PUT', `/api/memory/keys/${id}/settings`, { injectMaxTokens: 0 }), 400);
    expectError(await t.request('PUT', `/api/memory/keys/${id}/settings`, { what: true }), 400);
  });

  it('summarize without a model is a 400; reindex without a source reports no signature', async () => {
    expectError(await t.request('POST', '/api/memory/summarize', {}), 400);
    expectError(await t.request('POST', '/api/memory/summarize', { bogus: 1 }), 400);
    const r = await t.request('POST', '/api/memory/reindex', {});
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ signature: null });
    expect((await t.request('POST', '/api/memory/reindex', { wait: false })).status).toBe(202);
  });

  it('the OpenAPI document lists the memory routes', async () => {
    const r = await t.request('GET', '/api/openapi.json');
    expect(Object.keys(r.json.paths)).toEqual(expect.arrayContaining(['/api/memory', '/api/memory/{id}', '/api/memory/retrieve-preview', '/api/memory/engine-status']));
  });
});
