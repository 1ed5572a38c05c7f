/**
 * Connections that arrive without a login (credential-file imports, POST /api/providers) are made whole on
 * first use: a Copilot connection holding only the GitHub token gets its Copilot token, a Code Assist
 * connection without a project gets it found, Qwen's `resourceUrl` is its API base.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { mockEndpoints, startOAuthMock, type OAuthMock } from '../mocks/oauth.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let router: RouterProcess;
let oauth: OAuthMock;
let api: MockUpstream;
let key: string;

beforeAll(async () => {
  oauth = await startOAuthMock({ copilotApi: undefined });
  api = await startMockUpstream();
  oauth.options.copilotApi = api.openaiBase;
  router = await startRouter();
  key = await router.createKey();
  await router.manage('PATCH', '/api/settings', { oauthEndpoints: { 'github-copilot': mockEndpoints(oauth), 'gemini-cli': mockEndpoints(oauth) } });
});

afterAll(async () => {
  await router?.stop();
  await api?.close();
  await oauth?.close();
});

async function chat(model: string): Promise<number> {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  await res.text();
  return res.status;
}

describe('imported connections', () => {
  it('github-copilot with only the GitHub token: exchanged for a Copilot token before the first request, then kept', async () => {
    const c = await router.addConnection({ provider: 'github-copilot', accessToken: 'gho_imported' });
    expect(await chat('github-copilot/gpt-4.1')).toBe(200);
    expect(oauth.copilotExchanges).toBe(1);
    expect(api.requests.at(-1)!.headers.authorization).toMatch(/^Bearer cop-\d+$/);
    expect(await chat('github-copilot/gpt-4.1')).toBe(200);
    expect(oauth.copilotExchanges).toBe(1);
    const stored = (await router.manage('GET', `/api/providers/${c.id}`)).json;
    expect(stored.expiresAt).toBeTruthy();
    expect(stored.refreshToken).toBeTruthy();
  });

  it('gemini-cli without a project: loadCodeAssist once, then the envelope carries it', async () => {
    oauth.validAccess.add('ya29.imported');
    const c = await router.addConnection({ provider: 'gemini-cli', accessToken: 'ya29.imported', refreshToken: 'rt-x', expiresAt: new Date(Date.now() + 3600_000).toISOString() });
    expect(await chat('gemini-cli/gemini-2.5-pro')).toBe(200);
    expect(await chat('gemini-cli/gemini-2.5-pro')).toBe(200);
    expect(oauth.requests.filter((q) => q.path === '/v1internal:loadCodeAssist')).toHaveLength(1);
    expect(oauth.requests.filter((q) => q.path === '/v1internal:generateContent').at(-1)!.fields.project).toBe('proj-loaded');
    expect((await router.manage('GET', `/api/providers/${c.id}`)).json.providerSpecificData.projectId).toBe('proj-loaded');
  });

  it("qwen-code: the imported file's resourceUrl is the API base", async () => {
    await router.addConnection({ provider: 'qwen-code', accessToken: 'qwen-imported', providerSpecificData: { resourceUrl: api.openaiBase } });
    expect(await chat('qwen-code/qwen3-coder-plus')).toBe(200);
    expect(api.requests.at(-1)!.headers.authorization).toBe('Bearer qwen-imported');
  });
});
