/**
 * Quotas and relay limits enforced on the real proxy path (issue "Routing and resilience" item 7), at
 * their edges: the Nth request passes and the N+1th gets 429 with the standard body and Retry-After.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let mock: MockUpstream;
let router: RouterProcess;

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  await router.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
}, 60_000);

afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

let keysMade = 0;
async function createKey(body: Record<string, unknown>): Promise<string> {
  const r = await router.manage('POST', '/api/keys', { name: `q-${++keysMade}`, ...body });
  expect(r.status, JSON.stringify(r.json)).toBe(201);
  return r.json.key;
}

async function chat(key: string, path = '/v1/chat/completions', model = 'openai/gpt-4o', headers: Record<string, string> = {}) {
  const res = await fetch(`${router.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, json: (await res.json()) as any, retryAfter: res.headers.get('retry-after') };
}

describe('quotas on the proxy path', () => {
  it('daily request limit: the 3rd request passes, the 4th is 429 with Retry-After until UTC midnight', async () => {
    const key = await createKey({ dailyRequestLimit: 3 });
    for (let i = 0; i < 3; i++) expect((await chat(key)).status).toBe(200);
    const over = await chat(key);
    expect(over.status).toBe(429);
    expect(over.json.error).toMatchObject({ type: 'rate_limit_error', code: 'daily_request_limit' });
    const midnight = new Date();
    midnight.setUTCHours(24, 0, 0, 0);
    const expected = Math.ceil((midnight.getTime() - Date.now()) / 1000);
    expect(Math.abs(Number(over.retryAfter) - expected)).toBeLessThanOrEqual(5);
  });

  it('token limit: a key over its global daily token budget is refused', async () => {
    // The mock reports usage; a budget of 1 token is spent by the first reply.
    const key = await createKey({ tokenLimits: [{ scope: 'global', period: 'day', limit: 1 }] });
    expect((await chat(key)).status).toBe(200);
    const over = await chat(key);
    expect(over.status).toBe(429);
    expect(over.json.error.code).toBe('token_limit');
    expect(Number(over.retryAfter)).toBeGreaterThanOrEqual(1);
  });

  it('a model-scoped key may use only matching models (403 otherwise, never reaching the upstream)', async () => {
    const r = await router.manage('POST', '/api/keys', { name: 'scoped', scopes: ['proxy', 'model:openai/gpt-4o*'] });
    const key = r.json.key as string;
    expect((await chat(key, '/v1/chat/completions', 'openai/gpt-4o-mini')).status).toBe(200);
    const before = mock.requests.length;
    const refused = await chat(key, '/v1/chat/completions', 'openai/o3');
    expect(refused.status).toBe(403);
    expect(refused.json.error.code).toBe('model_not_allowed');
    expect(mock.requests.length).toBe(before);
  });

  it('relay per-IP limit per minute applies across keys from one address', async () => {
    expect((await router.manage('PATCH', '/api/settings', { relayRequestsPerMinutePerKey: 100, relayRequestsPerMinutePerIp: 1 })).status).toBe(200);
    const a = await createKey({});
    const b = await createKey({});
    const relay = '/api/v1/relay/chat/completions';
    // The first relay request of this daemon: this address's minute is fresh.
    expect((await chat(a, relay)).status).toBe(200);
    const over = await chat(b, relay, 'openai/gpt-4o', { 'x-forwarded-for': '9.9.9.9' });
    expect(over.status).toBe(429);
    expect(over.json.error.code).toBe('relay_rate_limit_ip');
  });

  it('relay per-key limit per minute: the Nth passes, the N+1th is 429; the normal route is not limited', async () => {
    expect((await router.manage('PATCH', '/api/settings', { relayRequestsPerMinutePerKey: 2, relayRequestsPerMinutePerIp: 100 })).status).toBe(200);
    const key = await createKey({});
    const relay = '/api/v1/relay/chat/completions';
    expect((await chat(key, relay)).status).toBe(200);
    expect((await chat(key, relay)).status).toBe(200);
    const over = await chat(key, relay);
    expect(over.status).toBe(429);
    expect(over.json.error.code).toBe('relay_rate_limit_key');
    expect(Number(over.retryAfter)).toBeGreaterThanOrEqual(1);
    // A sliding window frees a slot once the previous window has decayed enough: at most two windows.
    expect(Number(over.retryAfter)).toBeLessThanOrEqual(120);
    expect((await chat(key)).status).toBe(200);
  });

});
