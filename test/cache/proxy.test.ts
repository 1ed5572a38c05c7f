/**
 * The response cache through the proxy pipeline, in-process against the mock upstream: miss then hit
 * (x-router-cache header, one upstream call), opt-in per request and per key, TTL expiry, LRU eviction,
 * no caching of errors or unfinished replies, a streaming request served from a cached reply, hits
 * recorded in usage at zero cost, and the management routes (stats, purge, settings, key modes).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let mock: MockUpstream;
let key: { id: string; key: string };
let now = Date.UTC(2026, 0, 1, 12);

beforeAll(async () => {
  mock = await startMockUpstream();
  home = mkdtempSync(join(tmpdir(), 'router-cache-proxy-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0, clock: () => now });
  app = buildApp(services);
  key = await services.keys.create('caller', ['proxy']);
  for (const [provider, base] of [['openai', mock.openaiBase], ['anthropic', mock.anthropicBase]] as const) {
    const r = await send('POST', '/api/providers', { provider, apiKey: `sk-${provider}`, providerSpecificData: { baseUrl: base } }, manage);
    expect(r.status, JSON.stringify(r.json)).toBe(201);
  }
});
beforeEach(async () => {
  services.cache.purge();
  await services.cacheModes.set(key.id, 'request');
});
afterEach(() => mock.reset());
afterAll(async () => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
  await mock?.close();
});

const manage = { 'x-router-cli-token': '' };
async function send(method: string, path: string, body: unknown, headers: Record<string, string> = {}) {
  if (headers === manage) headers = { 'x-router-cli-token': services.cliToken };
  const res = await app.request(
    `http://router.test${path}`,
    { method, headers: { ...(body !== undefined ? { 'content-type': 'application/json' } : {}), ...headers }, body: body === undefined ? undefined : JSON.stringify(body) },
    { remoteAddress: '127.0.0.1' },
  );
  const text = await res.text();
  let json: any;
  try {
    json = text ? JSON.parse(text) : undefined;
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

const USE = { 'x-router-cache': 'use' };
const chat = (extra: Record<string, unknown> = {}, headers: Record<string, string> = USE, bearer = key.key) =>
  send('POST', '/v1/chat/completions', { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'Capital of France?' }], ...extra }, {
    authorization: `Bearer ${bearer}`,
    ...headers,
  });
const cacheHeader = (r: { headers: Headers }) => r.headers.get('x-router-cache');

describe('hit and miss', () => {
  it('the first request is a miss that calls the upstream; the same request then hits without calling it', async () => {
    mock.enqueue({ type: 'text', text: 'Paris.' });
    const first = await chat();
    expect(first.status).toBe(200);
    expect(cacheHeader(first)).toBe('miss');
    expect(first.json.choices[0].message.content).toBe('Paris.');
    const second = await chat();
    expect(second.status).toBe(200);
    expect(cacheHeader(second)).toBe('hit');
    expect(second.json.choices[0].message.content).toBe('Paris.');
    expect(second.json.usage).toEqual(first.json.usage);
    expect(second.headers.get('server-timing')).toMatch(/upstream;dur=0/);
    expect(mock.requests).toHaveLength(1);
    const stats = (await send('GET', '/api/cache', undefined, manage)).json;
    expect(stats).toMatchObject({ enabled: true, ttlSeconds: 3600, entries: 1, hits: 1, misses: 1, stores: 1, hitRate: 0.5 });
  });

  it('a different request (message, parameter, model) is a miss', async () => {
    await chat();
    for (const extra of [{ messages: [{ role: 'user', content: 'Capital of Spain?' }] }, { temperature: 0.2 }, { model: 'openai/gpt-4o-mini' }]) {
      expect(cacheHeader(await chat(extra)), JSON.stringify(extra)).toBe('miss');
    }
    expect(mock.requests).toHaveLength(4);
  });

  it('the cache is shared across keys (the key is not part of the cache key) and across client formats', async () => {
    const other = await services.keys.create('other', ['proxy']);
    await chat();
    expect(cacheHeader(await chat({}, USE, other.key))).toBe('hit');
    expect(mock.requests).toHaveLength(1);
  });

  it('hits are recorded in usage against the caller key with zero cost, no account and no upstream time', async () => {
    const saved = services.cache.counters.savedTokens;
    mock.enqueue({ type: 'text', text: 'Paris.', usage: { inputTokens: 1000, outputTokens: 500 } });
    const miss = await chat();
    const hit = await chat();
    expect(cacheHeader(hit)).toBe('hit');
    services.usage.flush();
    const row = (trace: string) =>
      services.db.prepare('SELECT api_key_id, connection_id, status, tokens_in, tokens_out, cost_usd, upstream_ms, streamed FROM usage_log WHERE trace_id = ?').get(trace) as Record<string, any>;
    const m = row(miss.headers.get('x-router-trace-id')!);
    const h = row(hit.headers.get('x-router-trace-id')!);
    expect(m).toMatchObject({ api_key_id: key.id, status: 200, tokens_in: 1000, tokens_out: 500 });
    expect(m.cost_usd).toBeGreaterThan(0);
    expect(m.connection_id).not.toBeNull();
    expect(h).toEqual({ api_key_id: key.id, connection_id: null, status: 200, tokens_in: 1000, tokens_out: 500, cost_usd: 0, upstream_ms: 0, streamed: 0 });
    expect((await send('GET', '/api/cache', undefined, manage)).json.savedTokens).toBe(saved + 1500);
  });
});

describe('opting in', () => {
  it('without a directive a key in the default request mode is not cached (no header)', async () => {
    const a = await chat({}, {});
    const b = await chat({}, {});
    expect(cacheHeader(a)).toBeNull();
    expect(cacheHeader(b)).toBeNull();
    expect(mock.requests).toHaveLength(2);
    expect(services.cache.size().entries).toBe(0);
  });

  it('Cache-Control: max-age=N opts in; no-cache alone does not', async () => {
    expect(cacheHeader(await chat({}, { 'cache-control': 'max-age=60' }))).toBe('miss');
    expect(cacheHeader(await chat({}, { 'cache-control': 'max-age=60' }))).toBe('hit');
    expect(cacheHeader(await chat({}, { 'cache-control': 'no-cache' }))).toBeNull();
    now += 61_000;
    expect(cacheHeader(await chat({}, { 'cache-control': 'max-age=60' }))).toBe('miss');
  });

  it('x-router-cache: refresh skips the lookup and stores the new reply', async () => {
    mock.enqueue({ type: 'text', text: 'old' }, { type: 'text', text: 'new' });
    await chat();
    const refreshed = await chat({}, { 'x-router-cache': 'refresh' });
    expect(cacheHeader(refreshed)).toBe('miss');
    expect(refreshed.json.choices[0].message.content).toBe('new');
    expect((await chat()).json.choices[0].message.content).toBe('new');
    expect(mock.requests).toHaveLength(2);
  });

  it('a key in always mode is cached without a directive, unless the request opts out', async () => {
    await services.cacheModes.set(key.id, 'always');
    expect(cacheHeader(await chat({}, {}))).toBe('miss');
    expect(cacheHeader(await chat({}, {}))).toBe('hit');
    expect(cacheHeader(await chat({}, { 'x-router-cache': 'bypass' }))).toBeNull();
    expect(cacheHeader(await chat({}, { 'cache-control': 'no-store' }))).toBeNull();
    expect(cacheHeader(await chat({}, { 'cache-control': 'no-cache' }))).toBe('miss');
    expect(mock.requests).toHaveLength(4);
  });

  it('a key in off mode is never cached, and the global switch turns the cache off for everyone', async () => {
    await services.cacheModes.set(key.id, 'off');
    await chat();
    expect(cacheHeader(await chat())).toBeNull();
    await services.cacheModes.set(key.id, 'request');
    expect((await send('PATCH', '/api/cache', { enabled: false }, manage)).json.enabled).toBe(false);
    expect(cacheHeader(await chat())).toBeNull();
    await send('PATCH', '/api/settings', { cacheEnabled: true }, manage);
    expect(cacheHeader(await chat())).toBe('miss');
    expect(mock.requests).toHaveLength(4);
  });
});

describe('expiry and bounds', () => {
  it('an entry expires after the TTL (settable) and the next request goes upstream again', async () => {
    expect((await send('PATCH', '/api/cache', { ttlSeconds: 120 }, manage)).json.ttlSeconds).toBe(120);
    await chat();
    now += 119_000;
    expect(cacheHeader(await chat())).toBe('hit');
    now += 1_000;
    expect(cacheHeader(await chat())).toBe('miss');
    expect(mock.requests).toHaveLength(2);
    expect((await send('GET', '/api/cache', undefined, manage)).json.expirations).toBeGreaterThanOrEqual(1);
    await send('PATCH', '/api/cache', { ttlSeconds: 3600 }, manage);
  });

  it('beyond maxEntries the least recently used entry is evicted', async () => {
    await send('PATCH', '/api/cache', { maxEntries: 2 }, manage);
    const q = (content: string) => ({ messages: [{ role: 'user', content }] });
    await chat(q('one'));
    await chat(q('two'));
    expect(cacheHeader(await chat(q('one')))).toBe('hit'); // two is now the least recently used
    await chat(q('three'));
    expect(cacheHeader(await chat(q('two')))).toBe('miss'); // evicted; storing it evicts one
    expect(cacheHeader(await chat(q('three')))).toBe('hit');
    expect(services.cache.size().entries).toBe(2);
    await send('PATCH', '/api/cache', { maxEntries: 10_000 }, manage);
  });
});

describe('never cached', () => {
  it('upstream errors are not stored: the next request calls the upstream again', async () => {
    for (const behavior of [
      { type: 'status', status: 500, message: 'boom' },
      { type: 'status', status: 400, message: 'bad' },
    ] as const) {
      mock.reset();
      services.cache.purge();
      mock.enqueue(behavior, { type: 'text', text: 'fine' });
      const failed = await chat();
      expect(failed.status).toBeGreaterThanOrEqual(400);
      const next = await chat();
      expect(next.status).toBe(200);
      expect(cacheHeader(next)).toBe('miss');
      expect(next.json.choices[0].message.content).toBe('fine');
      expect(mock.requests).toHaveLength(2);
    }
  });

  it('content-filtered, garbage and truncated-by-error replies are not stored; a max_tokens truncation is', async () => {
    for (const behavior of [{ type: 'content-filter' }, { type: 'garbage' }, { type: 'drop-mid-stream' }] as const) {
      mock.reset();
      services.cache.purge();
      mock.enqueue(behavior);
      await chat();
      expect(services.cache.size().entries, behavior.type).toBe(0);
    }
    mock.enqueue({ type: 'max-tokens', text: 'Par' });
    await chat({ max_tokens: 1 });
    const again = await chat({ max_tokens: 1 });
    expect(cacheHeader(again)).toBe('hit');
    expect(again.json.choices[0].finish_reason).toBe('length');
  });

  it('streamed replies are not stored (only non-streaming replies are)', async () => {
    expect(cacheHeader(await chat({ stream: true }))).toBe('miss');
    expect(services.cache.size().entries).toBe(0);
    expect(cacheHeader(await chat({ stream: true }))).toBe('miss');
    expect(mock.requests).toHaveLength(2);
  });
});

describe('streaming from the cache', () => {
  it('a streaming request is served a cached non-streaming reply as Chat Completions SSE', async () => {
    mock.enqueue({ type: 'text', text: 'Paris is the capital.' });
    await chat();
    const s = await chat({ stream: true, stream_options: { include_usage: true } });
    expect(s.status).toBe(200);
    expect(cacheHeader(s)).toBe('hit');
    expect(s.headers.get('content-type')).toMatch(/text\/event-stream/);
    const events = s.text.split('\n\n').filter(Boolean);
    expect(events.at(-1)).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.replace(/^data: /, '')));
    expect(chunks.map((c) => c.choices[0]?.delta?.content ?? '').join('')).toBe('Paris is the capital.');
    expect(chunks.some((c) => c.choices[0]?.finish_reason === 'stop')).toBe(true);
    expect(mock.requests).toHaveLength(1);
  });

  it('a tool-call reply is cached and streamed back with its arguments whole', async () => {
    mock.enqueue({ type: 'tool-calls', calls: [{ name: 'get_weather', arguments: '{"city":"Paris"}', id: 'call_1' }] });
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }];
    const first = await chat({ tools });
    expect(first.json.choices[0].message.tool_calls[0].function.arguments).toBe('{"city":"Paris"}');
    const hit = await chat({ tools });
    expect(cacheHeader(hit)).toBe('hit');
    expect(hit.json.choices[0].message.tool_calls).toEqual(first.json.choices[0].message.tool_calls);
  });
});

describe('management routes', () => {
  it('GET /api/cache reports settings and counters; DELETE purges', async () => {
    await chat();
    await chat();
    const s = await send('GET', '/api/cache', undefined, manage);
    expect(s.status).toBe(200);
    expect(s.json).toMatchObject({ enabled: true, ttlSeconds: 3600, maxEntries: 10_000, maxBytes: 64 * 1024 * 1024, entries: 1 });
    expect(s.json.bytes).toBeGreaterThan(0);
    for (const f of ['hits', 'misses', 'stores', 'evictions', 'expirations', 'tooLarge', 'savedTokens', 'hitRate']) expect(typeof s.json[f], f).toBe('number');
    const del = await send('DELETE', '/api/cache', undefined, manage);
    expect(del).toMatchObject({ status: 200, json: { purged: 1 } });
    expect((await send('GET', '/api/cache', undefined, manage)).json.entries).toBe(0);
    expect(cacheHeader(await chat())).toBe('miss');
  });

  it('management routes refuse client keys and anonymous callers', async () => {
    expect((await send('GET', '/api/cache', undefined, { authorization: `Bearer ${key.key}` })).status).toBe(403);
    expect((await send('DELETE', '/api/cache', undefined, {})).status).toBe(401);
  });

  it('PATCH /api/cache validates with the settings bounds and keeps every other setting', async () => {
    await send('PATCH', '/api/settings', { usageRetentionDays: 7 }, manage);
    for (const bad of [{ ttlSeconds: 0 }, { ttlSeconds: 30 * 86_400 + 1 }, { maxEntries: 0 }, { maxBytes: 1023 }, { enabled: 'yes' }, { other: 1 }]) {
      expect((await send('PATCH', '/api/cache', bad, manage)).status, JSON.stringify(bad)).toBe(400);
    }
    const ok = await send('PATCH', '/api/cache', { ttlSeconds: 60, maxBytes: 2048 }, manage);
    expect(ok.json).toMatchObject({ ttlSeconds: 60, maxBytes: 2048, maxEntries: 10_000, enabled: true });
    const settings = (await send('GET', '/api/settings', undefined, manage)).json;
    expect(settings).toMatchObject({ cacheTtlSeconds: 60, cacheMaxBytes: 2048, usageRetentionDays: 7 });
    // PATCH /api/settings naming one setting leaves the others alone (zod 4's partial() would reset them).
    expect((await send('PATCH', '/api/settings', { cacheMaxEntries: 500 }, manage)).json).toMatchObject({
      cacheMaxEntries: 500,
      cacheTtlSeconds: 60,
      usageRetentionDays: 7,
    });
    await send('PATCH', '/api/settings', { cacheMaxEntries: 10_000 }, manage);
    await send('PATCH', '/api/settings', { cacheTtlSeconds: 3600, cacheMaxBytes: 64 * 1024 * 1024, usageRetentionDays: 30 }, manage);
  });

  it('per-key modes: GET and PUT /api/cache/keys/:id, 404 for an unknown key, 400 for an unknown mode', async () => {
    expect((await send('GET', `/api/cache/keys/${key.id}`, undefined, manage)).json).toEqual({ keyId: key.id, mode: 'request' });
    expect((await send('PUT', `/api/cache/keys/${key.id}`, { mode: 'always' }, manage)).json).toEqual({ keyId: key.id, mode: 'always' });
    expect(services.cacheModes.get(key.id)).toBe('always');
    expect((await send('PUT', `/api/cache/keys/${key.id}`, { mode: 'sometimes' }, manage)).status).toBe(400);
    expect((await send('GET', '/api/cache/keys/00000000-0000-4000-8000-000000000000', undefined, manage)).status).toBe(404);
    expect((await send('PUT', '/api/cache/keys/nope', { mode: 'off' }, manage)).status).toBe(404);
  });
});
