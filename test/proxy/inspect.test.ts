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
