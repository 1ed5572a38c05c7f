/**
 * The web dashboard over HTTP, against the real daemon: what the browser is served (CSP, no inline script,
 * compression, caching, deep links) and how its session is guarded (cookie flags, cross-origin writes,
 * the live WebSocket's Origin rule, the password-less session only for open loopback).
 */
import { readFileSync } from 'node:fs';
import { get as httpGet, type IncomingHttpHeaders } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { rawUpgrade } from '../usage/helpers.js';

const PASSWORD = 'dashboard-pass-123';
let router: RouterProcess;

async function login(origin?: string): Promise<Response> {
  return fetch(`${router.url}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(origin ? { origin } : {}) },
    body: JSON.stringify({ password: PASSWORD }),
  });
}

/** A GET whose body is read as sent (fetch would decode it). */
function rawGet(url: string, headers: Record<string, string>): Promise<{ headers: IncomingHttpHeaders; body: Buffer }> {
  return new Promise((resolve, reject) => {
    httpGet(url, { headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
    }).on('error', reject);
  });
}

function cookieOf(res: Response): string {
  const set = res.headers.get('set-cookie') ?? '';
  return set.split(';')[0]!;
}

/** Every script and style the HTML references, and whether any is inline. */
function scan(html: string): { scripts: string[]; inline: boolean } {
  const scripts = [...html.matchAll(/<script\b([^>]*)>([\s\S]*?)<\/script>/gi)];
  const inline =
    scripts.some((m) => !/\bsrc=/.test(m[1]!) || m[2]!.trim() !== '') || /<style\b/i.test(html) || /\son[a-z]+\s*=/i.test(html) || /javascript:/i.test(html);
  return { scripts: scripts.map((m) => /\bsrc="([^"]+)"/.exec(m[1]!)?.[1] ?? ''), inline };
}

beforeAll(async () => {
  router = await startRouter();
  const r = await router.manage('PUT', '/api/auth/password', { password: PASSWORD });
  expect(r.status).toBe(204);
});
afterAll(() => router?.stop());

describe('the dashboard page', () => {
  it('is served at / and at deep links with a CSP that allows no inline script, no framing, nosniff', async () => {
    for (const path of ['/', '/dashboard', '/dashboard/requests/some-trace-id']) {
      const res = await fetch(`${router.url}${path}`);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/^text\/html/);
      const csp = res.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("script-src 'self'");
      expect(csp).not.toMatch(/unsafe-inline|unsafe-eval|https?:/);
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).toContain("default-src 'none'");
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('cache-control')).toBe('no-cache');
      const html = await res.text();
      const { scripts, inline } = scan(html);
      expect(inline, 'inline script, style or handler in the HTML').toBe(false);
      expect(scripts.length).toBeGreaterThan(0);
      // Same origin only: no CDN, no external fonts.
      expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
    }
  });

  it('serves hashed assets compressed (br, gzip) with immutable caching; the first load is under 300 KB compressed', async () => {
    const html = await (await fetch(`${router.url}/`)).text();
    const urls = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+)"/g)].map((m) => m[1]!);
    expect(urls.some((u) => u.endsWith('.js'))).toBe(true);
    let total = 0;
    for (const u of urls) {
      const br = await fetch(`${router.url}${u}`, { headers: { 'accept-encoding': 'br' } });
      expect(br.status).toBe(200);
      expect(br.headers.get('content-encoding')).toBe('br');
      expect(br.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect(br.headers.get('vary')).toBe('Accept-Encoding');
      total += Number(br.headers.get('content-length'));
      await br.arrayBuffer();
      // gzip for clients without brotli; the bytes decode to the file on disk.
      const gz = await rawGet(`${router.url}${u}`, { 'accept-encoding': 'gzip' });
      expect(gz.headers['content-encoding']).toBe('gzip');
      const raw = gz.body;
      const onDisk = readFileSync(new URL(`../../dist/dashboard${u}`, import.meta.url));
      expect(raw.length < onDisk.length && gunzipSync(raw).equals(onDisk)).toBe(true);
    }
    expect(total).toBeLessThan(300 * 1024);
    const etag = (await fetch(`${router.url}${urls[0]}`)).headers.get('etag')!;
    expect((await fetch(`${router.url}${urls[0]}`, { headers: { 'if-none-match': etag } })).status).toBe(304);
    const missing = await fetch(`${router.url}/assets/nope.js`);
    expect(missing.status).toBe(404);
    expect((await missing.json()).error.message).toBe('No such dashboard asset.');
  });
});

describe('the dashboard session', () => {
  it('login sets auth_token HttpOnly, SameSite=Strict, path /, not Secure over plain HTTP; a wrong password is 401', async () => {
    const bad = await fetch(`${router.url}/api/auth/login`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"password":"nope-nope"}' });
    expect(bad.status).toBe(401);
    const res = await login(router.url);
    expect(res.status).toBe(200);
    const set = res.headers.get('set-cookie') ?? '';
    expect(set).toMatch(/^auth_token=[A-Za-z0-9_-]{20,};/);
    expect(set).toMatch(/;\s*HttpOnly/i);
    expect(set).toMatch(/;\s*SameSite=Strict/i);
    expect(set).toMatch(/;\s*Path=\//i);
    expect(set).not.toMatch(/;\s*Secure/i);
    expect(set).toMatch(/Max-Age=604800/);
  });

  it('refuses a cross-origin POST that carries a valid session cookie, and a non-JSON POST', async () => {
    const cookie = cookieOf(await login(router.url));
    const before = (await router.manage('GET', '/api/keys')).json.keys.length;
    const foreign = await fetch(`${router.url}/api/keys`, {
      method: 'POST',
      headers: { cookie, origin: 'http://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'forged' }),
    });
    expect(foreign.status).toBe(403);
    const form = await fetch(`${router.url}/api/keys`, {
      method: 'POST',
      headers: { cookie, origin: router.url, 'content-type': 'text/plain' },
      body: JSON.stringify({ name: 'forged' }),
    });
    expect(form.status).toBe(415);
    expect((await router.manage('GET', '/api/keys')).json.keys.length).toBe(before);
    // The same request from the dashboard's own origin works.
    const own = await fetch(`${router.url}/api/keys`, {
      method: 'POST',
      headers: { cookie, origin: router.url, 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'from-dashboard' }),
    });
    expect(own.status).toBe(201);
  });

  it('the live WebSocket refuses a foreign Origin even with a valid session, and accepts the dashboard origin', async () => {
    const cookie = cookieOf(await login(router.url));
    const foreign = await rawUpgrade(router.url, '/api/live', { cookie, origin: 'http://evil.example' });
    expect(foreign.status).toBe(403);
    const own = await rawUpgrade(router.url, '/api/live', { cookie, origin: router.url });
    expect(own.status).toBe(101);
    own.socket?.destroy();
    const none = await rawUpgrade(router.url, '/api/live', { origin: router.url });
    expect(none.status).toBe(401);
  });

  it('logout ends the session: the cookie no longer opens management routes', async () => {
    const cookie = cookieOf(await login(router.url));
    expect((await fetch(`${router.url}/api/keys`, { headers: { cookie } })).status).toBe(200);
    const out = await fetch(`${router.url}/api/auth/logout`, { method: 'POST', headers: { cookie, origin: router.url, 'content-type': 'application/json' } });
    expect(out.status).toBe(200);
    expect(out.headers.get('set-cookie')).toMatch(/auth_token=;.*Max-Age=0/i);
    expect((await fetch(`${router.url}/api/keys`, { headers: { cookie } })).status).toBe(401);
  });

  it('a password-less session is opened only for loopback while requireLogin is off', async () => {
    const ask = () => fetch(`${router.url}/api/auth/session`, { method: 'POST', headers: { origin: router.url, 'content-type': 'application/json' } });
    expect((await ask()).status).toBe(401);
    // A CLI token is management authority too, but not the open-loopback case: no session for it.
    const cli = await fetch(`${router.url}/api/auth/session`, { method: 'POST', headers: { 'x-router-cli-token': router.cliToken, 'content-type': 'application/json' } });
    expect(cli.status).toBe(403);
    expect((await router.manage('PATCH', '/api/settings', { requireLogin: false })).status).toBe(200);
    try {
      const res = await ask();
      expect(res.status).toBe(200);
      const cookie = cookieOf(res);
      expect(res.headers.get('set-cookie')).toMatch(/HttpOnly/i);
      // The session opens client routes (the playground), which never accept "no credential".
      const presets = await fetch(`${router.url}/api/playground/presets`, { headers: { cookie } });
      expect(presets.status).toBe(200);
      expect((await fetch(`${router.url}/api/playground/presets`)).status).toBe(401);
    } finally {
      await router.manage('PATCH', '/api/settings', { requireLogin: true });
    }
  });
});
