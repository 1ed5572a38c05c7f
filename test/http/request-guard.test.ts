/**
 * The browser guard (src/daemon/http/request-guard.ts) against the real daemon over loopback: what a web
 * page could send (another Origin, Sec-Fetch-Site, a text/plain or form body, a body-less POST without a
 * JSON type, a rebinding Host) is refused on every kind of route, whatever credential it carries, while
 * clients that are not browsers (curl, SDKs with a key, the CLI) keep working. Requests are written with
 * node:http so that Host and every other header are exactly what the test says.
 */
import { request as httpRequest } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DaemonClient } from '../../src/cli/client.js';
import { hostAllowed, isJsonMediaType } from '../../src/daemon/http/request-guard.js';
import type { Services } from '../../src/daemon/services.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

interface Reply {
  status: number;
  headers: import('node:http').IncomingHttpHeaders;
  text: string;
  json: any;
}

let router: RouterProcess;
let mock: MockUpstream;
let manageKey: string;
let proxyKey: string;
const PASSWORD = 'owner-password-123';

function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(`${router.url}${path}`, { method, headers: { ...headers, ...(body !== undefined ? { 'content-length': String(Buffer.byteLength(body)) } : {}) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode!, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

const JSON_TYPE = { 'content-type': 'application/json' };
const keyBody = (name: string) => JSON.stringify({ name, scopes: ['proxy', 'manage'] });
const ownOrigin = () => router.url;
const hostHeader = () => `127.0.0.1:${router.port}`;

async function keyNames(): Promise<string[]> {
  const r = await router.manage('GET', '/api/keys');
  return (r.json.keys as { name: string }[]).map((k) => k.name);
}

function expectRefused(r: Reply, status: number, pattern: RegExp): void {
  expect(r.status, r.text).toBe(status);
  expect(r.json?.error?.message, r.text).toMatch(pattern);
}

beforeAll(async () => {
  [router, mock] = await Promise.all([startRouter(), startMockUpstream()]);
  await router.addConnection({ provider: 'openai', name: 'main', apiKey: 'sk-guard-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
  manageKey = await router.createKey(['manage']);
  proxyKey = await router.createKey(['proxy']);
  expect((await router.manage('PUT', '/api/auth/password', { password: PASSWORD })).status).toBe(204);
  expect((await router.manage('PATCH', '/api/settings', { requireLogin: false })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await Promise.all([router?.stop(), mock?.close()]);
});

describe('JSON bodies and state-changing requests need Content-Type application/json', () => {
  it('a JSON body sent as text/plain, text/plain; x=json, a form, or with no type creates no key (415)', async () => {
    for (const type of ['text/plain', 'text/plain; x=json', 'text/plain;charset=json', 'application/x-www-form-urlencoded', 'application/json-seq', undefined]) {
      const r = await send('POST', '/api/keys', type ? { 'content-type': type } : {}, keyBody(`pwned-type-${type}`));
      expectRefused(r, 415, /Content-Type must be application\/json/);
    }
    expect((await keyNames()).filter((n) => n.startsWith('pwned'))).toEqual([]);
  });

  it('a body-less POST (shutdown, resilience reset, webhook test) without the JSON type is refused; the daemon stays up', async () => {
    for (const type of [undefined, 'application/x-www-form-urlencoded', 'multipart/form-data; boundary=x', 'text/plain']) {
      const r = await send('POST', '/api/system/shutdown', type ? { 'content-type': type } : {});
      expectRefused(r, 415, /Content-Type must be application\/json/);
    }
    expectRefused(await send('POST', '/api/resilience/reset', { 'content-type': 'text/plain' }, '{}'), 415, /application\/json/);
    expectRefused(await send('POST', '/api/auth/logout', {}), 415, /application\/json/);
    expect((await send('GET', '/api/health', {})).status).toBe(200);
  });

  it('PUT and PATCH bodies too: the media type essence must be application/json', async () => {
    expectRefused(await send('PATCH', '/api/settings', { 'content-type': 'text/plain; x=json' }, '{"requireLogin":false}'), 415, /application\/json/);
    expectRefused(await send('PATCH', '/api/settings', {}, '{"requireLogin":false}'), 415, /application\/json/);
    // Parameters and case are allowed, as the media type grammar says.
    expect((await send('PATCH', '/api/settings', { 'content-type': 'Application/JSON; charset=utf-8' }, '{"requireLogin":false}')).status).toBe(200);
  });

  it('the proxy routes (fast path) refuse a text/plain or untyped chat request even with a valid key', async () => {
    const chat = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    for (const type of ['text/plain; x=json', 'text/plain', undefined]) {
      const r = await send('POST', '/v1/chat/completions', { authorization: `Bearer ${proxyKey}`, ...(type ? { 'content-type': type } : {}) }, chat);
      expectRefused(r, 415, /application\/json/);
    }
    const ok = await send('POST', '/v1/chat/completions', { authorization: `Bearer ${proxyKey}`, ...JSON_TYPE }, chat);
    expect(ok.status, ok.text).toBe(200);
  });
});

describe('a state-changing request from another origin is refused whatever it carries', () => {
  const foreign = ['http://127.0.0.1:8080', 'http://localhost:3000', 'https://evil.example', 'null'];

  it('Origin of another site or port: refused with no credential, a manage key, the CLI token or a session', async () => {
    const login = await send('POST', '/api/auth/login', JSON_TYPE, JSON.stringify({ password: PASSWORD }));
    expect(login.status, login.text).toBe(200);
    const cookie = /auth_token=[^;]+/.exec(String(login.headers['set-cookie']))![0];
    const credentials: Record<string, Record<string, string>> = {
      none: {},
      manageKey: { authorization: `Bearer ${manageKey}` },
      cliToken: { 'x-router-cli-token': router.cliToken },
      session: { cookie },
    };
    for (const origin of foreign) {
      for (const [name, creds] of Object.entries(credentials)) {
        const r = await send('POST', '/api/keys', { ...creds, ...JSON_TYPE, origin }, keyBody(`pwned-origin-${name}`));
        expectRefused(r, 403, /refused/);
      }
    }
    expectRefused(await send('POST', '/api/system/shutdown', { ...JSON_TYPE, origin: foreign[0]! }), 403, /refused/);
    expectRefused(await send('DELETE', `/api/keys/does-not-matter`, { origin: foreign[0]! }), 403, /refused/);
    expectRefused(
      await send('POST', '/v1/chat/completions', { authorization: `Bearer ${proxyKey}`, ...JSON_TYPE, origin: foreign[1]! }, '{}'),
      403,
      /refused/,
    );
    expect((await keyNames()).filter((n) => n.startsWith('pwned'))).toEqual([]);
  });

  it('no Origin but Sec-Fetch-Site cross-site or same-site: refused; same-origin and none pass', async () => {
    for (const site of ['cross-site', 'same-site']) {
      expectRefused(await send('POST', '/api/keys', { ...JSON_TYPE, 'sec-fetch-site': site }, keyBody(`pwned-site-${site}`)), 403, /another web site/);
    }
    for (const site of ['same-origin', 'none']) {
      expect((await send('POST', '/api/keys', { ...JSON_TYPE, 'sec-fetch-site': site }, keyBody(`site-${site}`))).status).toBe(201);
    }
  });

  it("router's own origins pass: the Host's own origin, the loopback names on its port, allowedOrigins", async () => {
    for (const origin of [ownOrigin(), `http://localhost:${router.port}`, `http://[::1]:${router.port}`]) {
      expect((await send('POST', '/api/resilience/reset', { ...JSON_TYPE, origin }, '{}')).status, origin).toBe(200);
    }
    expect((await send('POST', '/api/resilience/reset', { ...JSON_TYPE, host: `router.localhost:${router.port}`, origin: `http://router.localhost:${router.port}` }, '{}')).status).toBe(200);
    expectRefused(await send('POST', '/api/resilience/reset', { ...JSON_TYPE, origin: 'http://localhost:5173' }, '{}'), 403, /refused/);
    expect((await router.manage('PATCH', '/api/settings', { allowedOrigins: ['http://localhost:5173'] })).status).toBe(200);
    try {
      expect((await send('POST', '/api/resilience/reset', { ...JSON_TYPE, origin: 'http://localhost:5173' }, '{}')).status).toBe(200);
    } finally {
      await router.manage('PATCH', '/api/settings', { allowedOrigins: [] });
    }
  });

  it('GET requests from other origins are not state-changing and pass the Origin check (they cannot read the reply)', async () => {
    expect((await send('GET', '/api/health', { origin: 'http://127.0.0.1:8080' })).status).toBe(200);
  });
});

describe('Host must name this machine (DNS-rebinding guard) on every route', () => {
  const rebound = ['evil.example', `evil.example:${0}`, 'attacker.test:20128', '192.0.2.1', '[2001:db8::1]:80', 'localhost.evil.example', 'a:b:c'];

  it('management, public, client and proxy routes refuse a foreign Host, even with a valid credential', async () => {
    for (const host of rebound) {
      expectRefused(await send('GET', '/api/keys', { host }), 403, /is not allowed/);
      expectRefused(await send('GET', '/api/health', { host }), 403, /is not allowed/);
      expectRefused(await send('GET', '/v1/models', { host, authorization: `Bearer ${proxyKey}` }), 403, /is not allowed/);
      expectRefused(await send('GET', '/api/system/status', { host, 'x-router-cli-token': router.cliToken }), 403, /is not allowed/);
      expectRefused(await send('POST', '/api/keys', { host, ...JSON_TYPE }, keyBody('pwned-host')), 403, /is not allowed/);
    }
    const chat = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    expectRefused(await send('POST', '/v1/chat/completions', { host: 'evil.example', authorization: `Bearer ${proxyKey}`, ...JSON_TYPE }, chat), 403, /is not allowed/);
    expect((await keyNames()).filter((n) => n.startsWith('pwned'))).toEqual([]);
  });

  it('the live WebSocket upgrade refuses a foreign Host before the handshake', async () => {
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${router.url}/api/live`, {
        headers: {
          host: 'evil.example',
          connection: 'Upgrade',
          upgrade: 'websocket',
          'sec-websocket-version': '13',
          'sec-websocket-key': 'dGhlIHNhbXBsZSBub25jZQ==',
        },
      });
      req.on('upgrade', (_res, socket) => {
        socket.destroy();
        resolve(101);
      });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode!);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBe(403);
  });

  it('loopback names and addresses, with or without the port, pass', async () => {
    for (const host of [hostHeader(), `localhost:${router.port}`, 'localhost', `[::1]:${router.port}`, '127.0.0.2', `LOCALHOST:${router.port}`, `app.localhost:${router.port}`]) {
      expect((await send('GET', '/api/keys', { host })).status, host).toBe(200);
    }
  });
});

describe('clients that are not browsers keep working', () => {
  it('curl-like: loopback, requireLogin false, JSON type, no Origin creates a key', async () => {
    const r = await send('POST', '/api/keys', JSON_TYPE, keyBody('script'));
    expect(r.status, r.text).toBe(201);
  });

  it('SDK-like: a bearer key with application/json', async () => {
    const chat = JSON.stringify({ model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
    const r = await send('POST', '/v1/chat/completions', { authorization: `Bearer ${proxyKey}`, 'content-type': 'application/json; charset=utf-8' }, chat);
    expect(r.status, r.text).toBe(200);
  });

  it('the CLI client: body-less POSTs with the CLI token under requireLogin true', async () => {
    await router.manage('PATCH', '/api/settings', { requireLogin: true });
    try {
      const client = new DaemonClient({ url: router.url, cliToken: router.cliToken } as never);
      const w = await client.request<{ id: string }>('POST', '/api/webhooks', { url: 'https://hooks.example/router', events: ['test.ping'] });
      // Body-less POST: the daemon must see application/json from the CLI.
      await client.request('POST', `/api/webhooks/${w.id}/test`, undefined, 20_000).catch((e: Error) => {
        expect(e.message).not.toMatch(/Content-Type|415/);
      });
      expect((await send('POST', `/api/webhooks/${w.id}/test`, { 'x-router-cli-token': router.cliToken })).status).toBe(415);
    } finally {
      await router.manage('PATCH', '/api/settings', { requireLogin: false });
    }
  });
});

describe('the login throttle does not lock the owner out', () => {
  it("ten failed logins from a script do not stop the owner's browser from logging in", async () => {
    for (let i = 0; i < 10; i++) {
      expect((await send('POST', '/api/auth/login', JSON_TYPE, JSON.stringify({ password: `wrong-${i}` }))).status).toBe(401);
    }
    expect((await send('POST', '/api/auth/login', JSON_TYPE, JSON.stringify({ password: 'wrong-11' }))).status).toBe(429);
    const owner = await send('POST', '/api/auth/login', { ...JSON_TYPE, origin: ownOrigin(), 'sec-fetch-site': 'same-origin' }, JSON.stringify({ password: PASSWORD }));
    expect(owner.status, owner.text).toBe(200);
  });

  it("a page's login attempts are refused by the guard and never count", async () => {
    for (let i = 0; i < 15; i++) {
      const r = await send('POST', '/api/auth/login', { ...JSON_TYPE, origin: 'http://127.0.0.1:8080' }, JSON.stringify({ password: `guess-${i}` }));
      expect(r.status).toBe(403);
    }
    const owner = await send('POST', '/api/auth/login', { ...JSON_TYPE, origin: ownOrigin() }, JSON.stringify({ password: PASSWORD }));
    expect(owner.status, owner.text).toBe(200);
  });
});

describe('unit: the rules themselves', () => {
  const services = (host: string, port: number, allowedOrigins: string[] = []) =>
    ({ listen: { host, port, url: '' }, settings: { get: () => ({ allowedOrigins }) } }) as unknown as Services;

  it('isJsonMediaType takes the essence only', () => {
    for (const v of ['application/json', 'application/json; charset=utf-8', ' APPLICATION/JSON ;x=y']) expect(isJsonMediaType(v), v).toBe(true);
    for (const v of [null, '', 'text/plain; x=json', 'application/jsonx', 'application/json-patch+json', 'text/json', 'application/x-www-form-urlencoded']) {
      expect(isJsonMediaType(v), String(v)).toBe(false);
    }
  });

  it('hostAllowed: loopback always; the listen host; any IP literal only when listening on every address', () => {
    const lo = services('127.0.0.1', 20128);
    for (const h of ['127.0.0.1:20128', 'localhost', '[::1]', '127.9.9.9:1', 'x.localhost:5']) expect(hostAllowed(h, lo), h).toBe(true);
    for (const h of ['192.168.1.5:20128', 'mybox.lan:20128', 'evil.example', '', '[::1', 'a:b:c', 'localhost.evil.example']) expect(hostAllowed(h, lo), h).toBe(false);
    const lan = services('192.168.1.5', 20128);
    expect(hostAllowed('192.168.1.5:20128', lan)).toBe(true);
    expect(hostAllowed('192.168.1.6:20128', lan)).toBe(false);
    const any = services('0.0.0.0', 20128, ['http://mybox.lan:20128']);
    for (const h of ['192.168.1.6:20128', '[fe80::1]:20128', 'mybox.lan:20128']) expect(hostAllowed(h, any), h).toBe(true);
    expect(hostAllowed('evil.example:20128', any)).toBe(false);
  });
});
