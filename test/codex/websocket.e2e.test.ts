/**
 * The codex provider's upstream WebSocket (docs/responses-websocket.md, "Upstream WebSocket") against a
 * mock of the ChatGPT Codex backend (test/mocks/codex.ts), through the real daemon: a client on router's
 * Responses WebSocket gets one upstream socket whose follow-ups go as `previous_response_id` plus their new
 * items; every response is a usage row; error frames, refused handshakes and sockets closed midway go
 * through the executor as their HTTP twins do (cooldown, auth refresh, failover, `response.failed`).
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startCodexMock, type CodexMock } from '../mocks/codex.js';
import { mockEndpoints, startOAuthMock, type OAuthMock } from '../mocks/oauth.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let router: RouterProcess;
let backend: CodexMock;
let oauth: OAuthMock;
let openai: MockUpstream;
let key: string;

beforeAll(async () => {
  backend = await startCodexMock();
  oauth = await startOAuthMock();
  openai = await startMockUpstream();
  router = await startRouter();
  key = await router.createKey();
  expect((await router.manage('PATCH', '/api/settings', { oauthEndpoints: { codex: mockEndpoints(oauth, backend.baseUrl) } })).status).toBe(200);
  await router.addConnection({ provider: 'openai', apiKey: 'sk-test', providerSpecificData: { baseUrl: openai.openaiBase } });
  // A subscription has no per-token price of its own; one set here shows the socket's rows are priced as HTTP's.
  expect((await router.manage('PUT', '/api/pricing/codex/gpt-5', { input: 1.25, output: 10 })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await router?.stop();
  await backend?.close();
  await oauth?.close();
  await openai?.close();
});

beforeEach(() => {
  backend.reset();
  openai.reset();
});

/** A codex account from an imported token (a refresh token the mock authorization server knows, when asked). */
async function account(accessToken: string): Promise<string> {
  const r = await router.manage('POST', '/api/oauth/codex/import-token', { accessToken, accountId: `acct-${accessToken}`, expiresIn: 3600 });
  expect(r.status).toBe(201);
  return r.json.connection.id;
}

/** A codex login through authorize + exchange against the mock authorization server (a refresh token it knows). */
async function login(): Promise<{ id: string; accessToken: string }> {
  const before = new Set(oauth.validAccess);
  const a = (await router.manage('GET', '/api/oauth/codex/authorize')).json;
  const consent = await fetch(a.authUrl, { redirect: 'manual' });
  const code = new URL(consent.headers.get('location')!).searchParams.get('code')!;
  const r = await router.manage('POST', '/api/oauth/codex/exchange', { code, state: a.state });
  expect(r.status).toBe(201);
  return { id: r.json.connection.id, accessToken: [...oauth.validAccess].find((t) => !before.has(t))! };
}

interface Client {
  ws: WebSocket;
  /** Sends one response.create and resolves with its events, through its terminal event. */
  create(body: Record<string, unknown>): Promise<any[]>;
  close(): void;
}

async function connect(): Promise<Client> {
  const ws = new WebSocket(`${router.url.replace('http', 'ws')}/v1/responses`, { headers: { authorization: `Bearer ${key}` } });
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  const queue: any[] = [];
  let wake: (() => void) | undefined;
  ws.on('message', (d) => {
    queue.push(JSON.parse(String(d)));
    wake?.();
  });
  return {
    ws,
    async create(body) {
      ws.send(JSON.stringify({ type: 'response.create', ...body }));
      const events: any[] = [];
      for (;;) {
        while (queue.length) {
          const e = queue.shift();
          events.push(e);
          if (e.type === 'response.completed' || e.type === 'response.failed' || e.type === 'response.incomplete') return events;
        }
        await new Promise<void>((resolve, reject) => {
          const t = setTimeout(() => reject(new Error(`no terminal event; got ${JSON.stringify(events)}`)), 10_000);
          wake = () => {
            clearTimeout(t);
            resolve();
          };
        });
      }
    },
    close: () => ws.close(),
  };
}

const text = (events: any[]) => events.filter((e) => e.type === 'response.output_text.delta').map((e) => e.delta).join('');

async function rows(n: number): Promise<any[]> {
  const end = Date.now() + 5000;
  for (;;) {
    const list = (await router.manage('GET', '/api/logs?limit=50')).json.logs as any[];
    const mine = list.filter((x) => x.endpoint === '/v1/responses');
    if (mine.length >= n || Date.now() > end) return mine;
    await new Promise((res) => setTimeout(res, 50));
  }
}

describe('codex over the upstream WebSocket', () => {
  it('one upstream socket per client socket; the follow-up goes as previous_response_id with its new items only', async () => {
    const conn = await account('ws-a');
    const c = await connect();
    try {
      const first = await c.create({ model: 'codex/gpt-5', input: [{ role: 'user', content: 'Hi' }] });
      expect(first.at(-1).type).toBe('response.completed');
      expect(text(first)).toBe('Hello from the Codex mock.');
      const id = first.at(-1).response.id;
      const second = await c.create({ model: 'codex/gpt-5', previous_response_id: id, input: [{ role: 'user', content: 'Again' }] });
      expect(second.at(-1).type).toBe('response.completed');
      expect(backend.upgrades).toHaveLength(1);
      const up = backend.upgrades[0]!;
      expect(up['openai-beta']).toBe('responses_websockets=2026-02-06');
      expect(up.authorization).toBe('Bearer ws-a');
      expect(up['chatgpt-account-id']).toBe('acct-ws-a');
      expect(up.originator).toBe('codex_cli_rs');
      expect(up['session-id']).toBeTruthy();
      expect(backend.requests.map((r) => [r.transport, r.socket])).toEqual([
        ['websocket', 1],
        ['websocket', 1],
      ]);
      const [a, b] = backend.requests.map((r) => r.json);
      expect(a.type).toBe('response.create');
      expect(a.store).toBe(false);
      expect(a.stream).toBe(true);
      expect(a.previous_response_id).toBeUndefined();
      expect(b.previous_response_id).toBe(id);
      expect(b.input).toEqual([{ role: 'user', content: 'Again' }]);
      const logged = await rows(2);
      for (const row of logged.slice(0, 2)) {
        expect(row.providerId).toBe('codex');
        expect(row.status).toBe(200);
        expect(row.tokensOut).toBeGreaterThan(0);
        expect(row.costUsd).toBeGreaterThan(0);
        expect(JSON.parse(row.notes)).toMatchObject({ transport: 'websocket', upstreamTransport: 'websocket' });
      }
    } finally {
      c.close();
      await router.manage('DELETE', `/api/providers/${conn}`);
    }
    // The upstream socket closes with the client's.
    const end = Date.now() + 3000;
    while (backend.openSockets() > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    expect(backend.openSockets()).toBe(0);
  });

  it('a usage-limit error frame is a 429 that cools the account down until resets_at; the socket stays usable', async () => {
    const conn = await account('ws-limit');
    const c = await connect();
    try {
      backend.script.push({ type: 'usage-limit', resetsInSeconds: 3600 });
      const failed = await c.create({ model: 'codex/gpt-5-codex', input: 'Hi' });
      expect(failed.map((e) => e.type)).toEqual(['error', 'response.failed']);
      expect(failed[0].message).toContain('usage limit');
      const cooling = await c.create({ model: 'codex/gpt-5-codex', input: 'Hi' });
      expect(cooling.at(-1).type).toBe('response.failed');
      expect(cooling[0].code).toBe('model_cooldown');
      expect(backend.requests).toHaveLength(1);
      const cd = (await router.manage('GET', '/api/resilience/model-cooldowns')).json.cooldowns.find((x: any) => x.connectionId === conn);
      expect(cd).toBeTruthy();
    } finally {
      c.close();
      await router.manage('DELETE', `/api/providers/${conn}`);
    }
  });

  it('an upstream socket closed mid-response ends it in response.failed; the next response opens a new socket', async () => {
    const conn = await account('ws-cut');
    const c = await connect();
    try {
      // created, in_progress, output_item.added, content_part.added, first text delta: then the socket drops.
      backend.script.push({ type: 'cut', after: 5 });
      const cut = await c.create({ model: 'codex/gpt-5', input: 'Hi' });
      expect(cut.some((e) => e.type === 'response.output_text.delta')).toBe(true);
      expect(cut.at(-1).type).toBe('response.failed');
      const next = await c.create({ model: 'codex/gpt-5', input: 'Hi' });
      expect(next.at(-1).type).toBe('response.completed');
      expect(backend.upgrades).toHaveLength(2);
    } finally {
      c.close();
      await router.manage('DELETE', `/api/providers/${conn}`);
    }
  });

  it('a socket closed before any output fails over to the next target of a combo', async () => {
    const conn = await account('ws-fo');
    expect((await router.manage('POST', '/api/combos', { name: 'codex-then-openai', models: ['codex/gpt-5', 'openai/gpt-4o'] })).status).toBe(201);
    const c = await connect();
    try {
      backend.script.push({ type: 'cut', after: 2 });
      const events = await c.create({ model: 'codex-then-openai', input: 'Hi' });
      expect(events.at(-1).type).toBe('response.completed');
      expect(text(events)).toBe('Hello from the mock.');
      expect(openai.requests.filter((r) => r.endpoint === 'openai.responses')).toHaveLength(1);
    } finally {
      c.close();
      await router.manage('DELETE', `/api/providers/${conn}`);
    }
  });

  it('a handshake refused with 401 goes the HTTP auth path: the token is refreshed and the next response uses it', async () => {
    const { id: conn, accessToken } = await login();
    oauth.refreshCalls = 0;
    const c = await connect();
    try {
      backend.script.push({ type: 'refuse-upgrade', status: 401 });
      const refused = await c.create({ model: 'codex/gpt-5', input: 'Hi' });
      expect(refused.at(-1).type).toBe('response.failed');
      expect(refused[0].code ?? refused[0].status).toBeTruthy();
      const end = Date.now() + 5000;
      while (oauth.refreshCalls < 1 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect(oauth.refreshCalls).toBe(1);
      const ok = await c.create({ model: 'codex/gpt-5', input: 'Hi' });
      expect(ok.at(-1).type).toBe('response.completed');
      expect(backend.upgrades[0]!.authorization).toBe(`Bearer ${accessToken}`);
      expect(backend.upgrades.at(-1)!.authorization).toMatch(/^Bearer refreshed-at-\d+$/);
    } finally {
      c.close();
      await router.manage('DELETE', `/api/providers/${conn}`);
    }
  });

  it('an HTTP client uses the upstream socket only with responsesUpstreamWebSocket: always', async () => {
    const conn = await account('ws-http');
    try {
      const ask = () =>
        fetch(`${router.url}/v1/responses`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'codex/gpt-5', input: 'Hi' }),
        });
      expect((await ask()).status).toBe(200);
      expect(backend.requests.at(-1)!.transport).toBe('http');
      expect((await router.manage('PATCH', '/api/settings', { responsesUpstreamWebSocket: 'always' })).status).toBe(200);
      const res = await ask();
      expect(res.status).toBe(200);
      expect(((await res.json()) as any).output_text ?? '').toBeDefined();
      expect(backend.requests.at(-1)!.transport).toBe('websocket');
      const end = Date.now() + 3000;
      while (backend.openSockets() > 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
      expect(backend.openSockets()).toBe(0);
    } finally {
      await router.manage('PATCH', '/api/settings', { responsesUpstreamWebSocket: 'auto' });
      await router.manage('DELETE', `/api/providers/${conn}`);
    }
  });
});
