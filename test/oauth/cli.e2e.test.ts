/**
 * `router login` and `router accounts` (issue 18 item 6): thin clients of the OAuth routes, run as the real
 * CLI against the real daemon, the provider mocked (test/mocks/oauth.ts).
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { mockEndpoints, startOAuthMock, type OAuthMock } from '../mocks/oauth.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { describeResult, runRouter } from '../support/cli.js';

let router: RouterProcess;
let oauth: OAuthMock;
let api: MockUpstream;
let target: string[];

beforeAll(async () => {
  oauth = await startOAuthMock();
  api = await startMockUpstream();
  oauth.options.copilotApi = api.openaiBase;
  router = await startRouter();
  target = ['--home', router.home, '--port', String(router.port)];
  await router.manage('PATCH', '/api/settings', { oauthEndpoints: { 'github-copilot': mockEndpoints(oauth), windsurf: { apiBaseUrl: api.openaiBase } } });
});

afterAll(async () => {
  await router?.stop();
  await api?.close();
  await oauth?.close();
});

describe('router login / router accounts', () => {
  it('login --import FILE imports a token; accounts lists it', async () => {
    const file = join(router.home, 'ws-token.json');
    writeFileSync(file, JSON.stringify({ accessToken: 'sk-ws-cli', name: 'ws-cli', expiresIn: 3600 }));
    const r = await runRouter(['login', 'windsurf', '--import', file, ...target]);
    expect(r.exitCode, describeResult(r)).toBe(0);
    expect(r.stdout).toMatch(/imported windsurf connection 'ws-cli'/);
    const list = await runRouter(['accounts', ...target]);
    expect(list.exitCode, describeResult(list)).toBe(0);
    expect(list.stdout).toMatch(/windsurf\s+ws-cli/);
    expect(list.stdout).toContain('LAST REFRESH');
  });

  it('login for a device-flow provider prints the code and waits until the login completes', async () => {
    oauth.deviceScript = ['authorization_pending'];
    const r = await runRouter(['login', 'github-copilot', ...target], { timeoutMs: 20_000 });
    expect(r.exitCode, describeResult(r)).toBe(0);
    expect(r.stdout).toContain('ABCD-1234');
    expect(r.stdout).toMatch(/logged in: github-copilot connection/);
    const polls = oauth.requests.filter((q) => q.fields.grant_type === 'urn:ietf:params:oauth:grant-type:device_code');
    expect(polls).toHaveLength(2);
  });

  it('a refused login ends with an error and exit 1', async () => {
    oauth.deviceScript = ['access_denied'];
    const r = await runRouter(['login', 'github-copilot', ...target], { timeoutMs: 20_000 });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/declined/);
  });
});
