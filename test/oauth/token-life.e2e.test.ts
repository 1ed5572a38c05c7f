/**
 * Token life end to end (issue 18 item 3; spec "Provider connection" states, Authentication 8): the real
 * daemon refreshes a token about to expire before sending (one refresh however many requests wait,
 * rotation stored), never expires a connection on a failed refresh, and marks it expired only when an
 * upstream-confirmed auth failure survives the refresh and the recovery check.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { mockEndpoints, startOAuthMock, type OAuthMock } from '../mocks/oauth.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let router: RouterProcess;
let oauth: OAuthMock;
let api: MockUpstream;
let key: string;

beforeAll(async () => {
  oauth = await startOAuthMock();
  api = await startMockUpstream();
  router = await startRouter();
  key = await router.createKey();
  await router.manage('PATCH', '/api/settings', { oauthEndpoints: { 'claude-code': mockEndpoints(oauth, api.anthropicBase) } });
});

afterAll(async () => {
  await router?.stop();
  await api?.close();
  await oauth?.close();
});

beforeEach(() => {
  api.reset();
  oauth.refreshCalls = 0;
  oauth.refreshFailStatus = undefined;
  oauth.options.refreshDelayMs = undefined;
  oauth.options.expiresIn = undefined;
});

function chat(): Promise<Response> {
  return fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model: 'claude-code/claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hi' }] }),
  });
}

/** A Claude login through authorize + exchange (the pasted-code path); its access token lives `expiresIn` s. */
async function login(expiresIn: number): Promise<{ id: string; accessToken: string }> {
  const before = new Set(oauth.validAccess);
  oauth.options.expiresIn = expiresIn;
  const a = (await router.manage('GET', '/api/oauth/claude-code/authorize')).json;
  expect(a.redirectUri).toBe('https://console.anthropic.com/oauth/code/callback');
  const consent = await fetch(a.authUrl, { redirect: 'manual' });
  const code = new URL(consent.headers.get('location')!).searchParams.get('code')!;
  // Claude's console shows `code#state`; that form alone is enough.
  const r = await router.manage('POST', '/api/oauth/claude-code/exchange', { code: `${code}#${a.state}` });
  expect(r.status).toBe(201);
  oauth.options.expiresIn = undefined;
  const accessToken = [...oauth.validAccess].find((t) => !before.has(t))!;
  return { id: r.json.connection.id, accessToken };
}

async function connection(id: string): Promise<any> {
  return (await router.manage('GET', `/api/providers/${id}`)).json;
}

async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, ms = 5000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('refresh before expiry', () => {
  it('10 concurrent requests on a token about to expire make one refresh call; all go out with the new token; rotation is kept', async () => {
    const { id } = await login(120); // inside the 5-minute refresh window
    oauth.options.refreshDelayMs = 300;
    const replies = await Promise.all(Array.from({ length: 10 }, () => chat()));
    expect(replies.map((r) => r.status)).toEqual(Array(10).fill(200));
    expect(oauth.refreshCalls).toBe(1);
    const first = oauth.requests.filter((q) => q.fields.grant_type === 'refresh_token').at(-1)!;
    const sent = api.requests.filter((q) => q.endpoint === 'anthropic.messages');
    expect(sent).toHaveLength(10);
    const tokens = new Set(sent.map((q) => q.headers.authorization));
    expect(tokens.size).toBe(1);
    expect([...tokens][0]).toMatch(/^Bearer refreshed-at-\d+$/);
    const after = await connection(id);
    expect(Date.parse(after.expiresAt)).toBeGreaterThan(Date.now() + 50 * 60_000);
    expect(after.providerSpecificData.lastRefreshedAt).toBeTruthy();
    expect(after.isActive).toBe(true);
    // The next refresh presents the rotated refresh token (the mock refuses a used one).
    await router.manage('PUT', `/api/providers/${id}`, { expiresAt: new Date(Date.now() + 60_000).toISOString() });
    expect((await chat()).status).toBe(200);
    expect(oauth.refreshCalls).toBe(2);
    const second = oauth.requests.filter((q) => q.fields.grant_type === 'refresh_token').at(-1)!;
    expect(second.fields.refresh_token).not.toBe(first.fields.refresh_token);
    expect(String(second.fields.refresh_token)).toMatch(/^refreshed-rt-\d+$/);
    expect(api.requests.at(-1)!.headers.authorization).not.toBe([...tokens][0]);
    await router.manage('DELETE', `/api/providers/${id}`);
  });

  it('a failed refresh before a request never expires the connection; the request uses the current token', async () => {
    const { id, accessToken } = await login(120);
    oauth.refreshFailStatus = 503;
    const r = await chat();
    expect(r.status).toBe(200);
    expect(oauth.refreshCalls).toBe(1);
    expect(api.requests.at(-1)!.headers.authorization).toBe(`Bearer ${accessToken}`);
    const after = await connection(id);
    expect(after.isActive).toBe(true);
    expect(after.testStatus).not.toBe('expired');
    await router.manage('DELETE', `/api/providers/${id}`);
  });
});

describe('reactive path', () => {
  it('an auth failure whose refresh succeeds keeps the connection active with the new token', async () => {
    const { id, accessToken } = await login(3600);
    const off = api.handle((q) => (q.headers.authorization === `Bearer ${accessToken}` ? { type: 'status', status: 401 } : undefined));
    // The upstream refusing the token is router's problem, not the client's key: 502 upstream_auth_failed.
    expect((await chat()).status).toBe(502);
    const after = await until(() => connection(id), (c) => c.providerSpecificData.lastRefreshedAt !== undefined && oauth.refreshCalls === 1);
    expect(oauth.refreshCalls).toBe(1);
    expect(after.isActive).toBe(true);
    expect((await chat()).status).toBe(200);
    off();
    await router.manage('DELETE', `/api/providers/${id}`);
  });

  it('expired (testStatus expired, isActive false) only when the refresh and the recovery check fail too', async () => {
    const { id } = await login(3600);
    const off = api.handle(() => ({ type: 'status', status: 401 }));
    oauth.refreshFailStatus = 400;
    expect((await chat()).status).toBe(502);
    const after = await until(() => connection(id), (c) => c.testStatus === 'expired');
    expect(after).toMatchObject({ testStatus: 'expired', isActive: false });
    expect(oauth.refreshCalls).toBe(1);
    // The recovery check asked the API itself (the model list) before deciding.
    expect(api.requests.some((q) => q.method === 'GET' && q.path === '/v1/models')).toBe(true);
    off();
  });
});
