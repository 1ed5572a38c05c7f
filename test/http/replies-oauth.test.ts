/**
 * Real replies of the OAuth login routes parse with the reply schema their route declares
 * (test/support/reply-contract.ts): a real daemon against the mock authorization server (test/mocks/oauth.ts):
 * a pasted-code login, a loopback-callback login, a device login through pending, slow_down and complete,
 * an expired one, a cancelled one, a token import and the retired flows' 410s.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mockEndpoints, type OAuthMock, startOAuthMock } from '../mocks/oauth.js';
import { type MockUpstream, startMockUpstream } from '../mocks/upstream.js';
import { freePort } from '../support/cli.js';
import { type CheckOptions, checkReply } from '../support/reply-contract.js';
import { type RouterProcess, startRouter } from '../support/router-daemon.js';

let router: RouterProcess;
let oauth: OAuthMock;
let api: MockUpstream;

beforeAll(async () => {
  oauth = await startOAuthMock();
  api = await startMockUpstream();
  router = await startRouter();
  const endpoints = { codex: mockEndpoints(oauth, api.openaiBase), 'github-copilot': mockEndpoints(oauth) };
  await checkReply(router, 'PATCH', '/api/settings', { oauthEndpoints: endpoints });
  oauth.options.copilotApi = api.openaiBase;
}, 60_000);
afterAll(async () => {
  await router?.stop();
  await api?.close();
  await oauth?.close();
});

const check = (method: string, path: string, body?: unknown, opts?: CheckOptions) => checkReply(router, method, path, body, opts);

async function consentRedirect(authUrl: string): Promise<URL> {
  const consent = await fetch(authUrl, { redirect: 'manual' });
  expect(consent.status).toBe(302);
  return new URL(consent.headers.get('location')!);
}

describe('OAuth replies parse with their route schema', () => {
  it('the providers and their logins', async () => {
    const r = await check('GET', '/api/oauth/providers');
    expect(r.providers.map((p: { login: string | null }) => p.login)).toEqual(expect.arrayContaining(['browser', 'device', null]));
  });

  it('browser login with a pasted code: authorize, exchange', async () => {
    const a = await check('GET', '/api/oauth/codex/authorize');
    const code = (await consentRedirect(a.authUrl)).searchParams.get('code');
    const done = await check('POST', '/api/oauth/codex/exchange', { code, state: a.state }, { status: 201 });
    expect(done.connection.provider).toBe('codex');
  });

  it('browser login through the loopback listener: start-callback-server, poll-callback, cancel', async () => {
    const start = await check('GET', `/api/oauth/codex/start-callback-server?port=${await freePort()}`);
    expect((await check('POST', '/api/oauth/codex/poll-callback', { state: start.state })).status).toBe('pending');
    const callback = await consentRedirect(start.authUrl);
    callback.hostname = '127.0.0.1';
    expect((await fetch(callback)).status).toBe(200);
    expect((await check('POST', '/api/oauth/codex/poll-callback', { state: start.state })).status).toBe('complete');
    const other = await check('GET', `/api/oauth/codex/start-callback-server?port=${await freePort()}`);
    expect((await check('POST', '/api/oauth/codex/cancel', { state: other.state })).cancelled).toBe(true);
    expect((await check('POST', '/api/oauth/codex/cancel', { state: other.state })).cancelled).toBe(false);
  });

  it('device login: device-code, poll through pending, slow_down, complete; an expired one', async () => {
    oauth.deviceScript = ['authorization_pending', 'slow_down'];
    const dc = await check('GET', '/api/oauth/github-copilot/device-code');
    expect((await check('POST', '/api/oauth/github-copilot/poll', { state: dc.state })).status).toBe('pending');
    expect((await check('POST', '/api/oauth/github-copilot/poll', { state: dc.state })).status).toBe('slow_down');
    expect((await check('POST', '/api/oauth/github-copilot/poll', { state: dc.state })).status).toBe('complete');
    oauth.deviceScript = ['expired_token'];
    const late = await check('GET', '/api/oauth/github-copilot/device-code');
    expect((await check('POST', '/api/oauth/github-copilot/poll', { state: late.state })).status).toBe('expired');
  });

  it('token import', async () => {
    const r = await check('POST', '/api/oauth/claude-code/import-token', { accessToken: 'sk-ant-oat01-imported-0123456789', refreshToken: 'sk-ant-ort01-imported', expiresIn: 3600, email: 'a@example.com' }, { status: 201 });
    expect(r.created).toBe(true);
  });

  it('the retired flows answer 410 with the import route', async () => {
    for (const provider of ['windsurf', 'devin-cli']) {
      await check('GET', `/api/oauth/${provider}/authorize`, undefined, { anonymous: true });
      await check('GET', `/api/oauth/${provider}/start-callback-server`, undefined, { anonymous: true });
      const r = await check('POST', `/api/oauth/${provider}/poll-callback`, { state: 'x' }, { anonymous: true });
      expect(r.error.import_token).toBe(`/api/oauth/${provider}/import-token`);
    }
  });
});
