/**
 * The central authorization pipeline, in-process through `app.request(url, init, context)`. The caller's
 * address comes from `context.remoteAddress` (see `remoteAddressOf`), so loopback and remote callers can be
 * played without sockets. Tiers that have no real route yet get a test-only route table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isLoopbackAddress } from '../../src/daemon/auth/pipeline.js';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import { createApp } from '../../src/daemon/http/app.js';
import { TIERS, type RouteDef, type Tier } from '../../src/daemon/http/routes.js';
import type { Services } from '../../src/daemon/services.js';

const LO = '127.0.0.1';
const REMOTE = '203.0.113.7';
const VERSION_HEADER = 'x-router-version';

let home: string;
let services: Services;
let tierApp: ReturnType<typeof createApp>;
let app: ReturnType<typeof buildApp>;
let proxyKey: string;
let manageKey: string;
let inactiveKey: string;
let sessionToken: string;

/** One GET route per tier, answering with how the pipeline authenticated the caller. */
const tierRoutes: RouteDef[] = TIERS.map((tier) => ({
  method: 'GET',
  path: `/test-only/${tier}`,
  tier,
  tag: 'test',
  summary: `test-only ${tier} route`,
  handler: ({ auth }) => ({ ok: true, via: auth.via }),
}));

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-auth-'));
  services = await bootServices({ home, host: LO, port: 0 });
  tierApp = createApp(tierRoutes, services);
  app = buildApp(services);
  proxyKey = (await services.keys.create('proxy-only', ['proxy'])).key;
  manageKey = (await services.keys.create('manage-only', ['manage'])).key;
  const inactive = await services.keys.create('inactive', ['proxy', 'manage']);
  await services.keys.update(inactive.id, { isActive: false });
  inactiveKey = inactive.key;
  sessionToken = (await services.sessions.create()).token;
});

afterAll(() => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
});

interface Caller {
  addr: string;
  headers: () => Record<string, string>;
}

const bearer = (k: () => string) => () => ({ authorization: `Bearer ${k()}` });

const CALLERS: Record<string, Caller> = {
  'anon@lo': { addr: LO, headers: () => ({}) },
  'anon@remote': { addr: REMOTE, headers: () => ({}) },
  'badkey@lo': { addr: LO, headers: bearer(() => 'rk_this-key-does-not-exist-0000000000000000000') },
  'badkey@remote': { addr: REMOTE, headers: bearer(() => 'rk_this-key-does-not-exist-0000000000000000000') },
  'inactivekey@lo': { addr: LO, headers: bearer(() => inactiveKey) },
  'proxykey@lo': { addr: LO, headers: bearer(() => proxyKey) },
  'proxykey@remote': { addr: REMOTE, headers: bearer(() => proxyKey) },
  'managekey@lo': { addr: LO, headers: bearer(() => manageKey) },
  'managekey@remote': { addr: REMOTE, headers: bearer(() => manageKey) },
  'session@lo': { addr: LO, headers: () => ({ cookie: `auth_token=${sessionToken}` }) },
  'session@remote': { addr: REMOTE, headers: () => ({ cookie: `auth_token=${sessionToken}` }) },
  'cli@lo': { addr: LO, headers: () => ({ 'x-router-cli-token': services.cliToken }) },
  'cli@remote': { addr: REMOTE, headers: () => ({ 'x-router-cli-token': services.cliToken }) },
  'badcli@lo': { addr: LO, headers: () => ({ 'x-router-cli-token': 'not-the-token' }) },
};
type CallerName = keyof typeof CALLERS;

/** Expected status per caller and tier with default settings (requireLogin true, copilot opt-in off). */
const EXPECTED: Record<Tier, Record<CallerName, number>> = {
  public: Object.fromEntries(Object.keys(CALLERS).map((c) => [c, 200])),
  client: {
    'anon@lo': 401, 'anon@remote': 401, 'badkey@lo': 401, 'badkey@remote': 401, 'inactivekey@lo': 401,
    'proxykey@lo': 200, 'proxykey@remote': 200, 'managekey@lo': 403, 'managekey@remote': 403,
    'session@lo': 200, 'session@remote': 200, 'cli@lo': 401, 'cli@remote': 403, 'badcli@lo': 401,
  },
  management: {
    'anon@lo': 401, 'anon@remote': 401, 'badkey@lo': 401, 'badkey@remote': 401, 'inactivekey@lo': 401,
    'proxykey@lo': 403, 'proxykey@remote': 403, 'managekey@lo': 200, 'managekey@remote': 200,
    'session@lo': 200, 'session@remote': 200, 'cli@lo': 200, 'cli@remote': 403, 'badcli@lo': 401,
  },
  local: {
    'anon@lo': 401, 'anon@remote': 403, 'badkey@lo': 401, 'badkey@remote': 403, 'inactivekey@lo': 401,
    'proxykey@lo': 403, 'proxykey@remote': 403, 'managekey@lo': 200, 'managekey@remote': 403,
    'session@lo': 200, 'session@remote': 403, 'cli@lo': 200, 'cli@remote': 403, 'badcli@lo': 401,
  },
  spawn: {
    'anon@lo': 401, 'anon@remote': 403, 'badkey@lo': 401, 'badkey@remote': 403, 'inactivekey@lo': 401,
    'proxykey@lo': 403, 'proxykey@remote': 403, 'managekey@lo': 403, 'managekey@remote': 403,
    'session@lo': 200, 'session@remote': 403, 'cli@lo': 200, 'cli@remote': 403, 'badcli@lo': 401,
  },
  copilot: {
    'anon@lo': 401, 'anon@remote': 403, 'badkey@lo': 401, 'badkey@remote': 403, 'inactivekey@lo': 401,
    'proxykey@lo': 403, 'proxykey@remote': 403, 'managekey@lo': 200, 'managekey@remote': 403,
    'session@lo': 200, 'session@remote': 403, 'cli@lo': 200, 'cli@remote': 403, 'badcli@lo': 401,
  },
  // Management unless the metricsOpenOnLoopback opt-in is on (test/observability/metrics.test.ts).
  metrics: {
    'anon@lo': 401, 'anon@remote': 401, 'badkey@lo': 401, 'badkey@remote': 401, 'inactivekey@lo': 401,
    'proxykey@lo': 403, 'proxykey@remote': 403, 'managekey@lo': 200, 'managekey@remote': 200,
    'session@lo': 200, 'session@remote': 200, 'cli@lo': 200, 'cli@remote': 403, 'badcli@lo': 401,
  },
};

const ERROR_TYPES: Record<number, string> = { 401: 'authentication_error', 403: 'permission_error', 429: 'rate_limit_error' };

/** Asserts the standard error body `{error:{message,type,code}}` for a status. */
function expectErrorBody(body: unknown, status: number): void {
  expect(body).toEqual({ error: expect.objectContaining({ message: expect.any(String), type: expect.any(String), code: expect.any(String) }) });
  const err = (body as { error: { message: string; type: string } }).error;
  expect(err.message.length).toBeGreaterThan(0);
  if (ERROR_TYPES[status]) expect(err.type).toBe(ERROR_TYPES[status]);
}

async function call(target: { request: typeof app.request }, path: string, caller: Caller, init: RequestInit = {}) {
  const headers = { ...caller.headers(), ...(init.headers as Record<string, string> | undefined) };
  const res = await target.request(`http://router.test${path}`, { ...init, headers }, { remoteAddress: caller.addr });
  const text = await res.text();
  return { res, status: res.status, body: text ? JSON.parse(text) : undefined };
}

/** Calls one tier's route as every caller; returns statuses, checking every error body on the way. */
async function statusTable(tier: Tier): Promise<Record<string, number>> {
  const out: Record<string, number> = {};
  for (const [name, caller] of Object.entries(CALLERS)) {
    const { res, status, body } = await call(tierApp, `/test-only/${tier}`, caller);
    out[name] = status;
    expect(res.headers.get(VERSION_HEADER), `${tier} ${name}`).toBeTruthy();
    if (status >= 400) expectErrorBody(body, status);
    else expect(body.ok).toBe(true);
  }
  return out;
}

describe('authorization tiers x callers', () => {
  it.each(TIERS)('%s tier with requireLogin on (default)', async (tier) => {
    expect(services.settings.get().requireLogin).toBe(true);
    expect(await statusTable(tier)).toEqual(EXPECTED[tier]);
  });

  it('reports how each caller was authenticated', async () => {
    const via = async (tier: Tier, caller: CallerName) => (await call(tierApp, `/test-only/${tier}`, CALLERS[caller]!)).body.via;
    expect(await via('public', 'anon@remote')).toBe('none');
    expect(await via('client', 'proxykey@remote')).toBe('api-key');
    expect(await via('management', 'managekey@remote')).toBe('api-key');
    expect(await via('management', 'session@remote')).toBe('session');
    expect(await via('management', 'cli@lo')).toBe('cli-token');
  });

  it('requireLogin false opens management tiers to loopback callers without a credential, never to remote ones', async () => {
    await services.settings.update({ requireLogin: false });
    try {
      const open = { ...EXPECTED };
      for (const tier of ['management', 'local', 'spawn', 'copilot', 'metrics'] as const) {
        open[tier] = { ...EXPECTED[tier], 'anon@lo': 200 };
      }
      for (const tier of TIERS) {
        const table = await statusTable(tier);
        delete table['badcli@lo']; // a wrong CLI token counts as no credential; see the report
        const { 'badcli@lo': _skip, ...expected } = open[tier];
        expect(table, tier).toEqual(expected);
      }
      const res = await call(tierApp, '/test-only/management', CALLERS['anon@lo']!);
      expect(res.body.via).toBe('open-loopback');
      // Real management routes too.
      expect((await call(app, '/api/keys', CALLERS['anon@lo']!)).status).toBe(200);
      expect((await call(app, '/api/keys', CALLERS['anon@remote']!)).status).toBe(401);
    } finally {
      await services.settings.update({ requireLogin: true });
    }
    expect((await call(app, '/api/keys', CALLERS['anon@lo']!)).status).toBe(401);
  });

  it('metrics: every loopback caller, credential or not, with the metricsOpenOnLoopback opt-in; remote ones as before', async () => {
    await services.settings.update({ metricsOpenOnLoopback: true });
    try {
      const table = await statusTable('metrics');
      const expected = { ...EXPECTED.metrics };
      for (const name of Object.keys(CALLERS)) if (CALLERS[name]!.addr === LO) expected[name] = 200;
      expect(table).toEqual(expected);
      expect((await call(tierApp, '/test-only/metrics', CALLERS['anon@lo']!)).body.via).toBe('open-loopback');
    } finally {
      await services.settings.update({ metricsOpenOnLoopback: false });
    }
  });

  it('copilot: a manage-scope key from a remote caller only with the copilotAllowManageKey opt-in', async () => {
    await services.settings.update({ copilotAllowManageKey: true });
    try {
      const statuses: Record<string, number> = {};
      for (const name of ['managekey@remote', 'managekey@lo', 'proxykey@remote', 'session@remote', 'anon@remote', 'cli@remote'] as const) {
        statuses[name] = (await call(tierApp, '/test-only/copilot', CALLERS[name]!)).status;
      }
      expect(statuses).toEqual({
        'managekey@remote': 200,
        'managekey@lo': 200,
        'proxykey@remote': 403,
        'session@remote': 403,
        'anon@remote': 403,
        'cli@remote': 403,
      });
      // The opt-in does not reach spawn or local routes.
      expect((await call(tierApp, '/test-only/spawn', CALLERS['managekey@remote']!)).status).toBe(403);
      expect((await call(tierApp, '/test-only/local', CALLERS['managekey@remote']!)).status).toBe(403);
    } finally {
      await services.settings.update({ copilotAllowManageKey: false });
    }
  });

  it('loopback means 127/8, ::1 and their IPv4-mapped forms; nothing else', () => {
    for (const a of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1']) expect(isLoopbackAddress(a), a).toBe(true);
    for (const a of ['', '10.0.0.1', '::ffff:10.0.0.1', '0.0.0.0', '::', '128.0.0.1', 'localhost', '127.0.0.1.evil']) {
      expect(isLoopbackAddress(a), a).toBe(false);
    }
  });

  it('X-Forwarded-For cannot make a remote caller loopback', async () => {
    const spoof = { ...CALLERS['anon@remote']!, headers: () => ({ 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '127.0.0.1' }) };
    expect((await call(tierApp, '/test-only/local', spoof)).status).toBe(403);
  });
});

describe('API keys as client credentials', () => {
  const remote = (headers: Record<string, string>): Caller => ({ addr: REMOTE, headers: () => headers });

  it('accepts Authorization: Bearer, x-api-key and x-goog-api-key', async () => {
    for (const h of [{ authorization: `Bearer ${proxyKey}` }, { 'x-api-key': proxyKey }, { 'x-goog-api-key': proxyKey }]) {
      const r = await call(tierApp, '/test-only/client', remote(h as unknown as Record<string, string>));
      expect(r.status, JSON.stringify(Object.keys(h))).toBe(200);
      expect(r.body.via).toBe('api-key');
    }
    // x-api-key carries a manage key to management routes as well.
    expect((await call(app, '/api/keys', remote({ 'x-api-key': manageKey }))).status).toBe(200);
  });

  it('never reads a key from the query string', async () => {
    for (const q of ['key', 'api_key', 'apiKey', 'access_token', 'token']) {
      const client = await call(tierApp, `/test-only/client?${q}=${encodeURIComponent(proxyKey)}`, remote({}));
      expect(client.status, q).toBe(401);
      expectErrorBody(client.body, 401);
      const mgmt = await call(app, `/api/keys?${q}=${encodeURIComponent(manageKey)}`, remote({}));
      expect(mgmt.status, q).toBe(401);
    }
  });

  it('a deactivated key is refused until reactivated; a deleted key is refused', async () => {
    const cli = CALLERS['cli@lo']!;
    const created = await call(app, '/api/keys', cli, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'toggle', scopes: ['proxy', 'manage'] }),
    });
    expect(created.status).toBe(201);
    const { id, key } = created.body as { id: string; key: string };
    const use = async () => (await call(tierApp, '/test-only/client', remote({ authorization: `Bearer ${key}` }))).status;
    const patch = (isActive: boolean) =>
      call(app, `/api/keys/${id}`, cli, { method: 'PATCH', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ isActive }) });

    expect(await use()).toBe(200);
    const off = await patch(false);
    expect(off.status).toBe(200);
    expect(off.body.isActive).toBe(false);
    expect(await use()).toBe(401);
    expect((await call(app, '/api/keys', remote({ authorization: `Bearer ${key}` }))).status).toBe(401);
    expect((await patch(true)).status).toBe(200);
    expect(await use()).toBe(200);
    expect((await call(app, `/api/keys/${id}`, cli, { method: 'DELETE' })).status).toBe(204);
    expect(await use()).toBe(401);
  });

  it('the CLI token from a non-loopback caller is refused with 403, even beside a valid key', async () => {
    const r = await call(app, '/api/keys', {
      addr: '10.0.0.5',
      headers: () => ({ 'x-router-cli-token': services.cliToken, authorization: `Bearer ${manageKey}` }),
    });
    expect(r.status).toBe(403);
    expectErrorBody(r.body, 403);
    expect(r.body.error.message).toMatch(/loopback/i);
  });
});

describe('dashboard password, login and logout', () => {
  const PASSWORD = 'correct horse battery';
  const json = (body: unknown): RequestInit => ({ method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const from = (addr: string, headers: Record<string, string> = {}): Caller => ({ addr, headers: () => headers });
  const setPassword = (caller: Caller, password: string) =>
    call(app, '/api/auth/password', caller, { ...json({ password }), method: 'PUT' });

  it('PUT /api/auth/password is local tier: CLI token on loopback only', async () => {
    expect((await setPassword(CALLERS['anon@lo']!, PASSWORD)).status).toBe(401);
    expect((await setPassword(CALLERS['cli@remote']!, PASSWORD)).status).toBe(403);
    expect((await setPassword(CALLERS['managekey@remote']!, PASSWORD)).status).toBe(403);
    expect((await setPassword(CALLERS['cli@lo']!, 'short')).status).toBe(400);
    const ok = await setPassword(CALLERS['cli@lo']!, PASSWORD);
    expect(ok.status).toBe(204);
    expect((await call(app, '/api/auth/status', from(REMOTE))).body).toEqual({ requireLogin: true, passwordSet: true });
  });

  it('wrong password 401; right password sets an HttpOnly SameSite=Strict auth_token that opens management; logout revokes it', async () => {
    const addr = '198.51.100.20';
    const wrong = await call(app, '/api/auth/login', from(addr), json({ password: 'not it at all' }));
    expect(wrong.status).toBe(401);
    expectErrorBody(wrong.body, 401);
    expect(wrong.res.headers.get('set-cookie')).toBeNull();

    const right = await call(app, '/api/auth/login', from(addr), json({ password: PASSWORD }));
    expect(right.status).toBe(200);
    const setCookie = right.res.headers.get('set-cookie') ?? '';
    const m = /^auth_token=([^;]+)/.exec(setCookie);
    expect(m, setCookie).not.toBeNull();
    expect(setCookie).toMatch(/;\s*HttpOnly/i);
    expect(setCookie).toMatch(/;\s*SameSite=Strict/i);
    expect(setCookie).toMatch(/;\s*Path=\//i);
    const cookie = `auth_token=${m![1]}`;

    const withCookie = from(addr, { cookie });
    expect((await call(app, '/api/keys', withCookie)).status).toBe(200);
    expect((await call(app, '/api/settings', withCookie)).status).toBe(200);
    expect((await call(app, '/api/keys', from(addr, { cookie: 'auth_token=forged' }))).status).toBe(401);

    const out = await call(app, '/api/auth/logout', withCookie, { method: 'POST', headers: { 'content-type': 'application/json' } });
    expect(out.status).toBe(200);
    expect(out.res.headers.get('set-cookie') ?? '').toMatch(/auth_token=;|Max-Age=0|Expires=Thu, 01 Jan 1970/i);
    const after = await call(app, '/api/keys', withCookie);
    expect(after.status).toBe(401);
    expectErrorBody(after.body, 401);
  });

  it('setting the password ends every session', async () => {
    const addr = '198.51.100.21';
    const login = await call(app, '/api/auth/login', from(addr), json({ password: PASSWORD }));
    const cookie = /^auth_token=[^;]+/.exec(login.res.headers.get('set-cookie') ?? '')![0];
    expect((await call(app, '/api/keys', from(addr, { cookie }))).status).toBe(200);
    expect((await setPassword(CALLERS['cli@lo']!, PASSWORD)).status).toBe(204);
    expect((await call(app, '/api/keys', from(addr, { cookie }))).status).toBe(401);
  });

  it('the 11th failed login within a minute gets 429 with Retry-After; other addresses are unaffected', async () => {
    const addr = '198.51.100.99';
    for (let i = 1; i <= 10; i++) {
      const r = await call(app, '/api/auth/login', from(addr), json({ password: `wrong-${i}` }));
      expect(r.status, `attempt ${i}`).toBe(401);
    }
    const limited = await call(app, '/api/auth/login', from(addr), json({ password: 'wrong-11' }));
    expect(limited.status).toBe(429);
    expectErrorBody(limited.body, 429);
    const retry = Number(limited.res.headers.get('retry-after'));
    expect(Number.isInteger(retry)).toBe(true);
    expect(retry).toBeGreaterThanOrEqual(1);
    expect(retry).toBeLessThanOrEqual(60);
    // Even the right password waits out the window from that address...
    expect((await call(app, '/api/auth/login', from(addr), json({ password: PASSWORD }))).status).toBe(429);
    // ...while another address logs in normally.
    expect((await call(app, '/api/auth/login', from('198.51.100.100'), json({ password: PASSWORD }))).status).toBe(200);
  });
});
