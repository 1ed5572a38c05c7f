/**
 * OAuth logins end to end (issue 18): the real daemon, a mock authorization server (test/mocks/oauth.ts)
 * and mock provider APIs. Each browser login goes authorize -> the mock's consent redirect -> a real HTTP
 * request to router's loopback callback listener -> code exchange with the PKCE verifier -> a chat
 * request through the new connection, asserting what the provider's API received (headers, envelope).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { mockEndpoints, startOAuthMock, type OAuthMock } from '../mocks/oauth.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { freePort } from '../support/cli.js';

let router: RouterProcess;
let oauth: OAuthMock;
let api: MockUpstream;
let key: string;

beforeAll(async () => {
  oauth = await startOAuthMock();
  api = await startMockUpstream();
  router = await startRouter();
  key = await router.createKey();
  const endpoints = {
    'claude-code': mockEndpoints(oauth, api.anthropicBase),
    codex: mockEndpoints(oauth, api.openaiBase),
    'gemini-cli': mockEndpoints(oauth),
    antigravity: mockEndpoints(oauth),
    'github-copilot': mockEndpoints(oauth),
    'qwen-code': mockEndpoints(oauth),
    windsurf: { apiBaseUrl: api.openaiBase },
  };
  const r = await router.manage('PATCH', '/api/settings', { oauthEndpoints: endpoints });
  expect(r.status).toBe(200);
  oauth.options.copilotApi = api.openaiBase;
});

afterAll(async () => {
  await router?.stop();
  await api?.close();
  await oauth?.close();
});

beforeEach(() => {
  api.reset();
});

async function chat(model: string, stream = false): Promise<{ status: number; text: string }> {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, stream, messages: [{ role: 'user', content: 'Hi' }] }),
  });
  return { status: res.status, text: await res.text() };
}

/** A browser login through the loopback listener; returns the new connection. */
async function browserLogin(provider: string): Promise<any> {
  const port = await freePort();
  const start = await router.manage('GET', `/api/oauth/${provider}/start-callback-server?port=${port}`);
  expect(start.status).toBe(200);
  const { authUrl, redirectUri, state } = start.json;
  expect(redirectUri).toMatch(new RegExp(`^http://localhost:${port}/`));
  const auth = new URL(authUrl);
  expect(auth.searchParams.get('code_challenge_method')).toBe('S256');
  expect(auth.searchParams.get('state')).toBe(state);
  // The provider's consent page redirects the browser to the loopback listener.
  const consent = await fetch(authUrl, { redirect: 'manual' });
  expect(consent.status).toBe(302);
  const callback = new URL(consent.headers.get('location')!);
  callback.hostname = '127.0.0.1';
  const page = await fetch(callback);
  expect(await page.text()).toContain('Logged in');
  expect(page.status).toBe(200);
  const polled = await router.manage('POST', `/api/oauth/${provider}/poll-callback`, { state });
  expect(polled.json.status).toBe('complete');
  // The listener closed after its one callback; the state is forgotten once reported.
  await expect(fetch(callback)).rejects.toThrow();
  expect((await router.manage('POST', `/api/oauth/${provider}/poll-callback`, { state })).status).toBe(400);
  // The token exchange carried the verifier whose challenge was in the URL (the mock checks S256).
  const exchange = oauth.requests.filter((r) => r.path === '/token' && r.fields.grant_type === 'authorization_code').at(-1)!;
  expect(exchange.fields.code_verifier).toBeTruthy();
  return polled.json.connection;
}

describe('browser logins (PKCE + loopback callback) and chat through the new connection', () => {
  it('claude-code: Messages API with the OAuth beta, Claude Code headers and identity', async () => {
    const conn = await browserLogin('claude-code');
    expect(conn.provider).toBe('claude-code');
    expect(conn.accessToken).not.toMatch(/^login-at-\d+$/); // masked
    const r = await chat('claude-code/claude-sonnet-4-5');
    expect(r.status).toBe(200);
    const sent = api.requests.find((q) => q.endpoint === 'anthropic.messages')!;
    expect(sent.headers.authorization).toMatch(/^Bearer login-at-\d+$/);
    expect(sent.headers['x-api-key']).toBeUndefined();
    expect(sent.headers['anthropic-beta']).toContain('oauth-2025-04-20');
    expect(sent.headers['anthropic-beta']).toContain('claude-code-20250219');
    expect(sent.headers['x-app']).toBe('cli');
    // Claude Code 2.1.332's own values (see providers/anthropic/index.ts for where they were read).
    expect(sent.headers['user-agent']).toBe('claude-cli/2.1.332 (external, cli)');
    expect(sent.headers['anthropic-dangerous-direct-browser-access']).toBe('true');
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.json.system[0].text).toBe("You are Claude Code, Anthropic's official CLI for Claude.");
  });

  it('codex: Responses backend with chatgpt-account-id from the id_token and the Codex headers', async () => {
    const conn = await browserLogin('codex');
    expect(conn.providerSpecificData.accountId).toBe('acct-123');
    const exchange = oauth.requests.filter((r) => r.path === '/token' && r.fields.grant_type === 'authorization_code').at(-1)!;
    expect(String(exchange.headers['content-type'])).toContain('application/x-www-form-urlencoded');
    const r = await chat('codex/gpt-5');
    expect(r.status).toBe(200);
    const sent = api.requests.find((q) => q.path === '/v1/responses')!;
    expect(sent.headers['chatgpt-account-id']).toBe('acct-123');
    // Codex CLI 0.169.0 sends no OpenAI-Beta over HTTP (only on its WebSocket handshake).
    expect(sent.headers['openai-beta']).toBeUndefined();
    expect(sent.headers.originator).toBe('codex_cli_rs');
    expect(sent.headers['user-agent']).toMatch(/^codex_cli_rs\/0\.169\.0 /);
    expect(sent.json.stream).toBe(true);
    expect(sent.headers.authorization).toMatch(/^Bearer login-at-\d+$/);
    expect(sent.json.store).toBe(false);
  });

  it('codex: a usage-limit reply cools the account down until its reset time', async () => {
    const imported = await router.manage('POST', '/api/oauth/codex/import-token', { accessToken: 'at-usage', accountId: 'acct-usage', expiresIn: 3600 });
    expect(imported.status).toBe(201);
    const off = api.handle((q) =>
      q.path === '/v1/responses'
        ? { type: 'status', status: 429, body: { error: { type: 'usage_limit_reached', message: 'The usage limit has been reached', plan_type: 'plus', resets_in_seconds: 5400 } } }
        : undefined,
    );
    try {
      const limited = await chat('codex/gpt-5-codex');
      expect(limited.status).toBe(429);
      // The account now cools down for the model until the reset: refused without another upstream call.
      const calls = api.requests.length;
      const cooling = await chat('codex/gpt-5-codex');
      expect(cooling.status).toBe(429);
      const body = JSON.parse(cooling.text);
      expect(body.error.code).toBe('model_cooldown');
      expect(body.error.reset_seconds).toBeGreaterThan(5300);
      expect(api.requests.length).toBe(calls);
    } finally {
      off();
    }
  });

  it('gemini-cli: project from loadCodeAssist; Code Assist envelope out, {response} unwrapped (JSON and stream)', async () => {
    const conn = await browserLogin('gemini-cli');
    expect(conn.providerSpecificData.projectId).toBe('proj-loaded');
    const r = await chat('gemini-cli/gemini-2.5-pro');
    expect(r.status).toBe(200);
    expect(JSON.parse(r.text).choices[0].message.content).toBe('Hello from Code Assist.');
    const sent = oauth.requests.filter((q) => q.path === '/v1internal:generateContent').at(-1)!;
    expect(sent.fields).toMatchObject({ model: 'gemini-2.5-pro', project: 'proj-loaded', request: { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] } });
    expect(sent.headers.authorization).toMatch(/^Bearer login-at-\d+$/);
    // Gemini CLI 0.56.0's headers (providers/google/clients.ts): the user agent names the request's model,
    // google-auth-library appends its product and sets x-goog-api-client from the Node version.
    const ua = (model: string) => `GeminiCLI/0.56.0/${model} (${process.platform}; ${process.arch}; terminal) google-api-nodejs-client/10.9.0`;
    expect(sent.headers['user-agent']).toBe(ua('gemini-2.5-pro'));
    expect(sent.headers['x-goog-api-client']).toBe(`gl-node/${process.versions.node}`);
    expect(oauth.requests.filter((q) => q.path === '/v1internal:loadCodeAssist').at(-1)!.headers['user-agent']).toBe(ua('gemini-2.5-pro'));
    const s = await chat('gemini-cli/gemini-2.5-flash', true);
    expect(s.status).toBe(200);
    const text = s.text
      .split('\n')
      .filter((l) => l.startsWith('data: {'))
      .map((l) => JSON.parse(l.slice(6)).choices[0]?.delta?.content ?? '')
      .join('');
    expect(text).toBe('Hello from Code Assist.');
    expect(oauth.requests.at(-1)!.path).toBe('/v1internal:streamGenerateContent');
    expect(oauth.requests.at(-1)!.query.get('alt')).toBe('sse');
    expect(oauth.requests.at(-1)!.headers['user-agent']).toBe(ua('gemini-2.5-flash'));
  });

  it('antigravity: onboarding finds the project; envelope with userAgent, requestType and requestId', async () => {
    oauth.options.codeAssistProject = null;
    try {
      const conn = await browserLogin('antigravity');
      expect(conn.providerSpecificData.projectId).toBe('proj-onboarded');
      expect(oauth.requests.some((q) => q.path === '/v1internal:onboardUser' && q.fields.tierId === 'free-tier')).toBe(true);
    } finally {
      oauth.options.codeAssistProject = undefined;
    }
    const r = await chat('antigravity/gemini-2.5-pro');
    expect(r.status).toBe(200);
    const sent = oauth.requests.filter((q) => q.path === '/v1internal:generateContent').at(-1)!;
    expect(sent.fields).toMatchObject({ model: 'gemini-2.5-pro', project: 'proj-onboarded', userAgent: 'antigravity', requestType: 'agent' });
    expect(String(sent.fields.requestId)).toMatch(/^agent-/);
    expect(String(sent.headers['user-agent'])).toMatch(/^antigravity\//);
  });
});

describe('state and PKCE', () => {
  async function consentCode(authUrl: string): Promise<string> {
    const consent = await fetch(authUrl, { redirect: 'manual' });
    return new URL(consent.headers.get('location')!).searchParams.get('code')!;
  }

  it('a code is redeemed only with the verifier of its own login, and a state works once', async () => {
    const a = (await router.manage('GET', '/api/oauth/codex/authorize')).json;
    const b = (await router.manage('GET', '/api/oauth/codex/authorize')).json;
    expect(a.redirectUri).toBe('http://localhost:1455/auth/callback');
    // A's code with B's state: router sends B's verifier, which the authorization server refuses.
    const wrong = await router.manage('POST', '/api/oauth/codex/exchange', { code: await consentCode(a.authUrl), state: b.state });
    expect(wrong.status).toBe(400);
    expect(wrong.json.error.message).toMatch(/code_verifier/);
    // B's state was consumed by that attempt.
    expect((await router.manage('POST', '/api/oauth/codex/exchange', { code: await consentCode(b.authUrl), state: b.state })).status).toBe(400);
    const ok = await router.manage('POST', '/api/oauth/codex/exchange', { code: await consentCode(a.authUrl), state: a.state });
    expect(ok.status).toBe(201);
    const again = await router.manage('POST', '/api/oauth/codex/exchange', { code: await consentCode(a.authUrl), state: a.state });
    expect(again.status).toBe(400);
    expect(again.json.error.message).toMatch(/Unknown, used or expired/);
  });

  it('a callback with another state is refused and the listener keeps waiting', async () => {
    const port = await freePort();
    const start = (await router.manage('GET', `/api/oauth/codex/start-callback-server?port=${port}`)).json;
    const forged = await fetch(`http://127.0.0.1:${port}/auth/callback?code=x&state=forged`);
    expect(forged.status).toBe(400);
    expect((await router.manage('POST', '/api/oauth/codex/poll-callback', { state: start.state })).json.status).toBe('pending');
    const consent = await fetch(start.authUrl, { redirect: 'manual' });
    const callback = new URL(consent.headers.get('location')!);
    callback.hostname = '127.0.0.1';
    expect((await fetch(callback)).status).toBe(200);
    expect((await router.manage('POST', '/api/oauth/codex/poll-callback', { state: start.state })).json.status).toBe('complete');
  });
});

describe('device logins (RFC 8628)', () => {
  it('github-copilot: pending, slow_down, then the GitHub token is exchanged for a Copilot token; chat with Copilot headers', async () => {
    oauth.deviceScript = ['authorization_pending', 'slow_down'];
    const dc = await router.manage('GET', '/api/oauth/github-copilot/device-code');
    expect(dc.status).toBe(200);
    expect(dc.json).toMatchObject({ user_code: 'ABCD-1234', interval: 1, expires_in: 600 });
    expect(dc.json.device_code).toBeUndefined();
    const p1 = await router.manage('POST', '/api/oauth/github-copilot/poll', { state: dc.json.state });
    expect(p1.json).toEqual({ status: 'pending', interval: 1 });
    const p2 = await router.manage('POST', '/api/oauth/github-copilot/poll', { state: dc.json.state });
    expect(p2.json).toEqual({ status: 'slow_down', interval: 6 });
    const p3 = await router.manage('POST', '/api/oauth/github-copilot/poll', { state: dc.json.state });
    expect(p3.json.status).toBe('complete');
    expect(p3.json.connection.providerSpecificData.baseUrl).toBe(api.openaiBase);
    const exchange = oauth.requests.find((q) => q.path === '/copilot_internal/v2/token')!;
    expect(exchange.headers.authorization).toMatch(/^token device-at-\d+$/);
    const r = await chat('github-copilot/gpt-4.1');
    expect(r.status).toBe(200);
    const sent = api.requests.find((q) => q.endpoint === 'openai.chat')!;
    expect(sent.headers.authorization).toMatch(/^Bearer cop-\d+$/);
    expect(sent.headers['copilot-integration-id']).toBe('vscode-chat');
    expect(sent.headers['editor-version']).toMatch(/^vscode\//);
    expect(sent.headers['editor-plugin-version']).toMatch(/^copilot-chat\//);
    // Copilot Chat's identity and per-request headers (providers/copilot/index.ts names the public clients).
    expect(exchange.headers['x-github-api-version']).toBe('2025-05-01');
    expect(exchange.headers['editor-version']).toBe('vscode/1.104.1');
    expect(sent.headers['user-agent']).toBe('GitHubCopilotChat/0.26.7');
    expect(sent.headers['openai-intent']).toBe('conversation-panel');
    expect(sent.headers['x-github-api-version']).toBe('2025-05-01');
    expect(sent.headers['x-vscode-user-agent-library-version']).toBe('electron-fetch');
    expect(sent.headers['x-initiator']).toBe('user');
    expect(String(sent.headers['x-request-id'])).toMatch(/^[0-9a-f-]{36}$/);
    expect(sent.headers['copilot-vision-request']).toBeUndefined();
    // A turn after a tool result is the agent's; an image needs the vision header.
    api.reset();
    const followUp = await fetch(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        model: 'github-copilot/gpt-4.1',
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'look', arguments: '{}' } }] },
          { role: 'tool', tool_call_id: 'c1', content: 'a cat' },
        ],
        tools: [{ type: 'function', function: { name: 'look', parameters: { type: 'object', properties: {} } } }],
      }),
    });
    expect(followUp.status).toBe(200);
    const agent = api.requests.find((q) => q.endpoint === 'openai.chat')!;
    expect(agent.headers['x-initiator']).toBe('agent');
    expect(agent.headers['copilot-vision-request']).toBe('true');
    expect(agent.headers['x-request-id']).not.toBe(sent.headers['x-request-id']);
  });

  it('qwen-code: device flow with PKCE; resource_url becomes the API base', async () => {
    oauth.options.tokenExtra = { resource_url: api.openaiBase };
    try {
      const dc = (await router.manage('GET', '/api/oauth/qwen-code/device-code')).json;
      const start = oauth.requests.filter((q) => q.path === '/device/code').at(-1)!;
      expect(start.fields).toMatchObject({ code_challenge_method: 'S256', scope: 'openid profile email model.completion' });
      const done = await router.manage('POST', '/api/oauth/qwen-code/poll', { state: dc.state });
      expect(done.json.status).toBe('complete');
      expect(oauth.requests.filter((q) => q.path === '/token').at(-1)!.fields.code_verifier).toBeTruthy();
    } finally {
      oauth.options.tokenExtra = undefined;
    }
    const r = await chat('qwen-code/qwen3-coder-plus');
    expect(r.status).toBe(200);
    const sent = api.requests.find((q) => q.endpoint === 'openai.chat')!;
    expect(sent.headers['x-dashscope-authtype']).toBe('qwen-oauth');
    // Qwen Code's DashScope headers (qwen-code provider/dashscope.ts buildHeaders; providers/qwen/index.ts).
    const ua = `QwenCode/0.24.4 (${process.platform}; ${process.arch})`;
    expect(sent.headers['user-agent']).toBe(ua);
    expect(sent.headers['x-dashscope-useragent']).toBe(ua);
    expect(sent.headers['x-dashscope-cachecontrol']).toBe('enable');
    expect(sent.headers.authorization).toMatch(/^Bearer device-at-\d+$/);
  });

  it('an expired device code ends the login; the state is then unknown', async () => {
    oauth.deviceScript = ['authorization_pending', 'expired_token'];
    const dc = (await router.manage('GET', '/api/oauth/github-copilot/device-code')).json;
    expect((await router.manage('POST', '/api/oauth/github-copilot/poll', { state: dc.state })).json.status).toBe('pending');
    const expired = await router.manage('POST', '/api/oauth/github-copilot/poll', { state: dc.state });
    expect(expired.json.status).toBe('expired');
    expect((await router.manage('POST', '/api/oauth/github-copilot/poll', { state: dc.state })).status).toBe(400);
  });

  it('a provider without a device flow says which flow to use', async () => {
    const r = await router.manage('GET', '/api/oauth/codex/device-code');
    expect(r.status).toBe(400);
    expect(r.json.error.message).toMatch(/authorize/);
  });
});

describe('import-token and retired flows', () => {
  it('retired browser flows answer 410 before authentication, pointing at import-token', async () => {
    for (const [method, path] of [
      ['GET', '/api/oauth/windsurf/authorize'],
      ['GET', '/api/oauth/devin-cli/start-callback-server'],
      ['POST', '/api/oauth/windsurf/poll-callback'],
    ] as const) {
      const res = await fetch(`${router.url}${path}`, { method, headers: method === 'POST' ? { 'content-type': 'application/json' } : {}, body: method === 'POST' ? '{}' : undefined });
      expect(res.status).toBe(410);
      const body = await res.json();
      expect(body.error.code).toBe('flow_retired');
      expect(body.error.message).toContain('import-token');
    }
    // A live flow without credentials is a 401: the 410s are the only ones answered before auth.
    expect((await fetch(`${router.url}/api/oauth/codex/authorize`)).status).toBe(401);
    expect((await fetch(`${router.url}/api/oauth/windsurf/import-token`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })).status).toBe(401);
  });

  it('windsurf: an imported token is the only path, and chat sends it as Bearer', async () => {
    const r = await router.manage('POST', '/api/oauth/windsurf/import-token', { accessToken: 'sk-ws-01-imported', name: 'ide' });
    expect(r.status).toBe(201);
    expect(r.json.connection.accessToken).not.toBe('sk-ws-01-imported');
    expect((await chat('windsurf/default')).status).toBe(200);
    expect(api.requests.find((q) => q.endpoint === 'openai.chat')!.headers.authorization).toBe('Bearer sk-ws-01-imported');
  });

  it('codex import reads the account id from the id_token; bad bodies are 400s', async () => {
    const login = oauth.requests.length;
    const idToken = `${Buffer.from('{}').toString('base64url')}.${Buffer.from(JSON.stringify({ 'https://api.openai.com/auth': { chatgpt_account_id: 'acct-imported' } })).toString('base64url')}.x`;
    const r = await router.manage('POST', '/api/oauth/codex/import-token', { accessToken: 'at-imp', refreshToken: 'rt-imp', idToken, expiresIn: 3600 });
    expect(r.status).toBe(201);
    expect(r.json.connection.providerSpecificData.accountId).toBe('acct-imported');
    expect(oauth.requests.length).toBe(login);
    expect((await router.manage('POST', '/api/oauth/codex/import-token', { refreshToken: 'x' })).status).toBe(400);
    expect((await router.manage('POST', '/api/oauth/nope/import-token', { accessToken: 'x' })).status).toBe(404);
  });
});
