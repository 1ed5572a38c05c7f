/**
 * Outbound proxy, end to end: a real daemon's upstream calls to the mock upstream go through a local HTTP
 * CONNECT proxy or a local SOCKS5 proxy (test servers on real sockets) as the settings, a connection or
 * the environment say; exclusions bypass them; webhook deliveries follow; the test route reports a
 * refused proxy in words.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { closedPort, startHttpConnectProxy, startSocks5Proxy, type TestProxy } from '../support/proxy-servers.js';

let mock: MockUpstream;
let router: RouterProcess;
let key: string;
let httpProxy: TestProxy;
let socksProxy: TestProxy;
let mockHost: string;
const CHAT = 'POST /v1/chat/completions';

async function chat(model = 'openai/gpt-4o'): Promise<{ status: number; body: any }> {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
  });
  return { status: res.status, body: await res.json() };
}

async function setProxy(outboundProxy: Record<string, unknown>): Promise<void> {
  const r = await router.manage('PATCH', '/api/settings', { outboundProxy });
  expect(r.status, JSON.stringify(r.json)).toBe(200);
}

beforeAll(async () => {
  [mock, httpProxy, socksProxy] = await Promise.all([startMockUpstream(), startHttpConnectProxy(), startSocks5Proxy()]);
  mockHost = new URL(mock.url).host;
  router = await startRouter();
  key = await router.createKey();
  await router.addConnection({ provider: 'openai', apiKey: 'sk-upstream-openai', providerSpecificData: { baseUrl: mock.openaiBase } });
});
afterAll(async () => {
  await router?.stop();
  await Promise.all([mock?.close(), httpProxy?.close(), socksProxy?.close()]);
});
beforeEach(() => {
  for (const p of [httpProxy, socksProxy]) {
    p.targets.length = 0;
    p.requests.length = 0;
  }
});

/** Tunnels are kept alive across tests: a proxy shows at most one new tunnel, always to the mock. */
function tunnelsToMock(p: TestProxy): void {
  expect(p.targets.every((t) => t === mockHost)).toBe(true);
  expect(p.targets.length).toBeLessThanOrEqual(1);
}

describe('outbound proxy (settings)', () => {
  it('sends upstream calls through an HTTP CONNECT proxy', async () => {
    await setProxy({ url: httpProxy.url, noProxy: [], perProvider: {} });
    const r = await chat();
    expect(r.status).toBe(200);
    expect(r.body.choices[0].message.content).toBe('Hello from the mock.');
    expect(httpProxy.targets).toEqual([mockHost]);
    expect(httpProxy.requests).toEqual([CHAT]);
    expect(socksProxy.requests).toEqual([]);
  });

  it('sends upstream calls through a SOCKS5 proxy', async () => {
    await setProxy({ url: socksProxy.url, noProxy: [], perProvider: {} });
    const r = await chat();
    expect(r.status).toBe(200);
    expect(socksProxy.targets).toEqual([mockHost]);
    expect(socksProxy.requests).toEqual([CHAT]);
    expect(httpProxy.requests).toEqual([]);
  });

  it('reuses the proxied connection pool across requests', async () => {
    await setProxy({ url: httpProxy.url, noProxy: [], perProvider: {} });
    for (let i = 0; i < 3; i++) expect((await chat()).status).toBe(200);
    // Three requests, at most one new tunnel (the earlier test's may still be alive): the dispatcher and
    // its pool are built once per proxy, not per request.
    expect(httpProxy.requests).toEqual([CHAT, CHAT, CHAT]);
    tunnelsToMock(httpProxy);
  });

  it('bypasses the proxy for excluded hosts (noProxy)', async () => {
    await setProxy({ url: httpProxy.url, noProxy: ['example.org', '127.0.0.0/8'], perProvider: {} });
    expect((await chat()).status).toBe(200);
    await setProxy({ url: socksProxy.url, noProxy: [`127.0.0.1:${new URL(mock.url).port}`], perProvider: {} });
    expect((await chat()).status).toBe(200);
    expect(mock.requests.length).toBeGreaterThan(0);
    expect(httpProxy.requests).toEqual([]);
    expect(socksProxy.requests).toEqual([]);
  });

  it('lets a provider and a connection choose their own proxy (or none)', async () => {
    await setProxy({ url: httpProxy.url, noProxy: [], perProvider: { openai: socksProxy.url } });
    expect((await chat()).status).toBe(200);
    expect(socksProxy.requests).toEqual([CHAT]);
    expect(httpProxy.requests).toEqual([]);

    await setProxy({ url: httpProxy.url, noProxy: [], perProvider: { openai: null } });
    expect((await chat()).status).toBe(200);
    expect(httpProxy.requests).toEqual([]);
    expect(socksProxy.requests).toEqual([CHAT]);

    const conns = await router.manage('GET', '/api/providers');
    const id = (conns.json.connections ?? conns.json).find((c: any) => c.provider === 'openai').id;
    const upd = await router.manage('PUT', `/api/providers/${id}`, { providerSpecificData: { baseUrl: mock.openaiBase, proxy: socksProxy.url } });
    expect(upd.status, JSON.stringify(upd.json)).toBe(200);
    expect((await chat()).status).toBe(200);
    expect(socksProxy.requests).toEqual([CHAT, CHAT]);
    expect(httpProxy.requests).toEqual([]);
    await router.manage('PUT', `/api/providers/${id}`, { providerSpecificData: { baseUrl: mock.openaiBase } });
  });

  it('refuses an unusable proxy URL with a 400', async () => {
    const r = await router.manage('PATCH', '/api/settings', { outboundProxy: { url: 'ftp://proxy.example:21' } });
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/proxy URL/);
  });

  it('sends webhook deliveries through the proxy', async () => {
    const seen: string[] = [];
    const receiver: Server = createServer((req, res) => {
      seen.push(req.headers['x-webhook-event'] as string);
      res.end('ok');
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    try {
      const port = (receiver.address() as AddressInfo).port;
      await router.manage('PATCH', '/api/settings', { allowPrivateWebhookDestinations: true });
      await setProxy({ url: socksProxy.url, noProxy: [], perProvider: {} });
      const hook = await router.manage('POST', '/api/webhooks', { url: `http://127.0.0.1:${port}/hook`, events: ['*'] });
      expect(hook.status, JSON.stringify(hook.json)).toBe(201);
      const test = await router.manage('POST', `/api/webhooks/${hook.json.id}/test`);
      expect(test.json).toMatchObject({ delivered: true, status: 200 });
      expect(seen).toEqual(['test.ping']);
      expect(socksProxy.targets).toEqual([`127.0.0.1:${port}`]);
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});

describe('POST /api/settings/proxy/test', () => {
  it('reports a reachable target with its status and latency', async () => {
    const r = await router.manage('POST', '/api/settings/proxy/test', { url: httpProxy.url, target: `${mock.openaiBase}/models` });
    expect(r.status).toBe(200);
    expect(r.json).toMatchObject({ ok: true, status: 200, via: httpProxy.url });
    expect(r.json.latencyMs).toBeGreaterThanOrEqual(0);
    expect(httpProxy.requests).toEqual(['GET /v1/models']);
    tunnelsToMock(httpProxy);
  });

  it('reports a refused HTTP proxy in words', async () => {
    const port = await closedPort();
    const r = await router.manage('POST', '/api/settings/proxy/test', { url: `http://127.0.0.1:${port}`, target: `${mock.openaiBase}/models` });
    expect(r.status).toBe(200);
    expect(r.json.ok).toBe(false);
    expect(r.json.error).toBe(`the proxy http://127.0.0.1:${port} refused the connection (is it running on that port?)`);
  });

  it('reports a refused SOCKS5 proxy in words', async () => {
    const port = await closedPort();
    const r = await router.manage('POST', '/api/settings/proxy/test', { url: `socks5://127.0.0.1:${port}`, target: `${mock.openaiBase}/models` });
    expect(r.json.ok).toBe(false);
    expect(r.json.error).toBe(`SOCKS5 proxy socks5://127.0.0.1:${port}: the proxy refused the connection (is it running?)`);
  });

  it('reports a destination the proxy cannot reach', async () => {
    const port = await closedPort();
    const http = await router.manage('POST', '/api/settings/proxy/test', { url: httpProxy.url, target: `http://127.0.0.1:${port}/` });
    expect(http.json).toMatchObject({ ok: false, error: `the proxy ${httpProxy.url} refused to open a tunnel to 127.0.0.1:${port} (HTTP 502)` });
    const socks = await router.manage('POST', '/api/settings/proxy/test', { url: socksProxy.url, target: `http://127.0.0.1:${port}/` });
    expect(socks.json).toMatchObject({ ok: false, error: `SOCKS5 proxy ${socksProxy.url}: the proxy could not reach the destination (ConnectionRefused)` });
  });

  it('uses the configured proxy when none is given, and refuses bad input with a 400', async () => {
    await setProxy({ url: socksProxy.url, noProxy: [], perProvider: {} });
    const r = await router.manage('POST', '/api/settings/proxy/test', { target: `${mock.openaiBase}/models` });
    expect(r.json).toMatchObject({ ok: true, status: 200, via: socksProxy.url });
    expect(socksProxy.requests).toEqual(['GET /v1/models']);
    const bad = await router.manage('POST', '/api/settings/proxy/test', { target: 'file:///etc/passwd' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.type).toBeTruthy();
  });
});

describe('outbound proxy (environment)', () => {
  it('honours HTTP_PROXY when no setting is given, and NO_PROXY excludes', async () => {
    // upstream.test exists only in the proxy's own host table: the call works only through the proxy.
    const port = new URL(mock.url).port;
    const named = await startHttpConnectProxy({ hosts: { 'upstream.test': '127.0.0.1' } });
    const envRouter = await startRouter({ env: { HTTP_PROXY: named.url, NO_PROXY: 'excluded.test' } });
    try {
      const k = await envRouter.createKey();
      await envRouter.addConnection({ provider: 'openai', apiKey: 'sk-a', providerSpecificData: { baseUrl: `http://upstream.test:${port}/v1` } });
      await envRouter.addConnection({ provider: 'groq', apiKey: 'sk-b', providerSpecificData: { baseUrl: `http://excluded.test:${port}/v1` } });
      const send = (model: string) =>
        fetch(`${envRouter.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${k}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
        });
      expect((await send('openai/gpt-4o')).status).toBe(200);
      expect(named.targets).toEqual([`upstream.test:${port}`]);
      // Excluded: router connects itself and cannot resolve the name; the proxy never sees it.
      expect((await send('groq/llama-3.3-70b-versatile')).status).toBeGreaterThanOrEqual(500);
      expect(named.targets).toEqual([`upstream.test:${port}`]);
    } finally {
      await envRouter.stop();
      await named.close();
    }
  });
});
