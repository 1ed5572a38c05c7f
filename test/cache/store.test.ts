/**
 * The response cache's parts without HTTP: the store (hit, miss, TTL expiry, LRU eviction by entries and by
 * bytes, write-behind to SQLite, reload after a restart), the key normalization, and the header policy.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { cacheKey } from '../../src/daemon/cache/key.js';
import { planFor, readDirective } from '../../src/daemon/cache/policy.js';
import { cacheableReply, cacheableRequest } from '../../src/daemon/cache/stage.js';
import type { IrRequest, IrResponse } from '../../src/daemon/translate/ir.js';

let home: string;
let services: Services;
let now: number;

const boot = () => bootServices({ home, host: '127.0.0.1', port: 0, clock: () => now });
beforeEach(async () => {
  now = Date.UTC(2026, 0, 1);
  home = mkdtempSync(join(tmpdir(), 'router-cache-store-'));
  services = await boot();
});
afterEach(() => {
  closeServices(services);
  rmSync(home, { recursive: true, force: true });
});

const reply = (text: string, extra: Partial<IrResponse> = {}): IrResponse => ({
  id: `r-${text}`,
  model: 'gpt-4o',
  parts: [{ type: 'text', text }],
  finishReason: 'stop',
  usage: { inputTokens: 10, outputTokens: 5 },
  ...extra,
});
const rows = () => services.db.prepare('SELECT key, hits, last_used_at FROM response_cache ORDER BY key').all() as Array<{ key: string; hits: number; last_used_at: number }>;

describe('ResponseCache', () => {
  it('hit and miss: counts both, returns a fresh copy each time, savedTokens adds the reply tokens', () => {
    const { cache } = services;
    expect(cache.get('k1')).toBeUndefined();
    cache.set('k1', 'openai', 'gpt-4o', reply('a'));
    const first = cache.get('k1')!;
    expect(first).toEqual(reply('a'));
    (first.parts[0] as { text: string }).text = 'mutated';
    expect(cache.get('k1')).toEqual(reply('a'));
    expect(cache.counters).toMatchObject({ hits: 2, misses: 1, stores: 1, savedTokens: 30 });
  });

  it('TTL: an entry expires cacheTtlSeconds after it was stored (default one hour); lowering the TTL applies at once', async () => {
    const { cache, settings } = services;
    expect(settings.get().cacheTtlSeconds).toBe(3600);
    cache.set('k', 'openai', 'gpt-4o', reply('a'));
    now += 3600_000 - 1;
    expect(cache.get('k')).toBeDefined();
    now += 1;
    expect(cache.get('k')).toBeUndefined();
    expect(cache.counters.expirations).toBe(1);
    expect(cache.size().entries).toBe(0);

    cache.set('k2', 'openai', 'gpt-4o', reply('b'));
    now += 30_000;
    await settings.update({ cacheTtlSeconds: 10 });
    expect(cache.size().entries).toBe(0);
    expect(cache.get('k2')).toBeUndefined();
  });

  it('max-age from the request refuses older entries without dropping them', () => {
    const { cache } = services;
    cache.set('k', 'openai', 'gpt-4o', reply('a'));
    now += 20_000;
    expect(cache.get('k', 10_000)).toBeUndefined();
    expect(cache.get('k', 30_000)).toBeDefined();
  });

  it('evicts the least recently used entry beyond cacheMaxEntries', async () => {
    const { cache, settings } = services;
    await settings.update({ cacheMaxEntries: 3 });
    for (const k of ['a', 'b', 'c']) cache.set(k, 'openai', 'gpt-4o', reply(k));
    expect(cache.get('a')).toBeDefined(); // a is now the most recently used; b is the least
    cache.set('d', 'openai', 'gpt-4o', reply('d'));
    expect(cache.size().entries).toBe(3);
    expect(cache.get('b')).toBeUndefined();
    for (const k of ['a', 'c', 'd']) expect(cache.get(k), k).toBeDefined();
    expect(cache.counters.evictions).toBe(1);
    await settings.update({ cacheMaxEntries: 1 });
    expect(cache.size().entries).toBe(1);
    expect(cache.get('d')).toBeDefined();
  });

  it('evicts by bytes beyond cacheMaxBytes and never stores a reply bigger than the bound', async () => {
    const { cache, settings } = services;
    await settings.update({ cacheMaxBytes: 4096 });
    const big = (k: string) => reply(k + 'x'.repeat(1500), { id: k });
    cache.set('a', 'openai', 'gpt-4o', big('a'));
    cache.set('b', 'openai', 'gpt-4o', big('b'));
    expect(cache.size().entries).toBe(2);
    cache.set('c', 'openai', 'gpt-4o', big('c'));
    expect(cache.size().entries).toBe(2);
    expect(cache.size().bytes).toBeLessThanOrEqual(4096);
    expect(cache.get('a')).toBeUndefined();
    expect(cache.set('huge', 'openai', 'gpt-4o', reply('y'.repeat(5000)))).toBe(false);
    expect(cache.counters.tooLarge).toBe(1);
    expect(cache.get('c')).toBeDefined();
  });

  it('writes behind: neither a store nor a hit touches the table until the flush tick', () => {
    const { cache } = services;
    cache.set('k', 'openai', 'gpt-4o', reply('a'));
    expect(rows()).toEqual([]);
    cache.flush();
    expect(rows()).toEqual([{ key: 'k', hits: 0, last_used_at: now }]);
    now += 5_000;
    cache.get('k');
    expect(rows()).toEqual([{ key: 'k', hits: 0, last_used_at: now - 5_000 }]);
    cache.flush();
    expect(rows()).toEqual([{ key: 'k', hits: 1, last_used_at: now }]);
    expect(cache.purge()).toBe(1);
    expect(rows()).toHaveLength(1);
    cache.flush();
    expect(rows()).toEqual([]);
  });

  it('survives a restart in LRU order; expired rows are dropped at load', async () => {
    await services.settings.update({ cacheMaxEntries: 3 });
    for (const k of ['a', 'b', 'c']) {
      services.cache.set(k, 'openai', 'gpt-4o', reply(k));
      now += 1000;
    }
    services.cache.get('a');
    closeServices(services);
    services = await boot();
    expect(services.cache.size().entries).toBe(3);
    services.cache.set('d', 'openai', 'gpt-4o', reply('d'));
    expect(services.cache.get('b')).toBeUndefined(); // b was least recently used before the restart
    expect(services.cache.get('a')).toEqual(reply('a'));
    closeServices(services);
    now += 3600_000;
    services = await boot();
    expect(services.cache.size().entries).toBe(0);
    expect(rows()).toEqual([]);
  });
});

const request = (extra: Partial<IrRequest> = {}): IrRequest => ({
  model: 'gpt-4o',
  system: [{ type: 'text', text: 'be brief' }],
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
  temperature: 0.5,
  stream: false,
  ...extra,
});

describe('cacheKey', () => {
  it('ignores field order, the stream flag, usage options, user, metadata and prompt-cache markers', () => {
    const k = cacheKey(request(), 'openai');
    expect(k).toMatch(/^[0-9a-f]{64}$/);
    const reordered = { stream: true, temperature: 0.5, messages: request().messages, system: request().system, model: 'gpt-4o' } as IrRequest;
    expect(cacheKey(reordered, 'openai')).toBe(k);
    expect(cacheKey(request({ includeUsage: true, user: 'u1', metadata: { a: 'b' }, dropped: ['x'] }), 'openai')).toBe(k);
    expect(cacheKey(request({ system: [{ type: 'text', text: 'be brief', cache: { type: 'ephemeral' } }] }), 'openai')).toBe(k);
  });

  it('differs by provider, model, messages, system, tools and every parameter', () => {
    const k = cacheKey(request(), 'openai');
    const variants: IrRequest[] = [
      request({ model: 'gpt-4o-mini' }),
      request({ temperature: 0.6 }),
      request({ maxTokens: 10 }),
      request({ stop: ['x'] }),
      request({ topP: 1 }),
      request({ seed: 1 }),
      request({ system: [] }),
      request({ messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi!' }] }] }),
      request({ tools: [{ type: 'function', name: 'f' }] }),
      request({ responseFormat: { type: 'json_object' } }),
      request({ reasoning: { effort: 'low' } }),
    ];
    const keys = new Set([k, cacheKey(request(), 'azure'), ...variants.map((r) => cacheKey(r, 'openai'))]);
    expect(keys.size).toBe(variants.length + 2);
  });
});

describe('what may be cached', () => {
  it('complete replies with content, tool calls and max_tokens truncations; not errors, filtered, paused or empty replies', () => {
    expect(cacheableReply(reply('a'))).toBe(true);
    expect(cacheableReply(reply('a', { finishReason: 'length' }))).toBe(true);
    expect(cacheableReply(reply('a', { finishReason: 'stop_sequence' }))).toBe(true);
    expect(cacheableReply({ ...reply(''), parts: [{ type: 'tool_call', id: 'c1', name: 'f', arguments: '{}' }], finishReason: 'tool_calls' })).toBe(true);
    for (const finishReason of ['error', 'content_filter', 'pause'] as const) expect(cacheableReply(reply('a', { finishReason }))).toBe(false);
    expect(cacheableReply(reply(''))).toBe(false);
    expect(cacheableReply({ ...reply('a'), parts: [] })).toBe(false);
  });

  it('requests with provider built-in tools are never cached', () => {
    expect(cacheableRequest(request({ tools: [{ type: 'function', name: 'f' }] }))).toBe(true);
    expect(cacheableRequest(request({ tools: [{ type: 'builtin', format: 'openai-responses', raw: { type: 'web_search' } }] }))).toBe(false);
  });
});

describe('cache directives', () => {
  const h = (init: Record<string, string>) => new Headers(init);
  it('reads x-router-cache first, then Cache-Control', () => {
    expect(readDirective(undefined)).toBeUndefined();
    expect(readDirective(h({}))).toBeUndefined();
    expect(readDirective(h({ 'x-router-cache': 'use' }))).toEqual({ kind: 'use', optIn: true });
    expect(readDirective(h({ 'x-router-cache': ' USE ' }))).toEqual({ kind: 'use', optIn: true });
    expect(readDirective(h({ 'x-router-cache': 'refresh' }))).toEqual({ kind: 'refresh', optIn: true });
    expect(readDirective(h({ 'x-router-cache': 'bypass' }))).toEqual({ kind: 'bypass', optIn: true });
    expect(readDirective(h({ 'x-router-cache': 'use', 'cache-control': 'no-store' }))).toEqual({ kind: 'use', optIn: true });
    expect(readDirective(h({ 'x-router-cache': 'whatever' }))).toBeUndefined();
    expect(readDirective(h({ 'cache-control': 'no-store' }))).toEqual({ kind: 'bypass', optIn: false });
    expect(readDirective(h({ 'cache-control': 'no-cache' }))).toEqual({ kind: 'refresh', optIn: false });
    expect(readDirective(h({ 'cache-control': 'private, max-age=60' }))).toEqual({ kind: 'use', optIn: true, maxAgeMs: 60_000 });
    expect(readDirective(h({ 'cache-control': 'max-age=0' }))).toEqual({ kind: 'refresh', optIn: false });
  });

  it('combines with the key mode: off never, request only on opt-in, always unless opted out; streams only read', () => {
    const use = readDirective(h({ 'x-router-cache': 'use' }));
    const noCache = readDirective(h({ 'cache-control': 'no-cache' }));
    expect(planFor('off', use, false)).toBeUndefined();
    expect(planFor('request', undefined, false)).toBeUndefined();
    expect(planFor('request', noCache, false)).toBeUndefined();
    expect(planFor('request', use, false)).toEqual({ read: true, write: true });
    expect(planFor('request', use, true)).toEqual({ read: true, write: false });
    expect(planFor('request', readDirective(h({ 'x-router-cache': 'refresh' })), false)).toEqual({ read: false, write: true });
    expect(planFor('request', readDirective(h({ 'x-router-cache': 'refresh' })), true)).toBeUndefined();
    expect(planFor('always', undefined, false)).toEqual({ read: true, write: true });
    expect(planFor('always', noCache, false)).toEqual({ read: false, write: true });
    expect(planFor('always', readDirective(h({ 'cache-control': 'no-store' })), false)).toBeUndefined();
    expect(planFor('always', readDirective(h({ 'x-router-cache': 'bypass' })), false)).toBeUndefined();
  });
});
