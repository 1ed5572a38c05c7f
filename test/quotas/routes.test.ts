/**
 * Over HTTP, in process: key limits on create and PATCH (applied together with name and scopes),
 * validation 400s, GET /api/quotas/:keyId, the settings, a 429 with Retry-After through the real error
 * formatter, and counters surviving closeServices + bootServices.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import { createApp } from '../../src/daemon/http/app.js';
import { route } from '../../src/daemon/http/routes.js';
import type { Services } from '../../src/daemon/services.js';
import { T0 } from './helpers.js';

let home: string;
let services: Services;
let app: ReturnType<typeof createApp>;
const clock = { now: T0 };

/** A client-tier route that does what the proxy pipeline will do before going upstream. */
const probe = route({
  method: 'POST',
  path: '/test/quota-probe',
  tier: 'client',
  tag: 'test',
  summary: 'quota probe',
  handler: ({ services: s, auth, event }) => {
    const relay = event.req.headers.get('x-relay') === '1';
    s.quotas.allowedModel(auth, 'openai/gpt-4o');
    s.quotas.admit(auth, { provider: 'openai', model: 'gpt-4o', relay, clientIp: auth.remoteAddress });
    return { ok: true };
  },
});

async function boot(): Promise<void> {
  services = await bootServices({ home, host: '127.0.0.1', port: 0, clock: () => clock.now });
  app = createApp([...services.routeTable, probe], services);
}

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-quota-routes-'));
  await boot();
});
afterAll(() => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
});

interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}, remoteAddress = '127.0.0.1'): Promise<Reply> {
  const h: Record<string, string> = { ...headers };
  if (!('authorization' in h)) h['x-router-cli-token'] = services.cliToken;
  if (body !== undefined) h['content-type'] = 'application/json';
  const res = await app.request(path, { method, headers: h, body: body === undefined ? undefined : JSON.stringify(body) }, { remoteAddress });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const LIMITS = [
  { scope: 'global', period: 'day', limit: 100_000 },
  { scope: 'provider:openai', period: 'month', limit: 2_000_000 },
  { scope: 'model:openrouter/anthropic/claude-3.5-sonnet', period: 'day', limit: 5000 },
];

describe('key limits on the key routes', () => {
  it('create accepts dailyRequestLimit and tokenLimits; list and get show them; defaults are null and []', async () => {
    const created = await call('POST', '/api/keys', { name: 'limited', dailyRequestLimit: 3, tokenLimits: LIMITS });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ name: 'limited', dailyRequestLimit: 3, tokenLimits: LIMITS });
    expect(created.body.key).toMatch(/^rk_/);
    const plain = await call('POST', '/api/keys', { name: 'plain' });
    expect(plain.body).toMatchObject({ dailyRequestLimit: null, tokenLimits: [] });
    const list = await call('GET', '/api/keys');
    expect(list.body.keys.find((k: any) => k.id === created.body.id)).toMatchObject({ dailyRequestLimit: 3, tokenLimits: LIMITS });
    expect(list.body.keys.every((k: any) => !('keyHash' in k) && !('key' in k))).toBe(true);
  });

  it('PATCH applies name, scopes and limits together, and a PATCH failing validation changes nothing', async () => {
    const { body: k } = await call('POST', '/api/keys', { name: 'before', scopes: ['proxy'] });
    const patch = { name: 'after', scopes: ['proxy', 'model:openai/*'], dailyRequestLimit: 7, tokenLimits: [LIMITS[0]] };
    const r = await call('PATCH', `/api/keys/${k.id}`, patch);
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject(patch);
    expect((await call('GET', `/api/keys/${k.id}`)).body).toMatchObject(patch);

    const bad = await call('PATCH', `/api/keys/${k.id}`, { name: 'renamed-again', dailyRequestLimit: -1 });
    expect(bad.status).toBe(400);
    expect((await call('GET', `/api/keys/${k.id}`)).body).toMatchObject(patch);

    // null returns the key to the default setting; limits alone are a valid PATCH; other fields stay.
    const back = await call('PATCH', `/api/keys/${k.id}`, { dailyRequestLimit: null, tokenLimits: [] });
    expect(back.body).toMatchObject({ name: 'after', scopes: ['proxy', 'model:openai/*'], dailyRequestLimit: null, tokenLimits: [] });
    // Persisted, not only cached.
    const row = services.db.prepare('SELECT name, daily_request_limit, token_limits FROM api_keys WHERE id = ?').get(k.id);
    expect(row).toEqual({ name: 'after', daily_request_limit: null, token_limits: '[]' });
  });

  const tl = (o: Record<string, unknown>) => ({ tokenLimits: [{ scope: 'global', period: 'day', limit: 10, ...o }] });
  const invalid: Array<[string, Record<string, unknown>]> = [
    ['negative daily limit', { dailyRequestLimit: -1 }],
    ['fractional daily limit', { dailyRequestLimit: 1.5 }],
    ['daily limit as string', { dailyRequestLimit: '5' }],
    ['daily limit over the maximum', { dailyRequestLimit: 100_000_001 }],
    ['tokenLimits not an array', { tokenLimits: { scope: 'global' } }],
    ['21 token limits', { tokenLimits: Array.from({ length: 21 }, (_, i) => ({ scope: `provider:p${i}`, period: 'day', limit: 1 })) }],
    ['unknown scope kind', tl({ scope: 'models:openai/gpt-4o' })],
    ['model scope without provider', tl({ scope: 'model:gpt-4o' })],
    ['empty provider id', tl({ scope: 'provider:' })],
    ['scope with spaces', tl({ scope: 'global ' })],
    ['wildcard in a token scope', tl({ scope: 'model:openai/*' })],
    ['unknown period', tl({ period: 'week' })],
    ['negative token limit', tl({ limit: -1 })],
    ['fractional token limit', tl({ limit: 0.5 })],
    ['token limit over the maximum', tl({ limit: 1_000_000_000_001 })],
    ['missing limit', { tokenLimits: [{ scope: 'global', period: 'day' }] }],
    ['unknown field in a token limit', tl({ extra: true })],
    ['duplicate scope and period', { tokenLimits: [LIMITS[0], LIMITS[0]] }],
  ];

  it.each(invalid)('400 on create and PATCH: %s', async (_name, fields) => {
    const created = await call('POST', '/api/keys', { name: 'x', ...fields });
    expect(created.status, JSON.stringify(created.body)).toBe(400);
    expect(created.body.error).toMatchObject({ type: 'invalid_request_error', code: expect.any(String), message: expect.any(String) });
    const { body: k } = await call('POST', '/api/keys', { name: `valid: ${_name}` });
    const patched = await call('PATCH', `/api/keys/${k.id}`, fields);
    expect(patched.status, JSON.stringify(patched.body)).toBe(400);
  });

  it('the edges of the bounds are accepted: 0, the maxima, 20 token limits', async () => {
    const twenty = Array.from({ length: 20 }, (_, i) => ({ scope: `provider:p${i}`, period: 'month', limit: i === 0 ? 1_000_000_000_000 : 0 }));
    const r = await call('POST', '/api/keys', { name: 'edges', dailyRequestLimit: 100_000_000, tokenLimits: twenty });
    expect(r.status, JSON.stringify(r.body)).toBe(201);
    const z = await call('PATCH', `/api/keys/${r.body.id}`, { dailyRequestLimit: 0, tokenLimits: [{ scope: 'model:ollama/llama3.1:8b', period: 'day', limit: 1 }] });
    expect(z.status, JSON.stringify(z.body)).toBe(200);
  });
});

describe('settings', () => {
  it('defaults and bounds of the quota settings', async () => {
    const s = await call('GET', '/api/settings');
    expect(s.body).toMatchObject({ defaultDailyRequestLimit: 0, relayRequestsPerMinutePerKey: 60, relayRequestsPerMinutePerIp: 120 });
    expect((await call('PATCH', '/api/settings', { defaultDailyRequestLimit: -1 })).status).toBe(400);
    expect((await call('PATCH', '/api/settings', { relayRequestsPerMinutePerIp: 1.5 })).status).toBe(400);
  });
});

describe('429 and GET /api/quotas over HTTP', () => {
  it('the N+1th request of the day gets the standard 429 body and Retry-After; GET /api/quotas shows the counters', async () => {
    const { body: k } = await call('POST', '/api/keys', { name: 'http', dailyRequestLimit: 2, tokenLimits: [LIMITS[1]] });
    const bearer = { authorization: `Bearer ${k.key}` };
    for (let i = 0; i < 2; i++) expect((await call('POST', '/test/quota-probe', {}, bearer, '203.0.113.50')).status).toBe(200);
    const refused = await call('POST', '/test/quota-probe', {}, bearer, '203.0.113.50');
    expect(refused.status).toBe(429);
    expect(refused.headers.get('retry-after')).toBe('7200');
    expect(refused.body).toEqual({
      error: { message: expect.stringContaining('daily request limit'), type: 'rate_limit_error', code: 'daily_request_limit', limit: 2, retry_after: 7200 },
    });

    services.quotas.recordTokens({ via: 'api-key', key: services.keys.get(k.id), loopback: false, remoteAddress: '' }, { provider: 'openai', model: 'gpt-4o', tokens: 1234 });
    const q = await call('GET', `/api/quotas/${k.id}`);
    expect(q.status).toBe(200);
    expect(q.body).toEqual({
      keyId: k.id,
      now: new Date(T0).toISOString(),
      requests: { period: 'day', used: 2, limit: 2, source: 'key', remaining: 0, resetsAt: '2025-03-11T00:00:00.000Z' },
      tokens: [{ ...LIMITS[1], used: 1234, remaining: 2_000_000 - 1234, resetsAt: '2025-04-01T00:00:00.000Z' }],
      relay: { perKeyPerMinute: 60, remaining: 60 },
      budget: null,
    });
  });

  it('relay limits over HTTP: per key, with Retry-After', async () => {
    expect((await call('PATCH', '/api/settings', { relayRequestsPerMinutePerKey: 2 })).status).toBe(200);
    const { body: k } = await call('POST', '/api/keys', { name: 'relay' });
    const h = { authorization: `Bearer ${k.key}`, 'x-relay': '1' };
    clock.now = Date.UTC(2025, 2, 10, 22, 5, 0);
    for (let i = 0; i < 2; i++) expect((await call('POST', '/test/quota-probe', {}, h, '203.0.113.60')).status).toBe(200);
    const r = await call('POST', '/test/quota-probe', {}, h, '203.0.113.61');
    expect(r.status).toBe(429);
    expect(r.body.error.code).toBe('relay_rate_limit_key');
    expect(r.headers.get('retry-after')).toBe('90'); // 2 * (1 - e/60s) <= 1 from e = 30 s in the next window
    await call('PATCH', '/api/settings', { relayRequestsPerMinutePerKey: 60 });
    clock.now = T0;
  });

  it('403 for a model outside the key scopes', async () => {
    const { body: k } = await call('POST', '/api/keys', { name: 'scoped', scopes: ['proxy', 'model:anthropic/*'] });
    const r = await call('POST', '/test/quota-probe', {}, { authorization: `Bearer ${k.key}` }, '203.0.113.70');
    expect(r.status).toBe(403);
    expect(r.body.error).toMatchObject({ type: 'permission_error', code: 'model_not_allowed' });
  });

  it('GET /api/quotas/:keyId: 404 for unknown or malformed ids, 401 without management credentials', async () => {
    expect((await call('GET', '/api/quotas/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await call('GET', '/api/quotas/not-a-uuid')).status).toBe(404);
    const { body: k } = await call('POST', '/api/keys', { name: 'x' });
    expect((await call('GET', `/api/quotas/${k.id}`, undefined, { authorization: 'Bearer rk_nope' }, '203.0.113.80')).status).toBe(401);
    // A proxy-only key cannot read quotas (management tier).
    expect((await call('GET', `/api/quotas/${k.id}`, undefined, { authorization: `Bearer ${k.key}` }, '203.0.113.80')).status).toBe(403);
  });

  it('counters survive closeServices and a new bootServices', async () => {
    const { body: k } = await call('POST', '/api/keys', { name: 'restart', dailyRequestLimit: 3 });
    const bearer = { authorization: `Bearer ${k.key}` };
    for (let i = 0; i < 2; i++) expect((await call('POST', '/test/quota-probe', {}, bearer, '203.0.113.90')).status).toBe(200);
    closeServices(services);
    await boot();
    expect((await call('GET', `/api/quotas/${k.id}`)).body.requests).toMatchObject({ used: 2, limit: 3, remaining: 1 });
    expect((await call('POST', '/test/quota-probe', {}, bearer, '203.0.113.90')).status).toBe(200);
    expect((await call('POST', '/test/quota-probe', {}, bearer, '203.0.113.90')).status).toBe(429);
  });
});
