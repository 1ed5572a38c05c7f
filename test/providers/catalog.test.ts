import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { call, expectErrorBody } from './helpers.js';

// The model catalog: GET /v1/models (OpenAI and Anthropic shapes) and GET /v1beta/models (Gemini shape).

let router: RouterProcess;
let key: string;

beforeAll(async () => {
  router = await startRouter();
  key = await router.createKey();
});
afterAll(async () => {
  await router?.stop();
});

const openaiIds = async () => (await call(router.url, key, 'GET', '/v1/models')).json.data.map((m: any) => m.id) as string[];
const geminiNames = async () => (await call(router.url, key, 'GET', '/v1beta/models')).json.models.map((m: any) => m.name) as string[];
const providersOf = (ids: string[]) => new Set(ids.map((id) => id.split('/')[0]));

describe('model catalog', () => {
  it('needs an API key', async () => {
    expectErrorBody(await call(router.url, 'not-a-key', 'GET', '/v1/models'), 401);
    expectErrorBody(await call(router.url, 'not-a-key', 'GET', '/v1beta/models'), 401);
  });

  it('with no connection: only the no-auth local providers, in both catalogs', async () => {
    const r = await call(router.url, key, 'GET', '/v1/models');
    expect(r.status).toBe(200);
    expect(r.json.object).toBe('list');
    const ids = r.json.data.map((m: any) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['ollama/llama3.2', 'lmstudio/local-model']));
    expect([...providersOf(ids)].sort()).toEqual(['lmstudio', 'ollama']);
    for (const m of r.json.data) expect(m).toMatchObject({ id: expect.any(String), object: 'model', owned_by: expect.any(String) });

    // Decision in src/daemon/proxy/catalog.ts: no-auth local providers count as connected for /v1beta too.
    const names = await geminiNames();
    expect(names).toEqual(expect.arrayContaining(['models/ollama/llama3.2', 'models/lmstudio/local-model']));
    expect([...providersOf(names.map((n) => n.replace(/^models\//, '')))].sort()).toEqual(['lmstudio', 'ollama']);
  });

  it('a configured provider appears with context_length; /v1beta too', async () => {
    const c = await router.addConnection({ provider: 'openai', apiKey: 'sk-catalog-1234567890' });
    await router.addConnection({ provider: 'claude', apiKey: 'sk-ant-catalog-1234567890' });
    const r = await call(router.url, key, 'GET', '/v1/models');
    const byId = new Map<string, any>(r.json.data.map((m: any) => [m.id, m]));
    expect(byId.get('openai/gpt-5')).toMatchObject({ context_length: 400_000, owned_by: 'openai' });
    expect(byId.get('anthropic/claude-sonnet-4-5')).toMatchObject({ context_length: 200_000 });
    // Unknown context length: the field is absent, not null or 0.
    expect(byId.get('ollama/llama3.2')).not.toHaveProperty('context_length');
    // Providers without a connection are absent.
    const providers = providersOf([...byId.keys()]);
    for (const p of ['gemini', 'groq', 'openrouter', 'mistral', 'web-session', 'codex']) expect(providers.has(p), p).toBe(false);

    const g = await call(router.url, key, 'GET', '/v1beta/models');
    const gm = new Map<string, any>(g.json.models.map((m: any) => [m.name, m]));
    expect(gm.get('models/openai/gpt-5')).toMatchObject({ inputTokenLimit: 400_000, supportedGenerationMethods: expect.arrayContaining(['generateContent']) });
    expect(gm.has('models/anthropic/claude-sonnet-4-5')).toBe(true);
    expect(gm.has('models/gemini/gemini-2.5-pro')).toBe(false);

    // Anthropic shape when anthropic-version is sent.
    const a = await call(router.url, key, 'GET', '/v1/models', undefined, { 'anthropic-version': '2023-06-01' });
    expect(a.status).toBe(200);
    expect(a.json).toMatchObject({ has_more: false, first_id: expect.any(String), last_id: expect.any(String) });
    expect(a.json.data[0]).toMatchObject({ type: 'model', id: expect.any(String), display_name: expect.any(String), created_at: expect.any(String) });
    const aIds = a.json.data.map((m: any) => m.id);
    expect(aIds).toEqual(expect.arrayContaining(['openai/gpt-5', 'anthropic/claude-sonnet-4-5', 'ollama/llama3.2']));
    expect(a.json.first_id).toBe(aIds[0]);
    expect(a.json.last_id).toBe(aIds.at(-1));
    expect(providersOf(aIds).has('gemini')).toBe(false);
    // Also with x-api-key, as the Anthropic SDK authenticates.
    const ax = await call(router.url, '', 'GET', '/v1/models', undefined, { authorization: '', 'x-api-key': key, 'anthropic-version': '2023-06-01' });
    expect(ax.status).toBe(200);
    expect(ax.json.data.length).toBe(a.json.data.length);

    // Deactivating the only openai connection removes openai from both catalogs.
    const off = await router.manage('PUT', `/api/providers/${c.id}`, { isActive: false });
    expect(off.status).toBe(200);
    expect(off.json.isActive).toBe(false);
    expect(providersOf(await openaiIds()).has('openai')).toBe(false);
    expect((await geminiNames()).some((n) => n.startsWith('models/openai/'))).toBe(false);
    expect(providersOf(await openaiIds()).has('anthropic')).toBe(true);
    // ... and a request to it is refused, not sent anywhere else.
    const refused = await call(router.url, key, 'POST', '/v1/chat/completions', { model: 'openai/gpt-5', messages: [{ role: 'user', content: 'x' }] });
    expectErrorBody(refused, refused.status);
    expect(refused.status).toBeGreaterThanOrEqual(400);
    expect(refused.status).toBeLessThan(500);

    // Reactivating brings it back.
    expect((await router.manage('PUT', `/api/providers/${c.id}`, { isActive: true })).status).toBe(200);
    expect(await openaiIds()).toContain('openai/gpt-5');
    expect(await geminiNames()).toContain('models/openai/gpt-5');
  });

  it('a connection created inactive does not configure its provider; deleting the last one removes it', async () => {
    const g = await router.addConnection({ provider: 'gemini', apiKey: 'gem-catalog-1234567890', isActive: false });
    expect(providersOf(await openaiIds()).has('gemini')).toBe(false);
    await router.manage('PUT', `/api/providers/${g.id}`, { isActive: true });
    const ids = await openaiIds();
    expect(ids).toContain('gemini/gemini-2.5-pro');
    expect(await geminiNames()).toContain('models/gemini/gemini-2.5-pro');
    expect((await router.manage('DELETE', `/api/providers/${g.id}`)).status).toBe(204);
    expect(providersOf(await openaiIds()).has('gemini')).toBe(false);
  });

  it('each id appears once; local providers stay listed whatever else changes', async () => {
    const ids = await openaiIds();
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(expect.arrayContaining(['ollama/llama3.2', 'lmstudio/local-model']));
  });

  it('a provider node without connection: its models route, and (static list empty) it lists nothing', async () => {
    const n = await router.manage('POST', '/api/provider-nodes', { name: 'n', prefix: 'catnode', type: 'openai-compatible', baseUrl: 'http://127.0.0.1:9/v1' });
    expect(n.status).toBe(201);
    const ids = await openaiIds();
    expect(ids.some((id) => id.startsWith('catnode/'))).toBe(false);
    await router.manage('DELETE', `/api/provider-nodes/${n.json.id}`);
  });
});
