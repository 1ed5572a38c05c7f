/** The traffic inspector's capture route: opt-in, masked credentials, both sides, streams included. */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let mock: MockUpstream;
let router: RouterProcess;
let key: string;
const UPSTREAM_KEY = 'sk-upstream-secret-0123456789';

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  key = await router.createKey();
  await router.addConnection({ provider: 'openai', apiKey: UPSTREAM_KEY, providerSpecificData: { baseUrl: mock.openaiBase } });
}, 60_000);

afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

async function chat(body: Record<string, unknown>) {
  const res = await fetch(`${router.url}/v1/messages`, {
    method: 'POST',
    headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
    body: JSON.stringify({ model: 'openai/gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'capture me' }], ...body }),
  });
  await res.text();
  return res.headers.get('x-router-trace-id')!;
}

it('is off by default: 404 naming the setting', async () => {
  const trace = await chat({});
  const r = await router.manage('GET', `/api/logs/traces/${trace}`);
  expect(r.status).toBe(404);
  expect(r.json.error.message).toMatch(/captureTraffic/);
});

it('captures client and upstream sides with credentials masked, for JSON and streamed replies', async () => {
  expect((await router.manage('PATCH', '/api/settings', { captureTraffic: true })).status).toBe(200);
  for (const stream of [false, true]) {
    const trace = await chat({ stream });
    const r = await router.manage('GET', `/api/logs/traces/${trace}`);
    expect(r.status).toBe(200);
    const d = r.json;
    expect(d.traceId).toBe(trace);
    expect(d.client.request.body).toContain('capture me');
    expect(d.client.request.headers['x-api-key']).not.toBe(key);
    expect(d.upstream.url).toBe(`${mock.openaiBase}/chat/completions`);
    expect(JSON.parse(d.upstream.request.body).messages.at(-1).content).toBe('capture me');
    expect(d.upstream.request.headers.authorization).not.toContain(UPSTREAM_KEY);
    expect(JSON.stringify(d)).not.toContain(UPSTREAM_KEY);
    expect(JSON.stringify(d)).not.toContain(key);
    // Translated: the upstream spoke Chat Completions, the client got Anthropic Messages.
    expect(d.upstream.response.body).toContain(stream ? 'chat.completion.chunk' : 'chat.completion');
    expect(d.client.response.body).toContain(stream ? 'message_start' : '"type":"message"');
  }
});

it('the capture route is loopback-only management (401 without credentials)', async () => {
  const res = await fetch(`${router.url}/api/logs/traces/x`);
  expect(res.status).toBe(401);
});

it("every reply carries X-Router-Trace-Id, router's own refusals and management replies included", async () => {
  const replies = [
    await fetch(`${router.url}/api/health`),
    await fetch(`${router.url}/api/keys`), // 401
    await fetch(`${router.url}/no/such/route`), // 404
    await fetch(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'nosuch/model', messages: [{ role: 'user', content: 'x' }] }),
    }),
  ];
  for (const res of replies) {
    await res.text();
    expect(res.headers.get('x-router-trace-id'), `${res.url} ${res.status}`).toMatch(/^[0-9a-f-]{36}$/);
  }
  expect(replies.map((r) => r.status)).toEqual([200, 401, 404, 404]);
});

it('a refused request is captured with the reply it got, under the trace id of that reply', async () => {
  expect((await router.manage('PATCH', '/api/settings', { captureTraffic: true })).status).toBe(200);
  const cases = [
    { path: '/v1/chat/completions', body: { model: 'nosuch/model', messages: [{ role: 'user', content: 'refuse me' }] }, status: 404 },
    { path: '/v1/messages', body: { model: 'openai/gpt-4o', max_tokens: 5, messages: 'refuse me' }, status: 400 },
    { path: '/v1/chat/completions', body: 'not json {', status: 400 },
  ];
  for (const c of cases) {
    const res = await fetch(`${router.url}${c.path}`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: typeof c.body === 'string' ? c.body : JSON.stringify(c.body),
    });
    const text = await res.text();
    expect(res.status, text).toBe(c.status);
    const trace = res.headers.get('x-router-trace-id')!;
    const r = await router.manage('GET', `/api/logs/traces/${trace}`);
    expect(r.status, `${c.path} ${JSON.stringify(r.json)}`).toBe(200);
    expect(r.json.client.response.headers[':status']).toBe(String(c.status));
    expect(JSON.parse(r.json.client.response.body).error.message).toBe(JSON.parse(text).error.message);
    if (typeof c.body !== 'string') expect(r.json.client.request.body).toContain('refuse me');
    expect(JSON.stringify(r.json)).not.toContain(key);
  }
});

it('captures bodies up to 1 MiB by default (coding-agent requests are 75-120 KB); longer ones are cut and marked', async () => {
  expect((await router.manage('PATCH', '/api/settings', { captureTraffic: true })).status).toBe(200);
  const big = 'x'.repeat(200_000);
  let trace = await chat({ system: big });
  let d = (await router.manage('GET', `/api/logs/traces/${trace}`)).json;
  expect(d.client.request.truncated).toBe(false);
  expect(d.client.request.body).toContain(big);
  expect(d.upstream.request.body).toContain(big);

  expect((await router.manage('PATCH', '/api/settings', { captureMaxBodyBytes: 4096 })).status).toBe(200);
  trace = await chat({ system: big });
  d = (await router.manage('GET', `/api/logs/traces/${trace}`)).json;
  expect(d.client.request.truncated).toBe(true);
  expect(d.client.request.body.length).toBe(4096);
  expect(d.upstream.request.truncated).toBe(true);
  expect((await router.manage('PATCH', '/api/settings', { captureMaxBodyBytes: 1 << 20 })).status).toBe(200);
});

it("an upstream's own error relayed in the client's format carries the trace id, and its capture holds the reply", async () => {
  expect((await router.manage('PATCH', '/api/settings', { captureTraffic: true })).status).toBe(200);
  for (const path of ['/v1/chat/completions', '/v1/embeddings']) {
    mock.enqueue({ type: 'status', status: 500 });
    const body = path.includes('embeddings') ? { model: 'openai/text-embedding-3-small', input: 'x' } : { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'fail me' }] };
    const res = await fetch(`${router.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    expect(res.status, text).toBe(500);
    const trace = res.headers.get('x-router-trace-id');
    expect(trace, path).toMatch(/^[0-9a-f-]{36}$/);
    if (path === '/v1/chat/completions') {
      const d = (await router.manage('GET', `/api/logs/traces/${trace}`)).json;
      expect(d.client.response.headers[':status']).toBe('500');
      expect(d.upstream.response.headers[':status']).toBe('500');
    }
  }
  await router.manage('POST', '/api/resilience/reset', {});
});
