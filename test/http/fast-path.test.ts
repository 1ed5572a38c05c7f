/**
 * The Node fast path for the proxy routes (src/daemon/http/fast-path.ts): which routes take it, that it
 * answers exactly as the h3 app does (status, headers, body; errors, limits, streams, plain-object and
 * Response replies, the cache directive scope), and that everything else still reaches the h3 app
 * (other methods, query strings, unknown paths, the live WebSocket upgrade).
 *
 * In process, the listener sits in front of the h3 app's Node handler with a counting fallback, so each
 * request is known to take one path or the other and the two replies can be compared; then the same
 * guarantees over loopback against the real daemon process.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { H3, H3Event, isEvent, toNodeHandler } from 'h3';
import { NodeRequest } from 'srvx/node';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import { createEvent, fastPathListener, isFastRoute } from '../../src/daemon/http/fast-path.js';
import { ROUTES } from '../../src/daemon/routes.js';
import type { Services } from '../../src/daemon/services.js';
import { VERSION } from '../../src/shared/version.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { rawUpgrade } from '../usage/helpers.js';
import type { RouterProcess } from '../support/router-daemon.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

interface Reply {
  status: number;
  headers: Record<string, string>;
  body: string;
}

/** Headers that differ between any two replies (time, trace ids, timings, connection handling). */
const VOLATILE = new Set(['date', 'x-router-trace-id', 'server-timing', 'keep-alive', 'connection', 'x-request-id']);

/** A request over a fresh connection, raw: status, every header, the body as text. */
function call(
  base: string,
  method: string,
  path: string,
  opts: { headers?: Record<string, string>; body?: string | Buffer[]; chunked?: boolean } = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = { ...opts.headers };
    if (typeof opts.body === 'string' && !opts.chunked) headers['content-length'] = String(Buffer.byteLength(opts.body));
    const req = httpRequest(`${base}${path}`, { method, headers, agent: false }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (body += c));
      res.on('end', () => {
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h[k] = Array.isArray(v) ? v.join(', ') : v;
        resolve({ status: res.statusCode ?? 0, headers: h, body });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    if (Array.isArray(opts.body)) {
      for (const part of opts.body) req.write(part);
      req.end();
    } else req.end(opts.body);
  });
}

function stable(r: Reply): Reply {
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(r.headers)) if (!VOLATILE.has(k)) headers[k] = v;
  return { status: r.status, headers, body: r.body };
}

function expectStandardError(r: Reply, status: number) {
  expect(r.status, r.body).toBe(status);
  expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
  expect(r.headers['x-router-version']).toBe(VERSION);
  const json = JSON.parse(r.body);
  expect(json).toMatchObject({ error: { message: expect.any(String), type: expect.any(String), code: expect.any(String) } });
  return json;
}

const chat = { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

describe('which routes take the fast path', () => {
  it('the client-tier POST routes at a literal path, from the route table', () => {
    const fast = ROUTES.filter(isFastRoute).map((d) => d.path);
    for (const p of ['/v1/chat/completions', '/v1/messages', '/v1/responses', '/v1/completions', '/v1/embeddings', '/v1/messages/count_tokens']) {
      expect(fast).toContain(p);
    }
    for (const d of ROUTES.filter(isFastRoute)) {
      expect(d.method).toBe('POST');
      expect(d.tier).toBe('client');
      expect(d.path).not.toMatch(/[:*]/);
    }
    // Wildcard routes (Gemini), GET routes and other tiers stay on the h3 router.
    expect(fast.some((p) => p.startsWith('/v1beta'))).toBe(false);
    expect(fast).not.toContain('/api/keys');
  });
});

describe('the fast-path event', () => {
  it('is an H3Event like the one h3 builds over srvx, its url made on first use', async () => {
    const app = new H3();
    let seen: Record<string, unknown> = {};
    const server = createServer((req, res) => {
      const fast = createEvent(app, req, res);
      const h3 = new H3Event(new NodeRequest({ req, res }) as unknown as Request, undefined, app);
      seen = {
        instance: fast instanceof H3Event && isEvent(fast),
        url: [fast.url.href, h3.url.href],
        pathname: [fast.url.pathname, h3.url.pathname],
        path: [fast.path, h3.path],
        method: [fast.req.method, h3.req.method],
        auth: [fast.req.headers.get('authorization'), h3.req.headers.get('authorization')],
        node: fast.req.runtime?.node?.res === res && fast.runtime?.node?.req === req,
        context: [Object.keys(fast.context), Object.getPrototypeOf(fast.context)],
        app: fast.app === app,
        resHeaders: fast.res.headers instanceof Headers,
      };
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as AddressInfo).port;
    await call(`http://127.0.0.1:${port}`, 'POST', '/v1/chat/completions', { headers: { authorization: 'Bearer x' }, body: '{}' });
    await new Promise((r) => server.close(r));
    expect(seen).toEqual({
      instance: true,
      url: [`http://127.0.0.1:${port}/v1/chat/completions`, `http://127.0.0.1:${port}/v1/chat/completions`],
      pathname: ['/v1/chat/completions', '/v1/chat/completions'],
      path: ['/v1/chat/completions', '/v1/chat/completions'],
      method: ['POST', 'POST'],
      auth: ['Bearer x', 'Bearer x'],
      node: true,
      context: [[], null],
      app: true,
      resHeaders: true,
    });
  });
});

describe('fastPathListener without the h3 internals it reads', () => {
  it('serves everything through the fallback instead of failing', async () => {
    const home = mkdtempSync(join(tmpdir(), 'router-fast-path-internals-'));
    const services = await bootServices({ home, host: '127.0.0.1', port: 0 });
    try {
      const app = buildApp(services);
      const fallback = () => {};
      const stripped = Object.create(app, { '~routes': { value: undefined }, '~middleware': { value: undefined } });
      expect(fastPathListener(stripped, services, fallback)).toBe(fallback);
      expect(fastPathListener(app, services, fallback)).not.toBe(fallback);
    } finally {
      closeServices(services);
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('in process: the fast path against the h3 app', () => {
  let home: string;
  let services: Services;
  let server: Server;
  let base: string;
  let mock: MockUpstream;
  let key: string;
  const fallback: string[] = [];

  beforeAll(async () => {
    mock = await startMockUpstream();
    home = mkdtempSync(join(tmpdir(), 'router-fast-path-'));
    services = await bootServices({ home, host: '127.0.0.1', port: 0 });
    const app = buildApp(services);
    const h3 = toNodeHandler(app);
    server = createServer(
      fastPathListener(app, services, (req, res) => {
        fallback.push(`${req.method} ${req.url}`);
        void h3(req, res);
      }),
    );
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    key = (await services.keys.create('caller', ['proxy'])).key;
    for (const [provider, url] of [['openai', mock.openaiBase], ['anthropic', mock.anthropicBase]] as const) {
      const r = await call(base, 'POST', '/api/providers', {
        headers: { 'x-router-cli-token': services.cliToken, 'content-type': 'application/json' },
        body: JSON.stringify({ provider, apiKey: `sk-${provider}`, providerSpecificData: { baseUrl: url } }),
      });
      expect(r.status, r.body).toBe(201);
    }
  });
  beforeEach(() => {
    fallback.length = 0;
  });
  afterAll(async () => {
    await new Promise((r) => server?.close(r));
    if (services) closeServices(services);
    if (home) rmSync(home, { recursive: true, force: true });
    await mock?.close();
  });

  const auth = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

  /** The same request on the fast path and (with a query string) through h3; both replies, after checking the paths taken. */
  async function both(path: string, opts: Parameters<typeof call>[3]) {
    const fast = await call(base, 'POST', path, opts);
    expect(fallback).toEqual([]);
    const viaH3 = await call(base, 'POST', `${path}?via=h3`, opts);
    expect(fallback).toEqual([`POST ${path}?via=h3`]);
    fallback.length = 0;
    return { fast, viaH3 };
  }

  it('a missing or invalid key is the same 401 with the standard body', async () => {
    for (const headers of [{ 'content-type': 'application/json' }, { authorization: 'Bearer sk-nope', 'content-type': 'application/json' }] as Record<string, string>[]) {
      const { fast, viaH3 } = await both('/v1/chat/completions', { headers, body: JSON.stringify(chat) });
      expectStandardError(fast, 401);
      expect(stable(fast)).toEqual(stable(viaH3));
    }
  });

  it('invalid JSON is the same 400', async () => {
    const { fast, viaH3 } = await both('/v1/chat/completions', { headers: auth(), body: '{"model": ' });
    expectStandardError(fast, 400);
    expect(stable(fast)).toEqual(stable(viaH3));
  });

  it('bodies over the limit are the same 413, declared or chunked', async () => {
    await services.settings.update({ maxRequestBodyBytes: 2048 });
    try {
      const big = JSON.stringify({ ...chat, messages: [{ role: 'user', content: 'x'.repeat(4096) }] });
      const declared = await both('/v1/chat/completions', { headers: auth(), body: big });
      const json = expectStandardError(declared.fast, 413);
      expect(json.error.message).toMatch(/2048 bytes/);
      expect(stable(declared.fast)).toEqual(stable(declared.viaH3));
      const parts = [Buffer.from(big.slice(0, 1500)), Buffer.from(big.slice(1500, 3000)), Buffer.from(big.slice(3000))];
      const chunked = await both('/v1/chat/completions', { headers: auth(), body: parts, chunked: true });
      expectStandardError(chunked.fast, 413);
      expect(stable(chunked.fast)).toEqual(stable(chunked.viaH3));
    } finally {
      await services.settings.update({ maxRequestBodyBytes: 32 * 1024 * 1024 });
    }
  });

  it('a success reply is the same status, headers and body', async () => {
    const body = JSON.stringify(chat);
    const { fast, viaH3 } = await both('/v1/chat/completions', { headers: auth(), body });
    expect(fast.status).toBe(200);
    expect(fast.headers['x-router-version']).toBe(VERSION);
    // Ids and timestamps differ per reply (and with them the length): compare the rest.
    for (const r of [fast, viaH3]) expect(r.headers['content-length']).toBe(String(Buffer.byteLength(r.body)));
    const norm = (r: Reply) => {
      const { 'content-length': _, ...headers } = stable(r).headers;
      return { status: r.status, headers, body: { ...JSON.parse(r.body), id: undefined, created: undefined } };
    };
    expect(norm(fast)).toEqual(norm(viaH3));
    expect(Object.keys(fast.headers).sort()).toEqual(Object.keys(viaH3.headers).sort());
  });

  it('a streamed reply is the same event stream', async () => {
    const body = JSON.stringify({ ...chat, stream: true });
    const { fast, viaH3 } = await both('/v1/chat/completions', { headers: auth(), body });
    expect(fast.status).toBe(200);
    expect(fast.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(fast.body).toContain('data: [DONE]');
    const events = (r: Reply) => r.body.split('\n\n').map((e) => e.replace(/"(id|created)":("[^"]*"|\d+)/g, ''));
    expect(events(fast)).toEqual(events(viaH3));
    expect(stable(fast).headers).toEqual(stable(viaH3).headers);
  });

  it('the Anthropic route answers the same', async () => {
    const body = JSON.stringify({ model: 'anthropic/claude-haiku-4-5', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] });
    const { fast, viaH3 } = await both('/v1/messages', { headers: auth(), body });
    expect(fast.status, fast.body).toBe(200);
    expect(JSON.parse(fast.body).type).toBe('message');
    expect(stable(fast).headers).toEqual(stable(viaH3).headers);
  });

  it('a handler returning a plain object is sent as h3 sends it', async () => {
    const body = JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'count these tokens' }] });
    const { fast, viaH3 } = await both('/v1/messages/count_tokens', { headers: auth(), body });
    expect(fast.status, fast.body).toBe(200);
    expect(JSON.parse(fast.body).input_tokens).toBeGreaterThan(0);
    expect(fast.headers['x-router-version']).toBe(VERSION);
    expect(stable(fast)).toEqual(stable(viaH3));
  });

  it('the cache directive scope still applies (x-router-cache, cache-control)', async () => {
    mock.reset();
    const body = JSON.stringify({ ...chat, messages: [{ role: 'user', content: 'Capital of France?' }] });
    const use = { ...auth(), 'x-router-cache': 'use' };
    const first = await call(base, 'POST', '/v1/chat/completions', { headers: use, body });
    const second = await call(base, 'POST', '/v1/chat/completions', { headers: use, body });
    expect([first.headers['x-router-cache'], second.headers['x-router-cache']]).toEqual(['miss', 'hit']);
    expect(JSON.parse(second.body).choices).toEqual(JSON.parse(first.body).choices);
    const other = JSON.stringify({ ...chat, messages: [{ role: 'user', content: 'Capital of Peru?' }] });
    const maxAge = { ...auth(), 'cache-control': 'max-age=60' };
    expect((await call(base, 'POST', '/v1/chat/completions', { headers: maxAge, body: other })).headers['x-router-cache']).toBe('miss');
    expect((await call(base, 'POST', '/v1/chat/completions', { headers: maxAge, body: other })).headers['x-router-cache']).toBe('hit');
    expect((await call(base, 'POST', '/v1/chat/completions', { headers: auth(), body })).headers['x-router-cache']).toBeUndefined();
    expect(fallback).toEqual([]);
    expect(mock.requests).toHaveLength(3);
  });

  it('other methods, query strings, trailing slashes, other routes go to the h3 app', async () => {
    const body = JSON.stringify(chat);
    const get = await call(base, 'GET', '/v1/chat/completions', { headers: auth() });
    const put = await call(base, 'PUT', '/v1/chat/completions', { headers: auth(), body });
    const slash = await call(base, 'POST', '/v1/chat/completions/', { headers: auth(), body });
    const unknown = await call(base, 'POST', '/v1/chat/complete', { headers: auth(), body });
    const models = await call(base, 'GET', '/v1/models', { headers: auth() });
    const health = await call(base, 'GET', '/api/health');
    expect(fallback).toEqual([
      'GET /v1/chat/completions',
      'PUT /v1/chat/completions',
      'POST /v1/chat/completions/',
      'POST /v1/chat/complete',
      'GET /v1/models',
      'GET /api/health',
    ]);
    expect(slash.status).toBe(200);
    expect(models.status).toBe(200);
    expect(health.status).toBe(200);
    for (const r of [get, put, unknown]) {
      // The path is named when it is under a route prefix (an API route, not a file-system path).
      expect(expectStandardError(r, 404).error.message).toMatch(/^No route matches (GET|PUT|POST) (\/v1\/[\w/.-]+|on this path)\.$/);
    }
  });
});

describe('over loopback: the daemon with the fast path', () => {
  let mock: MockUpstream;
  let router: RouterProcess;
  let key: string;

  let env: ProxyEnv;

  beforeAll(async () => {
    env = await startProxyEnv([{ provider: 'openai', apiKey: 'sk-up-openai' }]);
    ({ mock, router, key } = env);
  }, 60_000);
  afterAll(async () => {
    await env?.stop();
  });

  const auth = () => ({ authorization: `Bearer ${key}`, 'content-type': 'application/json' });

  it('enforces the client tier: 401 without a key or with a wrong one', async () => {
    const none = await call(router.url, 'POST', '/v1/chat/completions', { headers: { 'content-type': 'application/json' }, body: JSON.stringify(chat) });
    expect(expectStandardError(none, 401).error.code).toBeTruthy();
    const wrong = await call(router.url, 'POST', '/v1/responses', { headers: { authorization: 'Bearer sk-wrong', 'content-type': 'application/json' }, body: '{}' });
    expectStandardError(wrong, 401);
    const manageKey = await router.createKey(['manage']);
    const refused = await call(router.url, 'POST', '/v1/completions', { headers: { authorization: `Bearer ${manageKey}`, 'content-type': 'application/json' }, body: '{}' });
    expect(refused.status).toBeGreaterThanOrEqual(401);
    expect(refused.status).toBeLessThanOrEqual(403);
  });

  it('413 over the body limit (declared and chunked), 400 on invalid JSON', async () => {
    expect((await router.manage('PATCH', '/api/settings', { maxRequestBodyBytes: 2048 })).status).toBe(200);
    try {
      const big = JSON.stringify({ ...chat, messages: [{ role: 'user', content: 'x'.repeat(4096) }] });
      expectStandardError(await call(router.url, 'POST', '/v1/chat/completions', { headers: auth(), body: big }), 413);
      const parts = [Buffer.from(big.slice(0, 2000)), Buffer.from(big.slice(2000))];
      expectStandardError(await call(router.url, 'POST', '/v1/messages', { headers: auth(), body: parts, chunked: true }), 413);
    } finally {
      await router.manage('PATCH', '/api/settings', { maxRequestBodyBytes: 32 * 1024 * 1024 });
    }
    expectStandardError(await call(router.url, 'POST', '/v1/chat/completions', { headers: auth(), body: '{"model": ' }), 400);
  });

  it('success and streamed replies, and the same reply through the h3 app', async () => {
    const ok = await call(router.url, 'POST', '/v1/chat/completions', { headers: auth(), body: JSON.stringify(chat) });
    expect(ok.status, ok.body).toBe(200);
    expect(ok.headers['x-router-version']).toBe(VERSION);
    expect(ok.headers['content-type']).toMatch(/^application\/json/);
    expect(ok.headers['content-length']).toBe(String(Buffer.byteLength(ok.body)));
    expect(JSON.parse(ok.body).choices[0].message.content).toBeTruthy();
    const viaH3 = await call(router.url, 'POST', '/v1/chat/completions?via=h3', { headers: auth(), body: JSON.stringify(chat) });
    expect(Object.keys(ok.headers).sort()).toEqual(Object.keys(viaH3.headers).sort());
    const stream = await call(router.url, 'POST', '/v1/chat/completions', { headers: auth(), body: JSON.stringify({ ...chat, stream: true }) });
    expect(stream.status).toBe(200);
    expect(stream.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(stream.body).toContain('data: [DONE]');
  });

  it('the cache directive still reaches the cache stage', async () => {
    const body = JSON.stringify({ ...chat, messages: [{ role: 'user', content: 'Capital of Chile?' }] });
    const use = { ...auth(), 'x-router-cache': 'use' };
    const a = await call(router.url, 'POST', '/v1/chat/completions', { headers: use, body });
    const b = await call(router.url, 'POST', '/v1/chat/completions', { headers: use, body });
    expect([a.headers['x-router-cache'], b.headers['x-router-cache']]).toEqual(['miss', 'hit']);
  });

  it('unknown paths and other methods get the h3 404 body; other routes still work', async () => {
    for (const [method, path] of [['GET', '/v1/chat/completions'], ['DELETE', '/v1/messages'], ['POST', '/v1/nope']] as const) {
      const r = await call(router.url, method, path, { headers: auth() });
      expect(expectStandardError(r, 404).error.message).toBe(`No route matches ${method} ${path}.`);
    }
    expect((await call(router.url, 'GET', '/v1/models', { headers: auth() })).status).toBe(200);
    expect((await call(router.url, 'GET', '/api/health')).status).toBe(200);
  });

  it('the live WebSocket still upgrades', async () => {
    const r = await rawUpgrade(router.url, '/api/live', { 'x-router-cli-token': router.cliToken });
    expect(r.status).toBe(101);
    r.socket!.destroy();
    expect((await rawUpgrade(router.url, '/api/live', {})).status).toBe(401);
  });
});
