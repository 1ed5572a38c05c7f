/**
 * The reactive expiry path for the Google logins (issue 18; spec "Provider connection" states): Code Assist
 * has no model list, so the recovery check after a failed refresh is `POST v1internal:loadCodeAssist` with
 * Gemini CLI's body. The mock (test/mocks/oauth.ts) routes only POSTs with JSON and checks that body, as
 * Google does, so a check sent any other way would never confirm a revoked login.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { mockEndpoints, startOAuthMock, type OAuthMock } from '../mocks/oauth.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { freePort } from '../support/cli.js';

let router: RouterProcess;
let oauth: OAuthMock;
let key: string;

beforeAll(async () => {
  oauth = await startOAuthMock();
  router = await startRouter();
  key = await router.createKey();
  const r = await router.manage('PATCH', '/api/settings', { oauthEndpoints: { 'gemini-cli': mockEndpoints(oauth), antigravity: mockEndpoints(oauth) } });
  expect(r.status).toBe(200);
});

afterAll(async () => {
  await router?.stop();
  await oauth?.close();
});

beforeEach(() => {
  oauth.refreshFailStatus = undefined;
  oauth.generateAuthFailures = 0;
  oauth.refreshCalls = 0;
});

function chat(model: string): Promise<Response> {
  return fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  });
}

/** A browser login through the loopback listener; returns the connection id and its access token. */
async function login(provider: string): Promise<{ id: string; accessToken: string }> {
  const before = new Set(oauth.validAccess);
  const port = await freePort();
  const start = await router.manage('GET', `/api/oauth/${provider}/start-callback-server?port=${port}`);
  expect(start.status).toBe(200);
  const consent = await fetch(start.json.authUrl, { redirect: 'manual' });
  const callback = new URL(consent.headers.get('location')!);
  callback.hostname = '127.0.0.1';
  expect((await fetch(callback)).status).toBe(200);
  const polled = await router.manage('POST', `/api/oauth/${provider}/poll-callback`, { state: start.json.state });
  expect(polled.json.status).toBe('complete');
  return { id: polled.json.connection.id, accessToken: [...oauth.validAccess].find((t) => !before.has(t))! };
}

async function connection(id: string): Promise<any> {
  return (await router.manage('GET', `/api/providers/${id}`)).json;
}

async function until<T>(what: () => Promise<T>, ok: (v: T) => boolean, ms = 15_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await what();
    if (ok(v) || Date.now() > end) return v;
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The recovery checks the mock received after `from` (loadCodeAssist calls with the given token). */
function checks(from: number, accessToken: string) {
  return oauth.requests.slice(from).filter((q) => q.path === '/v1internal:loadCodeAssist' && q.headers.authorization === `Bearer ${accessToken}`);
}

describe.each(['gemini-cli', 'antigravity'])('%s: reactive expiry through loadCodeAssist', (provider) => {
  it('a revoked login (generate 401, refresh refused, loadCodeAssist 401) is confirmed expired', async () => {
    const { id, accessToken } = await login(provider);
    const project = (await connection(id)).providerSpecificData.projectId;
    expect(project).toBeTruthy();
    const from = oauth.requests.length;
    oauth.validAccess.delete(accessToken); // Google revoked the grant: the token and the refresh token are refused.
    oauth.refreshFailStatus = 400;
    expect((await chat(`${provider}/gemini-2.5-pro`)).status).toBe(502);
    const after = await until(() => connection(id), (c) => c.testStatus === 'expired');
    expect(after).toMatchObject({ testStatus: 'expired', isActive: false });
    expect(oauth.refreshCalls).toBe(1);
    // The check was Gemini CLI's call: a POST with its JSON body naming the connection's project.
    const sent = checks(from, accessToken);
    expect(sent).toHaveLength(1);
    expect(sent[0]!.method).toBe('POST');
    expect(JSON.parse(sent[0]!.body)).toEqual({
      cloudaicompanionProject: project,
      metadata: { ideType: 'IDE_UNSPECIFIED', platform: 'PLATFORM_UNSPECIFIED', pluginType: 'GEMINI', duetProject: project },
    });
    await router.manage('DELETE', `/api/providers/${id}`);
  });

  it('a working login whose request was refused once stays active: the check answers 200', async () => {
    const { id, accessToken } = await login(provider);
    const from = oauth.requests.length;
    oauth.generateAuthFailures = 1;
    oauth.refreshFailStatus = 400;
    expect((await chat(`${provider}/gemini-2.5-pro`)).status).toBe(502);
    await until(async () => checks(from, accessToken).length, (n) => n === 1);
    expect(checks(from, accessToken)).toHaveLength(1);
    await new Promise((r) => setTimeout(r, 200));
    const after = await connection(id);
    expect(after.isActive).toBe(true);
    expect(after.testStatus).not.toBe('expired');
    oauth.refreshFailStatus = undefined;
    expect((await chat(`${provider}/gemini-2.5-pro`)).status).toBe(200);
    await router.manage('DELETE', `/api/providers/${id}`);
  });
});
