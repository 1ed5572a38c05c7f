/**
 * The codex provider over HTTP against a mock of the ChatGPT Codex backend (test/mocks/codex.ts), through
 * the real daemon: the Codex CLI's headers, non-streaming clients served from the stream the backend
 * insists on (official `openai` SDK, Responses and Chat Completions; Anthropic Messages by fetch), and
 * usage-limit replies as cooldowns with their reset time.
 */
import OpenAI from 'openai';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { startCodexMock, type CodexMock } from '../mocks/codex.js';
import { mockEndpoints, startOAuthMock, type OAuthMock } from '../mocks/oauth.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let router: RouterProcess;
let backend: CodexMock;
let oauth: OAuthMock;
let key: string;
let client: OpenAI;

beforeAll(async () => {
  backend = await startCodexMock();
  oauth = await startOAuthMock();
  router = await startRouter();
  key = await router.createKey();
  expect((await router.manage('PATCH', '/api/settings', { oauthEndpoints: { codex: mockEndpoints(oauth, backend.baseUrl) } })).status).toBe(200);
  const imported = await router.manage('POST', '/api/oauth/codex/import-token', { accessToken: 'at-codex', accountId: 'acct-9', expiresIn: 3600 });
  expect(imported.status).toBe(201);
  client = new OpenAI({ apiKey: key, baseURL: `${router.url}/v1`, maxRetries: 0 });
}, 60_000);

afterAll(async () => {
  await router?.stop();
  await backend?.close();
  await oauth?.close();
});

beforeEach(() => backend.reset());

describe('codex over HTTP', () => {
  it('a non-streaming Responses request (openai SDK) is sent streaming with store false and instructions, and reassembled', async () => {
    const r = await client.responses.create({ model: 'codex/gpt-5', input: 'Say hi.' });
    expect(r.output_text).toBe('Hello from the Codex mock.');
    expect(r.usage?.output_tokens).toBeGreaterThan(0);
    expect(backend.requests).toHaveLength(1);
    const sent = backend.requests[0]!;
    expect(sent.transport).toBe('http');
    expect(sent.json.stream).toBe(true);
    expect(sent.json.store).toBe(false);
    expect(sent.json.instructions).toBe('');
  });

  it('a non-streaming Chat Completions request (openai SDK) gets a Chat Completions reply with usage', async () => {
    const r = await client.chat.completions.create({ model: 'codex/gpt-5-codex', messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }] });
    expect(r.object).toBe('chat.completion');
    expect(r.choices[0]!.message.content).toBe('Hello from the Codex mock.');
    expect(r.choices[0]!.finish_reason).toBe('stop');
    expect(r.usage?.completion_tokens).toBeGreaterThan(0);
    const sent = backend.requests[0]!;
    expect(sent.json.stream).toBe(true);
    expect(sent.json.instructions).toBe('Be brief.');
  });

  it('a non-streaming Anthropic Messages request gets a Messages reply', async () => {
    const res = await fetch(`${router.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'codex/gpt-5', max_tokens: 100, messages: [{ role: 'user', content: 'Hi' }] }),
    });
    expect(res.status).toBe(200);
    const body = (await res.json()) as any;
    expect(body.type).toBe('message');
    expect(body.content[0].text).toBe('Hello from the Codex mock.');
    expect(body.usage.output_tokens).toBeGreaterThan(0);
  });

  it('streaming clients still stream (openai SDK)', async () => {
    const stream = await client.responses.create({ model: 'codex/gpt-5', input: 'Hi', stream: true });
    let text = '';
    for await (const ev of stream) if (ev.type === 'response.output_text.delta') text += ev.delta;
    expect(text).toBe('Hello from the Codex mock.');
  });

  it("sends the Codex CLI's headers: originator, user agent, account, one thread id as session-id, thread-id and x-client-request-id", async () => {
    await client.responses.create({ model: 'codex/gpt-5', input: 'Hi' });
    const h = backend.requests[0]!.headers;
    expect(h.authorization).toBe('Bearer at-codex');
    expect(h['chatgpt-account-id']).toBe('acct-9');
    expect(h.originator).toBe('codex_cli_rs');
    expect(h['user-agent']).toMatch(/^codex_cli_rs\/0\.169\.0 \(\S.* \S+; \S+\) unknown$/);
    expect(h.accept).toBe('text/event-stream');
    expect(h['openai-beta']).toBeUndefined();
    expect(h['session-id']).toMatch(/^[0-9a-f-]{36}$/);
    expect(h['thread-id']).toBe(h['session-id']);
    expect(h['x-client-request-id']).toBe(h['session-id']);
    // A Codex client's own thread id (its session-id header) is kept.
    await client.responses.create({ model: 'codex/gpt-5', input: 'Hi' }, { headers: { 'session-id': '01a22251-1c66-7b13-8edf-c88b8dd7b680' } });
    expect(backend.requests[1]!.headers['thread-id']).toBe('01a22251-1c66-7b13-8edf-c88b8dd7b680');
  });

  it('a usage-limit reply (429 usage_limit_reached, resets_at) cools the account down until its reset', async () => {
    backend.script.push({ type: 'usage-limit', resetsInSeconds: 7200 });
    const limited = await fetch(`${router.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'codex/gpt-5-codex', input: 'Hi' }),
    });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(7100);
    const cooling = await fetch(`${router.url}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'codex/gpt-5-codex', input: 'Hi' }),
    });
    expect(cooling.status).toBe(429);
    const body = (await cooling.json()) as any;
    expect(body.error.code).toBe('model_cooldown');
    expect(body.error.reset_seconds).toBeGreaterThan(7100);
    expect(backend.requests).toHaveLength(1);
  });
});
