import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { call, chatBody, expectErrorBody, expectNoSecrets } from './helpers.js';

// Provider nodes: custom OpenAI- and Anthropic-compatible endpoints addressed `<prefix>/<model>`.

let mock: MockUpstream;
let router: RouterProcess;
let key: string;

beforeAll(async () => {
  mock = await startMockUpstream({ models: { openai: ['node-model-a', 'node-model-b'] } });
  router = await startRouter();
  key = await router.createKey();
});
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

function lastRequest(endpoint: string) {
  const r = mock.requests.filter((x) => x.endpoint === endpoint).at(-1);
  expect(r, `no ${endpoint} request reached the mock`).toBeDefined();
  return r!;
}

async function createNode(body: Record<string, unknown>) {
  const r = await router.manage('POST', '/api/provider-nodes', body);
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json;
}

describe('provider nodes', () => {
  let chatNode: any;

  it('openai-compatible (chat): created, listed, and works without any stored connection', async () => {
    chatNode = await createNode({
      name: 'Local vLLM',
      prefix: 'vllm',
      type: 'openai-compatible',
      baseUrl: `${mock.openaiBase}/`,
      customHeaders: { 'X-Tenant': 'acme', 'X-Trace-Flag': 'on' },
    });
    expect(chatNode).toMatchObject({ id: expect.any(String), prefix: 'vllm', type: 'openai-compatible', apiType: 'chat', baseUrl: mock.openaiBase });
    expect((await router.manage('GET', `/api/provider-nodes/${chatNode.id}`)).json).toMatchObject({ id: chatNode.id, prefix: 'vllm' });
    expect((await router.manage('GET', '/api/provider-nodes')).json.nodes.map((n: any) => n.id)).toContain(chatNode.id);

    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('vllm/meta/llama-3-8b'));
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBe('Hello from the mock.');
    const req = lastRequest('openai.chat');
    expect(req.json.model).toBe('meta/llama-3-8b');
    expect(req.headers['x-tenant']).toBe('acme');
    expect(req.headers['x-trace-flag']).toBe('on');
    expect(req.headers.authorization).toBeUndefined();
    expectNoSecrets(req.headers, [key]);
  });

  it('a connection on the node (by prefix) adds its Bearer key; node id works as provider too', async () => {
    const c = await router.addConnection({ provider: 'vllm', apiKey: 'node-upstream-key-123456' });
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('vllm/m1'));
    expect(r.status, r.text).toBe(200);
    const req = lastRequest('openai.chat');
    expect(req.headers.authorization).toBe('Bearer node-upstream-key-123456');
    expect(req.headers['x-tenant']).toBe('acme');
    // The node id also addresses it.
    const byId = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody(`${chatNode.id}/m2`));
    expect(byId.status, byId.text).toBe(200);
    expect(lastRequest('openai.chat').json.model).toBe('m2');

    // Sync through the node connection: its models appear as <prefix>/<model>.
    const s = await router.manage('POST', `/api/providers/${c.id}/sync-models`);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    expect(s.json).toMatchObject({ provider: 'vllm', count: 2 });
    const cat = await call(router.url, key, 'GET', '/v1/models');
    const ids = cat.json.data.map((m: any) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['vllm/node-model-a', 'vllm/node-model-b']));
    expect(ids.some((id: string) => id.startsWith(`${chatNode.id}/`))).toBe(false);
    expect((await router.manage('DELETE', `/api/providers/${c.id}`)).status).toBe(204);
  });

  it('a node whose only connection is disabled is not called (no credential-less request): no active connection (issue 27 item 7)', async () => {
    const c = await router.addConnection({ provider: 'vllm', name: 'vllm-off', apiKey: 'node-upstream-key-disabled' });
    expect((await router.manage('PUT', `/api/providers/${c.id}`, { isActive: false })).status).toBe(200);
    const before = mock.requests.length;
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('vllm/m1'));
    expectErrorBody(r, 400);
    expect(r.json.error.code).toBe('no_active_connection');
    expect(r.json.error.message).toMatch(/vllm/);
    expect(r.json.error.message).toMatch(/disabled/);
    expect(mock.requests.length).toBe(before);
    // Enabled again: called with its key.
    expect((await router.manage('PUT', `/api/providers/${c.id}`, { isActive: true })).status).toBe(200);
    const ok = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('vllm/m1'));
    expect(ok.status, ok.text).toBe(200);
    expect(lastRequest('openai.chat').headers.authorization).toBe('Bearer node-upstream-key-disabled');
    // Removed: the node has no connection at all again and is called without one, as before.
    expect((await router.manage('DELETE', `/api/providers/${c.id}`)).status).toBe(204);
    const keyless = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('vllm/m1'));
    expect(keyless.status, keyless.text).toBe(200);
    expect(lastRequest('openai.chat').headers.authorization).toBeUndefined();
  });

  it("tokenLimitField: translated requests to a node send max_completion_tokens to OpenAI reasoning models (auto) or as the node says (issue 27 item 8)", async () => {
    const node = await createNode({ name: 'Reasoning node', prefix: 'rnode', type: 'openai-compatible', baseUrl: mock.openaiBase });
    expect(node.tokenLimitField).toBe('auto');
    const ask = async (model: string) => {
      const r = await call(router.url, key, 'POST', '/v1/messages', { model, max_tokens: 321, messages: [{ role: 'user', content: 'hi' }] });
      expect(r.status, r.text).toBe(200);
      const sent = lastRequest('openai.chat').json;
      expect(sent.model).toBe(model.slice('rnode/'.length));
      return sent;
    };
    // auto: a reasoning model gets the field it accepts, any other model max_tokens.
    const reasoning = await ask('rnode/gpt-5-mini');
    expect(reasoning.max_completion_tokens).toBe(321);
    expect(reasoning).not.toHaveProperty('max_tokens');
    expect((await ask('rnode/o3')).max_completion_tokens).toBe(321);
    const plain = await ask('rnode/llama-3.1-8b');
    expect(plain.max_tokens).toBe(321);
    expect(plain).not.toHaveProperty('max_completion_tokens');
    // Chosen for the node: every model gets that field.
    expect((await router.manage('PUT', `/api/provider-nodes/${node.id}`, { tokenLimitField: 'max_completion_tokens' })).json.tokenLimitField).toBe('max_completion_tokens');
    expect((await ask('rnode/llama-3.1-8b')).max_completion_tokens).toBe(321);
    expect((await router.manage('PUT', `/api/provider-nodes/${node.id}`, { tokenLimitField: 'max_tokens' })).status).toBe(200);
    expect((await ask('rnode/gpt-5-mini')).max_tokens).toBe(321);
    expectErrorBody(await router.manage('PUT', `/api/provider-nodes/${node.id}`, { tokenLimitField: 'max_output_tokens' }), 400);
    expect((await router.manage('DELETE', `/api/provider-nodes/${node.id}`)).status).toBe(204);
  });

  it('openai-compatible (responses): chat requests are sent to /responses', async () => {
    await createNode({ name: 'Resp node', prefix: 'respnode', type: 'openai-compatible', apiType: 'responses', baseUrl: mock.openaiBase });
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('respnode/gpt-x'));
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBe('Hello from the mock.');
    const req = lastRequest('openai.responses');
    expect(req.path).toBe('/v1/responses');
    expect(req.json.model).toBe('gpt-x');
  });

  it('legacy completions go to an openai-compatible node\'s /completions natively (n, suffix, prompt arrays kept); completions: false translates to chat', async () => {
    const node = await createNode({ name: 'Completions node', prefix: 'cmpnode', type: 'openai-compatible', baseUrl: mock.openaiBase });
    expect(node.completions).toBe(true);
    const body = { model: 'cmpnode/base-model', prompt: ['def f(', 'class A'], suffix: '\n', n: 2, max_tokens: 8 };
    let r = await call(router.url, key, 'POST', '/v1/completions', body);
    expect(r.status, r.text).toBe(200);
    expect(r.json.object).toBe('text_completion');
    const req = lastRequest('openai.completions');
    expect(req.path).toBe('/v1/completions');
    expect(req.json).toEqual({ ...body, model: 'base-model' });

    const off = await router.manage('PUT', `/api/provider-nodes/${node.id}`, { completions: false });
    expect(off.status, JSON.stringify(off.json)).toBe(200);
    expect(off.json.completions).toBe(false);
    const before = mock.requests.filter((x) => x.endpoint === 'openai.completions').length;
    r = await call(router.url, key, 'POST', '/v1/completions', { model: 'cmpnode/base-model', prompt: 'Say hi', max_tokens: 8 });
    expect(r.status, r.text).toBe(200);
    expect(r.json.object).toBe('text_completion');
    expect(lastRequest('openai.chat').json.model).toBe('base-model');
    expect(mock.requests.filter((x) => x.endpoint === 'openai.completions').length).toBe(before);

    // n > 1 (or best_of) only where the upstream cannot do it: a 400 naming the model and provider.
    for (const field of ['n', 'best_of']) {
      r = await call(router.url, key, 'POST', '/v1/completions', { model: 'cmpnode/base-model', prompt: 'Say hi', [field]: 2 });
      expect(r.status, r.text).toBe(400);
      expect(r.json.error.param).toBe(field);
      expect(r.json.error.message).toContain("'cmpnode/base-model'");
      expect(r.json.error.message).toContain('cmpnode');
      expect(r.json.error.message).toMatch(/no \/completions endpoint/);
    }
  });

  it('anthropic-compatible: a trailing /messages is stripped; x-api-key and anthropic-version sent', async () => {
    const node = await createNode({
      name: 'Anthropic proxy',
      prefix: 'antnode',
      type: 'anthropic-compatible',
      baseUrl: `${mock.anthropicBase}/messages`,
      customHeaders: { 'X-Extra': 'yes' },
    });
    expect(node.baseUrl).toBe(mock.anthropicBase);
    await router.addConnection({ provider: node.id, apiKey: 'ant-node-key-1234567890' });
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('antnode/claude-x', { max_tokens: 32 }));
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBe('Hello from the mock.');
    const req = lastRequest('anthropic.messages');
    expect(req.path).toBe('/v1/messages');
    expect(req.headers['x-api-key']).toBe('ant-node-key-1234567890');
    expect(req.headers['anthropic-version']).toBeTruthy();
    expect(req.headers['x-extra']).toBe('yes');
    expect(req.json.model).toBe('claude-x');
  });

  it('refuses prefixes that collide with built-in ids, aliases or other prefixes', async () => {
    for (const prefix of ['openai', 'oai', 'claude', 'google', 'gemini', 'ollama', 'vllm', 'antnode']) {
      const r = await router.manage('POST', '/api/provider-nodes', { name: 'x', prefix, type: 'openai-compatible', baseUrl: mock.openaiBase });
      expectErrorBody(r, 400, 'invalid_request_error');
    }
  });

  it('a custom Authorization header is sent without a connection; a connection\'s key takes its place', async () => {
    const n = await createNode({
      name: 'hdr auth',
      prefix: 'hdrauth',
      type: 'openai-compatible',
      baseUrl: mock.openaiBase,
      customHeaders: { Authorization: 'Bearer from-custom-header' },
    });
    let r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('hdrauth/m'));
    expect(r.status, r.text).toBe(200);
    expect(lastRequest('openai.chat').headers.authorization).toBe('Bearer from-custom-header');
    await router.addConnection({ provider: n.id, apiKey: 'conn-key-over-header-123' });
    r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('hdrauth/m'));
    expect(r.status, r.text).toBe(200);
    expect(lastRequest('openai.chat').headers.authorization).toBe('Bearer conn-key-over-header-123');
  });

  it('a custom Anthropic-Version replaces the default instead of being sent twice', async () => {
    await createNode({
      name: 'ver',
      prefix: 'antver',
      type: 'anthropic-compatible',
      baseUrl: mock.anthropicBase,
      customHeaders: { 'Anthropic-Version': '2024-01-01' },
    });
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('antver/c', { max_tokens: 16 }));
    expect(r.status, r.text).toBe(200);
    expect(lastRequest('anthropic.messages').headers['anthropic-version']).toBe('2024-01-01');
  });

  it('refuses custom headers that would break the request framing; Host is allowed', async () => {
    const base = { name: 'x', prefix: 'framing', type: 'openai-compatible', baseUrl: mock.openaiBase };
    for (const h of ['Content-Length', 'transfer-encoding', 'Connection', 'Expect', 'Upgrade', 'Content-Type', 'Keep-Alive', 'TE']) {
      const r = await router.manage('POST', '/api/provider-nodes', { ...base, customHeaders: { [h]: '1' } });
      expect(r.status, `${h}: ${JSON.stringify(r.json)}`).toBe(400);
      expectErrorBody(r, 400);
    }
    const ok = await createNode({ ...base, customHeaders: { Host: 'llm.internal' } });
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('framing/m'));
    expect(r.status, r.text).toBe(200);
    expect(lastRequest('openai.chat').headers.host).toBe('llm.internal');
    expectErrorBody(await router.manage('PUT', `/api/provider-nodes/${ok.id}`, { customHeaders: { 'Content-Length': '3' } }), 400);
  });

  it('validates node bodies', async () => {
    const base = { name: 'x', prefix: 'okprefix', type: 'openai-compatible', baseUrl: mock.openaiBase };
    for (const [label, body] of [
      ['bad type', { ...base, type: 'gemini-compatible' }],
      ['bad baseUrl', { ...base, baseUrl: 'nope' }],
      ['non-http baseUrl', { ...base, baseUrl: 'ftp://example.com/v1' }],
      ['uppercase prefix', { ...base, prefix: 'BadPrefix' }],
      ['slash in prefix', { ...base, prefix: 'a/b' }],
      ['empty prefix', { ...base, prefix: '' }],
      ['bad apiType', { ...base, apiType: 'completions' }],
      ['completions not a boolean', { ...base, completions: 'yes' }],
      ['bad header name', { ...base, customHeaders: { 'bad header': 'x' } }],
      ['unknown field', { ...base, extra: 1 }],
      ['missing baseUrl', { name: 'x', prefix: 'okprefix', type: 'openai-compatible' }],
      ['name 101 chars', { ...base, name: 'n'.repeat(101) }],
    ] as const) {
      const r = await router.manage('POST', '/api/provider-nodes', body);
      expect(r.status, `${label}: ${JSON.stringify(r.json)}`).toBe(400);
      expectErrorBody(r, 400);
    }
    expect((await router.manage('GET', '/api/provider-nodes')).json.nodes.map((n: any) => n.prefix)).not.toContain('okprefix');
  });

  it('PUT renames the prefix, changes headers; collisions refused; old prefix stops routing', async () => {
    const bad = await router.manage('PUT', `/api/provider-nodes/${chatNode.id}`, { prefix: 'antnode' });
    expectErrorBody(bad, 400);
    expectErrorBody(await router.manage('PUT', `/api/provider-nodes/${chatNode.id}`, { prefix: 'groq' }), 400);
    // Its own prefix is fine.
    expect((await router.manage('PUT', `/api/provider-nodes/${chatNode.id}`, { prefix: 'vllm' })).status).toBe(200);

    const r = await router.manage('PUT', `/api/provider-nodes/${chatNode.id}`, { prefix: 'vllm2', customHeaders: { 'X-Tenant': 'globex' } });
    expect(r.status, JSON.stringify(r.json)).toBe(200);
    expect(r.json).toMatchObject({ id: chatNode.id, prefix: 'vllm2', customHeaders: { 'X-Tenant': 'globex' } });

    const ok = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('vllm2/m'));
    expect(ok.status, ok.text).toBe(200);
    expect(lastRequest('openai.chat').headers['x-tenant']).toBe('globex');
    expect(lastRequest('openai.chat').headers['x-trace-flag']).toBeUndefined();

    const old = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('vllm/m'));
    expect(old.status).toBeGreaterThanOrEqual(400);
    expect(old.status).toBeLessThan(500);
    expectErrorBody(old, old.status);

    // The freed prefix can be taken by a new node.
    const again = await createNode({ name: 'again', prefix: 'vllm', type: 'openai-compatible', baseUrl: mock.openaiBase });
    expect((await router.manage('DELETE', `/api/provider-nodes/${again.id}`)).status).toBe(204);
    expectErrorBody(await router.manage('PUT', '/api/provider-nodes/00000000-0000-4000-8000-000000000000', { name: 'x' }), 404);
  });

  it('PUT changing type to anthropic-compatible strips /messages from the base URL', async () => {
    const n = await createNode({ name: 'switch', prefix: 'switchnode', type: 'openai-compatible', baseUrl: `${mock.url}/v1/messages` });
    expect(n.baseUrl).toBe(`${mock.url}/v1/messages`);
    const r = await router.manage('PUT', `/api/provider-nodes/${n.id}`, { type: 'anthropic-compatible' });
    expect(r.status).toBe(200);
    expect(r.json.baseUrl).toBe(`${mock.url}/v1`);
    const c = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('switchnode/c', { max_tokens: 16 }));
    expect(c.status, c.text).toBe(200);
    expect(lastRequest('anthropic.messages').json.model).toBe('c');
  });

  it('DELETE answers 204, then 404; its models stop routing; its connections are removed with it', async () => {
    const conn = await router.addConnection({ provider: 'vllm2', apiKey: 'node-key-to-be-removed-1' });
    const other = await router.addConnection({ provider: 'openai', apiKey: 'sk-stays-after-node-delete' });
    expect((await router.manage('GET', '/api/providers')).json.connections.map((c: any) => c.id)).toEqual(expect.arrayContaining([conn.id, other.id]));
    const d = await router.manage('DELETE', `/api/provider-nodes/${chatNode.id}`);
    expect(d.status).toBe(204);
    expectErrorBody(await router.manage('GET', `/api/provider-nodes/${chatNode.id}`), 404);
    expectErrorBody(await router.manage('DELETE', `/api/provider-nodes/${chatNode.id}`), 404);
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('vllm2/m'));
    expectErrorBody(r, 404);
    const cat = await call(router.url, key, 'GET', '/v1/models');
    expect(cat.json.data.map((m: any) => m.id).some((id: string) => id.startsWith('vllm'))).toBe(false);
    const left = (await router.manage('GET', '/api/providers')).json.connections.map((c: any) => c.id);
    expect(left).not.toContain(conn.id);
    expect(left).toContain(other.id);
    expect((await router.manage('DELETE', `/api/providers/${other.id}`)).status).toBe(204);
  });
});
