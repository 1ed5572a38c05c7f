/**
 * What a client is told when an upstream cannot be reached or answers with a status no HTTP client could
 * be given (issue 27 item 6), against the real daemon: a clear message naming the host and what failed,
 * never raw exception text (`connect ECONNREFUSED 127.0.0.1:1`, `getaddrinfo ENOTFOUND ...`), on the
 * proxy and relay routes, `POST /api/providers/test-all` and the Copilot device login; an upstream status
 * outside 100-599 is a 502 with the standard body, not relayed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { MockUpstream } from '../mocks/upstream.js';
import type { RouterProcess } from '../support/router-daemon.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let env: ProxyEnv;
let mock: MockUpstream;
let router: RouterProcess;
let key: string;
/** The raw texts Node and undici put in their errors: none may reach a reply. */
const RAW = /connect ECONNREFUSED|getaddrinfo|ENOTFOUND \S|fetch failed|\n\s+at |node:internal/;

beforeAll(async () => {
  env = await startProxyEnv([{ provider: 'openai', apiKey: 'sk-up-openai' }]);
  ({ mock, router, key } = env);
  // Two nodes whose base URLs cannot be reached: nothing listens on port 1; `.invalid` never resolves.
  for (const [prefix, baseUrl] of [
    ['refused', 'http://127.0.0.1:1/v1'],
    ['nowhere', 'http://router-test.invalid/v1'],
  ] as const) {
    const r = await router.manage('POST', '/api/provider-nodes', { name: prefix, prefix, type: 'openai-compatible', apiType: 'chat', baseUrl });
    expect(r.status, JSON.stringify(r.json)).toBe(201);
    await router.addConnection({ provider: prefix, apiKey: `sk-${prefix}` });
  }
  await router.manage('PATCH', '/api/settings', { breakerFailureThreshold: 1000 });
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

async function post(path: string, body: unknown) {
  const res = await fetch(`${router.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: (await res.json()) as any };
}

const chat = (model: string) => ({ model, messages: [{ role: 'user', content: 'hi' }] });

describe('an upstream that cannot be reached', () => {
  it('proxy and relay: a 502 naming the host and what failed, no raw exception text', async () => {
    for (const path of ['/v1/chat/completions', '/api/v1/relay/chat/completions']) {
      const refused = await post(path, chat('refused/some-model'));
      expect(refused.status, JSON.stringify(refused.json)).toBe(502);
      expect(refused.json.error.message).toMatch(/127\.0\.0\.1:1 refused the connection/);
      expect(refused.json.error.message).not.toMatch(RAW);

      const nowhere = await post(path, chat('nowhere/some-model'));
      expect(nowhere.status, JSON.stringify(nowhere.json)).toBe(502);
      expect(nowhere.json.error.message).toMatch(/router-test\.invalid could not be resolved/);
      expect(nowhere.json.error.message).not.toMatch(RAW);
    }
  }, 30_000);

  it('POST /api/providers/test-all: each failure says which host failed and how', async () => {
    const r = await router.manage('POST', '/api/providers/test-all');
    expect(r.status).toBe(200);
    const text = JSON.stringify(r.json);
    expect(text).not.toMatch(RAW);
    expect(text).toMatch(/127\.0\.0\.1:1 refused the connection/);
    expect(text).toMatch(/router-test\.invalid could not be resolved/);
  }, 60_000);

  it('the Copilot device login: a 502 naming the device endpoint host', async () => {
    const settings = { oauthEndpoints: { 'github-copilot': { deviceAuthorizationUrl: 'http://127.0.0.1:1/device/code', tokenUrl: 'http://127.0.0.1:1/token' } } };
    const s = await router.manage('PATCH', '/api/settings', settings);
    expect(s.status, JSON.stringify(s.json)).toBe(200);
    try {
      // GET today; a POST where state-changing routes moved off GET.
      let r = await router.manage('POST', '/api/oauth/github-copilot/device-code');
      if (r.status === 404 || r.status === 405) r = await router.manage('GET', '/api/oauth/github-copilot/device-code');
      expect(r.status, JSON.stringify(r.json)).toBe(502);
      expect(r.json.error.message).toMatch(/device endpoint could not be reached: 127\.0\.0\.1:1 refused the connection/);
      expect(r.json.error.message).not.toMatch(RAW);
    } finally {
      await router.manage('PATCH', '/api/settings', { oauthEndpoints: {} });
    }
  });
});

describe('an upstream status outside 100-599', () => {
  it('is a 502 with the standard body, never relayed', async () => {
    for (const status of [600, 799, 999]) {
      mock.handle(() => ({
        type: 'custom',
        fn: (_req, res) => {
          res.writeHead(status, { 'content-type': 'application/json' });
          res.end('{"error":{"message":"odd"}}');
        },
      }));
      for (const stream of [false, true]) {
        const r = await post('/v1/chat/completions', { ...chat('openai/gpt-4o'), stream });
        expect(r.status).toBe(502);
        expect(r.json.error).toMatchObject({ type: expect.any(String), code: expect.any(String), message: expect.stringMatching(new RegExp(`HTTP status ${status}, which is not a valid status`)) });
      }
      mock.reset();
    }
  });
});
