import { existsSync, readFileSync, rmSync } from 'node:fs';
import { createConnection } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { call, chatBody, expectErrorBody, expectNoSecrets } from './helpers.js';

// What a connection sends upstream: base URL override, auth headers per provider, connection test, model
// sync, web-session tool refusal and no-auth local providers.

let mock: MockUpstream;
/** Accepts only the key 'right'; lists custom models. */
let strict: MockUpstream;
let router: RouterProcess;
let key: string;
let home: string;

const UP = { openai: 'sk-upstream-openai-1234567890', anthropic: 'sk-ant-upstream-1234567890', gemini: 'gem-upstream-1234567890' };

/** Every request any mock saw, for the "router key never reaches upstream" check. */
const seen: Array<{ headers: Record<string, string>; body: string; path: string; query: Record<string, string> }> = [];

beforeAll(async () => {
  mock = await startMockUpstream();
  strict = await startMockUpstream({
    requireKey: 'right',
    models: { openai: ['synced-gpt-a', 'synced-gpt-b'], anthropic: ['claude-synced-1'], gemini: ['gemini-synced-1', 'gemini-synced-2'] },
  });
  for (const m of [mock, strict]) m.handle((req) => {
      seen.push(req);
      return undefined;
    });
  router = await startRouter({ keepHome: true });
  home = router.home;
  key = await router.createKey();
  await router.addConnection({ provider: 'openai', apiKey: UP.openai, providerSpecificData: { baseUrl: mock.openaiBase } });
  await router.addConnection({ provider: 'anthropic', apiKey: UP.anthropic, providerSpecificData: { baseUrl: mock.anthropicBase } });
  await router.addConnection({ provider: 'gemini', apiKey: UP.gemini, providerSpecificData: { baseUrl: mock.geminiBase } });
});
afterAll(async () => {
  await router?.stop();
  await mock?.close();
  await strict?.close();
  if (home) rmSync(home, { recursive: true, force: true });
});

function lastRequest(m: MockUpstream, endpoint: string) {
  const r = m.requests.filter((x) => x.endpoint === endpoint).at(-1);
  expect(r, `no ${endpoint} request reached the mock`).toBeDefined();
  return r!;
}

describe('providerSpecificData.baseUrl and upstream auth', () => {
  it('openai: Bearer upstream key at the overridden base URL', async () => {
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('openai/gpt-4o'));
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBe('Hello from the mock.');
    const req = lastRequest(mock, 'openai.chat');
    expect(req.path).toBe('/v1/chat/completions');
    expect(req.headers.authorization).toBe(`Bearer ${UP.openai}`);
    expect(req.json.model).toBe('gpt-4o');
  });

  it('openai alias oai/ resolves to the same connection', async () => {
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('oai/gpt-4o-mini'));
    expect(r.status, r.text).toBe(200);
    expect(lastRequest(mock, 'openai.chat').json.model).toBe('gpt-4o-mini');
  });

  it('anthropic: x-api-key and anthropic-version, no Authorization', async () => {
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('anthropic/claude-haiku-4-5', { max_tokens: 64 }));
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBe('Hello from the mock.');
    const req = lastRequest(mock, 'anthropic.messages');
    expect(req.headers['x-api-key']).toBe(UP.anthropic);
    expect(req.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    expect(req.headers.authorization).toBeUndefined();
    expect(req.json.model).toBe('claude-haiku-4-5');
  });

  it('gemini: x-goog-api-key and the model in the URL, no key in the query', async () => {
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('gemini/gemini-2.5-flash'));
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBe('Hello from the mock.');
    const req = lastRequest(mock, 'gemini.generate');
    expect(req.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(req.headers['x-goog-api-key']).toBe(UP.gemini);
    expect(req.query.key).toBeUndefined();
    expect(req.headers.authorization).toBeUndefined();
  });

  it('the client router key reaches no upstream, via Bearer, x-api-key or x-goog-api-key', async () => {
    await call(router.url, '', 'POST', '/v1/messages', { model: 'openai/gpt-4o', max_tokens: 32, messages: [{ role: 'user', content: 'hi' }] }, {
      authorization: '',
      'x-api-key': key,
    }).then((r) => expect(r.status, r.text).toBe(200));
    await call(router.url, '', 'POST', '/v1beta/models/gemini/gemini-2.5-flash:generateContent', { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }, {
      authorization: '',
      'x-goog-api-key': key,
    }).then((r) => expect(r.status, r.text).toBe(200));
    expect(seen.length).toBeGreaterThan(0);
    for (const req of seen) expectNoSecrets({ h: req.headers, b: req.body, q: req.query, p: req.path }, [key]);
  });
});

describe('POST /api/providers/:id/test', () => {
  it('ok against the mock: {ok:true, models, latencyMs}; testStatus ok', async () => {
    const c = await router.addConnection({ provider: 'openai', apiKey: 'right', providerSpecificData: { baseUrl: strict.openaiBase }, isActive: false });
    const r = await router.manage('POST', `/api/providers/${c.id}/test`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, models: 2, latencyMs: expect.any(Number) });
    const got = await router.manage('GET', `/api/providers/${c.id}`);
    expect(got.json).toMatchObject({ testStatus: 'ok', lastError: null, lastTestedAt: expect.any(String) });
    await router.manage('DELETE', `/api/providers/${c.id}`);
  });

  it('a 401 upstream gives {ok:false, error} and testStatus error, without leaking the key', async () => {
    const wrong = 'sk-WRONG-KEY-abcdefghijklmnop';
    const c = await router.addConnection({ provider: 'openai', apiKey: wrong, providerSpecificData: { baseUrl: strict.openaiBase }, isActive: false });
    const r = await router.manage('POST', `/api/providers/${c.id}/test`);
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: false, error: expect.any(String), latencyMs: expect.any(Number) });
    expect(r.json.error).toMatch(/401|invalid|auth/i);
    expectNoSecrets(r.json, [wrong]);
    const got = await router.manage('GET', `/api/providers/${c.id}`);
    expect(got.json).toMatchObject({ testStatus: 'error', lastError: expect.any(String) });
    // A failed test is a verdict, not an expiry: the connection keeps its active flag.
    expect(got.json.isActive).toBe(false);
    expectNoSecrets(got.json, [wrong]);

    const a = await router.addConnection({ provider: 'anthropic', apiKey: wrong, providerSpecificData: { baseUrl: strict.anthropicBase }, isActive: false });
    expect((await router.manage('POST', `/api/providers/${a.id}/test`)).json.ok).toBe(false);
    const g = await router.addConnection({ provider: 'gemini', apiKey: wrong, providerSpecificData: { baseUrl: strict.geminiBase }, isActive: false });
    expect((await router.manage('POST', `/api/providers/${g.id}/test`)).json.ok).toBe(false);
    for (const id of [c.id, a.id, g.id]) await router.manage('DELETE', `/api/providers/${id}`);
  });

  it('an unreachable upstream is {ok:false} too, not a hang', async () => {
    const c = await router.addConnection({ provider: 'openai', apiKey: 'whatever-key-123', providerSpecificData: { baseUrl: 'http://127.0.0.1:9/v1' }, isActive: false });
    const r = await router.manage('POST', `/api/providers/${c.id}/test`);
    expect(r.json).toMatchObject({ ok: false, error: expect.any(String) });
    await router.manage('DELETE', `/api/providers/${c.id}`);
  });
});

describe('models: static list and sync', () => {
  it('openai: static list until synced, then only the synced ids in /v1/models', async () => {
    const c = await router.addConnection({ provider: 'openai', apiKey: 'right', providerSpecificData: { baseUrl: strict.openaiBase }, isActive: false });
    const before = await router.manage('GET', `/api/providers/${c.id}/models`);
    expect(before.status).toBe(200);
    expect(before.json).toMatchObject({ provider: 'openai', source: 'static' });
    expect(before.json.models.map((m: any) => m.id)).toContain('gpt-5');

    let cat = await call(router.url, key, 'GET', '/v1/models');
    expect(cat.json.data.map((m: any) => m.id)).toContain('openai/gpt-5');

    const s = await router.manage('POST', `/api/providers/${c.id}/sync-models`);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    expect(s.json).toMatchObject({ provider: 'openai', count: 2 });
    expect(lastRequest(strict, 'openai.models').headers.authorization).toBe('Bearer right');

    const after = await router.manage('GET', `/api/providers/${c.id}/models`);
    expect(after.json.source).toBe('synced');
    expect(after.json.models.map((m: any) => m.id).sort()).toEqual(['synced-gpt-a', 'synced-gpt-b']);

    cat = await call(router.url, key, 'GET', '/v1/models');
    const ids = cat.json.data.map((m: any) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['openai/synced-gpt-a', 'openai/synced-gpt-b']));
    expect(ids.filter((id: string) => id.startsWith('openai/'))).toHaveLength(2);
    expect(ids).not.toContain('openai/gpt-5');
    // Other providers keep their static lists.
    expect(ids).toContain('anthropic/claude-sonnet-4-5');
    await router.manage('DELETE', `/api/providers/${c.id}`);
  });

  it('anthropic and gemini sync shapes (gemini ids without models/, with context length)', async () => {
    const a = await router.addConnection({ provider: 'anthropic', apiKey: 'right', providerSpecificData: { baseUrl: strict.anthropicBase }, isActive: false });
    const sa = await router.manage('POST', `/api/providers/${a.id}/sync-models`);
    expect(sa.status, JSON.stringify(sa.json)).toBe(200);
    expect(sa.json.models.map((m: any) => m.id)).toEqual(['claude-synced-1']);
    const areq = lastRequest(strict, 'anthropic.models');
    expect(areq.headers['x-api-key']).toBe('right');

    const g = await router.addConnection({ provider: 'gemini', apiKey: 'right', providerSpecificData: { baseUrl: strict.geminiBase }, isActive: false });
    const sg = await router.manage('POST', `/api/providers/${g.id}/sync-models`);
    expect(sg.status, JSON.stringify(sg.json)).toBe(200);
    expect(sg.json.models).toEqual([
      { id: 'gemini-synced-1', contextLength: 1_048_576 },
      { id: 'gemini-synced-2', contextLength: 1_048_576 },
    ]);
    expect(lastRequest(strict, 'gemini.models').headers['x-goog-api-key']).toBe('right');
    expect((await router.manage('GET', `/api/providers/${g.id}/models`)).json.source).toBe('synced');

    const cat = await call(router.url, key, 'GET', '/v1/models');
    const byId = new Map<string, any>(cat.json.data.map((m: any) => [m.id, m]));
    expect(byId.has('anthropic/claude-synced-1')).toBe(true);
    expect(byId.has('anthropic/claude-sonnet-4-5')).toBe(false);
    expect(byId.get('gemini/gemini-synced-1')).toMatchObject({ context_length: 1_048_576 });
    expect(byId.has('gemini/gemini-2.5-pro')).toBe(false);
    for (const id of [a.id, g.id]) await router.manage('DELETE', `/api/providers/${id}`);
  });

  it('a failing sync is a 502 standard body and keeps the previous list', async () => {
    const c = await router.addConnection({ provider: 'openai', apiKey: 'sk-WRONG-sync-abcdefghij', providerSpecificData: { baseUrl: strict.openaiBase }, isActive: false });
    const r = await router.manage('POST', `/api/providers/${c.id}/sync-models`);
    expectErrorBody(r, 502);
    expectNoSecrets(r.json, ['sk-WRONG-sync-abcdefghij']);
    expect((await router.manage('GET', `/api/providers/${c.id}/models`)).json.models.map((m: any) => m.id)).toContain('synced-gpt-a');
    await router.manage('DELETE', `/api/providers/${c.id}`);
  });
});

describe('model sync edge cases', () => {
  const listReply = (ids: string[]) => ({
    type: 'custom' as const,
    fn: (_req: unknown, res: import('node:http').ServerResponse) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ object: 'list', data: ids.map((id) => ({ id, object: 'model' })) }));
    },
  });

  it('duplicate ids are listed once; an empty list brings the static list back', async () => {
    const c = await router.addConnection({ provider: 'deepseek', apiKey: 'ds-key-1234567890', providerSpecificData: { baseUrl: mock.openaiBase }, isActive: false });
    await router.addConnection({ provider: 'deepseek', apiKey: 'ds-key-active-1234567890', providerSpecificData: { baseUrl: mock.openaiBase } });
    const off = mock.handle((req) => (req.endpoint === 'openai.models' ? listReply(['ds-b', 'ds-a', 'ds-b']) : undefined));
    const s = await router.manage('POST', `/api/providers/${c.id}/sync-models`);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    expect(s.json.count).toBe(2);
    expect((await router.manage('GET', `/api/providers/${c.id}/models`)).json.models.map((m: any) => m.id)).toEqual(['ds-a', 'ds-b']);
    let ids = (await call(router.url, key, 'GET', '/v1/models')).json.data.map((m: any) => m.id).filter((id: string) => id.startsWith('deepseek/'));
    expect(ids).toEqual(['deepseek/ds-a', 'deepseek/ds-b']);
    off();

    const off2 = mock.handle((req) => (req.endpoint === 'openai.models' ? listReply([]) : undefined));
    const e = await router.manage('POST', `/api/providers/${c.id}/sync-models`);
    expect(e.status).toBe(200);
    expect(e.json.count).toBe(0);
    expect((await router.manage('GET', `/api/providers/${c.id}/models`)).json.source).toBe('static');
    ids = (await call(router.url, key, 'GET', '/v1/models')).json.data.map((m: any) => m.id);
    expect(ids).toContain('deepseek/deepseek-chat');
    off2();
  });

  it('synced models, connections and their credentials survive a restart', async () => {
    await router.stop(); // keepHome: the state folder stays
    router = await startRouter({ home });
    key = await router.createKey();
    const cat = await call(router.url, key, 'GET', '/v1/models');
    const ids = cat.json.data.map((m: any) => m.id);
    expect(ids).toEqual(expect.arrayContaining(['openai/synced-gpt-a', 'anthropic/claude-synced-1', 'deepseek/deepseek-chat']));
    expect(ids).not.toContain('openai/gpt-5');
    expect(ids.filter((id: string) => id.startsWith('deepseek/'))).toEqual(['deepseek/deepseek-chat', 'deepseek/deepseek-reasoner']);
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('openai/gpt-4o'));
    expect(r.status, r.text).toBe(200);
    expect(lastRequest(mock, 'openai.chat').headers.authorization).toBe(`Bearer ${UP.openai}`);
  });
});

describe('web-session provider', () => {
  it('refuses tools with 400 before the upstream; proxies without tools with the cookie', async () => {
    const cookie = 'sid=WEB-SESSION-COOKIE-abcdef123456';
    await router.addConnection({ provider: 'web-session', cookie, providerSpecificData: { baseUrl: mock.openaiBase } });
    mock.reset();
    const tools = [{ type: 'function', function: { name: 'f', parameters: { type: 'object', properties: {} } } }];
    const refused = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('web-session/default', { tools }));
    expectErrorBody(refused, 400, 'invalid_request_error');
    // Also in the other client formats.
    const refusedMsg = await call(router.url, key, 'POST', '/v1/messages', {
      model: 'web-session/default',
      max_tokens: 16,
      messages: [{ role: 'user', content: 'hi' }],
      tools: [{ name: 'f', input_schema: { type: 'object' } }],
    });
    expectErrorBody(refusedMsg, 400);
    expect(mock.requests).toHaveLength(0);

    // An empty tools array is no tools.
    const ok = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('web-session/default', { tools: [] }));
    expect(ok.status, ok.text).toBe(200);
    expect(ok.json.choices[0].message.content).toBe('Hello from the mock.');
    const req = lastRequest(mock, 'openai.chat');
    expect(req.headers.cookie).toBe(cookie);
    expect(req.headers.authorization).toBeUndefined();
    expect(req.json.model).toBe('default');
  });
});

const ECHOED = 'sk-ECHOED-by-upstream-0123456789abcdef';

describe('an upstream that quotes the refused key in its error', () => {
  it('test reply, sync error and lastError (also after a reactive expiry) show it masked only', async () => {
    const c = await router.addConnection({ provider: 'together', apiKey: ECHOED, providerSpecificData: { baseUrl: mock.openaiBase } });
    const off = mock.handle(() => ({ type: 'status', status: 401, message: `Invalid API key: ${ECHOED}` }));
    try {
      const t = await router.manage('POST', `/api/providers/${c.id}/test`);
      expect(t.json.ok).toBe(false);
      expect(t.json.error).toContain('Invalid API key');
      expectNoSecrets(t.json, [ECHOED]);
      const s = await router.manage('POST', `/api/providers/${c.id}/sync-models`);
      expectErrorBody(s, 502);
      expectNoSecrets(s.json, [ECHOED]);
      const got = await router.manage('GET', `/api/providers/${c.id}`);
      expect(got.json.lastError).toContain('Invalid API key');
      expectNoSecrets(got.json, [ECHOED]);

      // A proxied 401 expires the connection (reactive path) and records the error: masked too.
      await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('together/m'));
      const after = await router.manage('GET', `/api/providers/${c.id}`);
      expectNoSecrets(after.json, [ECHOED]);
      expectNoSecrets(await router.manage('GET', '/api/providers'), [ECHOED]);
    } finally {
      off();
      await router.manage('DELETE', `/api/providers/${c.id}`);
    }
  });
});

describe('secrets at rest after proxying', () => {
  it('neither upstream keys nor the router key appear in router.db or its WAL', () => {
    const dbFile = join(router.home, 'router.db');
    for (const file of [dbFile, `${dbFile}-wal`]) {
      if (!existsSync(file)) continue;
      const bytes = readFileSync(file);
      for (const s of [...Object.values(UP), key, 'WEB-SESSION-COOKIE-abcdef123456', ECHOED]) {
        expect(bytes.includes(Buffer.from(s)), `${file} holds ${s.slice(0, 10)}`).toBe(false);
      }
    }
  });
});

describe('no-auth local provider', () => {
  it('ollama with a connection whose baseUrl points at the mock', async () => {
    const c = await router.addConnection({ provider: 'ollama', providerSpecificData: { baseUrl: mock.openaiBase } });
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('ollama/llama3.2'));
    expect(r.status, r.text).toBe(200);
    const req = lastRequest(mock, 'openai.chat');
    expect(req.json.model).toBe('llama3.2');
    expect(req.headers.authorization).toBeUndefined();
    expect((await router.manage('DELETE', `/api/providers/${c.id}`)).status).toBe(204);
  });

  it('without a connection it goes to the default 127.0.0.1:11434 (closed): a quick clean 502', async (ctx) => {
    const open = await new Promise<boolean>((resolve) => {
      const s = createConnection({ host: '127.0.0.1', port: 11434 });
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (open) ctx.skip(); // a real Ollama runs here
    const before = mock.requests.length;
    const r = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('ollama/llama3.2'));
    expectErrorBody(r, 502);
    expect(r.ms).toBeLessThan(5000);
    expect(mock.requests.length).toBe(before);
    // The streaming form fails the same way (nothing was sent yet).
    const s = await call(router.url, key, 'POST', '/v1/chat/completions', chatBody('ollama/llama3.2', { stream: true }));
    expectErrorBody(s, 502);
  });
});
