/**
 * POST /api/playground/improve-prompt in-process against the mock upstream: validation at every edge, the
 * Chat Completions request it sends through router's own pipeline, parsing of the model's answer (JSON,
 * fenced JSON, plain text), usage recorded against the caller's key, and the caller's quotas applied.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { improveInstruction, parseImproved } from '../../src/daemon/playground/improve.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { inputTokensFor, tokenCount } from '../mocks/reply.js';

const PATH = '/api/playground/improve-prompt';
let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let mock: MockUpstream;
let key: { id: string; key: string };

beforeAll(async () => {
  mock = await startMockUpstream();
  home = mkdtempSync(join(tmpdir(), 'router-improve-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
  key = await services.keys.create('caller', ['proxy']);
  const conn = await send('POST', '/api/providers', { provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } }, {
    'x-router-cli-token': services.cliToken,
  });
  expect(conn.status, JSON.stringify(conn.json)).toBe(201);
});
afterEach(() => mock.reset());
afterAll(async () => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
  await mock?.close();
});

async function send(method: string, path: string, body: unknown, headers: Record<string, string>) {
  const res = await app.request(
    `http://router.test${path}`,
    { method, headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) },
    { remoteAddress: '127.0.0.1' },
  );
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined, headers: res.headers };
}
const improve = (body: unknown, bearer = key.key) => send('POST', PATH, body, { authorization: `Bearer ${bearer}` });

/** Expects a 400 naming `param`, and no upstream call. */
async function refused(body: unknown, param: string) {
  const r = await improve(body);
  expect(r.status, JSON.stringify(r.json)).toBe(400);
  expect(r.json.error).toMatchObject({ type: 'invalid_request_error', code: 'bad_request', param });
  expect(mock.requests).toHaveLength(0);
}

describe('improve-prompt validation', () => {
  it('system and prompt: 50,000 characters pass, 50,001 are refused', async () => {
    expect((await improve({ model: 'openai/gpt-4o', system: 's'.repeat(50_000) })).status).toBe(200);
    expect((await improve({ model: 'openai/gpt-4o', prompt: 'p'.repeat(50_000) })).status).toBe(200);
    expect((await improve({ model: 'openai/gpt-4o', system: 's'.repeat(50_000), prompt: 'p'.repeat(50_000) })).status).toBe(200);
    mock.reset();
    await refused({ model: 'openai/gpt-4o', system: 's'.repeat(50_001) }, 'system');
    await refused({ model: 'openai/gpt-4o', prompt: 'p'.repeat(50_001) }, 'prompt');
    await refused({ model: 'openai/gpt-4o', system: 'ok', prompt: 'p'.repeat(50_001) }, 'prompt');
  });

  it('at least one of system or prompt is required (empty or blank counts as missing)', async () => {
    for (const body of [{}, { system: '' }, { prompt: '' }, { system: '  ', prompt: '\n' }]) {
      const r = await improve({ model: 'openai/gpt-4o', ...body });
      expect(r.status).toBe(400);
      expect(r.json.error.message).toMatch(/at least one of system or prompt/);
    }
    expect(mock.requests).toHaveLength(0);
  });

  it('model is required; tone is concise or detailed; types and unknown fields are checked', async () => {
    await refused({ prompt: 'x' }, 'model');
    await refused({ model: '', prompt: 'x' }, 'model');
    await refused({ model: 42, prompt: 'x' }, 'model');
    await refused({ model: 'openai/gpt-4o', prompt: 'x', tone: 'friendly' }, 'tone');
    await refused({ model: 'openai/gpt-4o', prompt: 'x', tone: 'CONCISE' }, 'tone');
    await refused({ model: 'openai/gpt-4o', prompt: 5 }, 'prompt');
    await refused({ model: 'openai/gpt-4o', system: null, prompt: 'x' }, 'system');
    await refused({ model: 'openai/gpt-4o', prompt: 'x', temperature: 1 }, 'body');
  });

  it('401 without a key or with an unknown key', async () => {
    const none = await send('POST', PATH, { model: 'openai/gpt-4o', prompt: 'x' }, {});
    expect(none.status).toBe(401);
    expect((await improve({ model: 'openai/gpt-4o', prompt: 'x' }, 'rk_unknown')).status).toBe(401);
    expect(mock.requests).toHaveLength(0);
  });
});

describe('improve-prompt through the chat pipeline', () => {
  it('sends a non-streaming Chat Completions request with the instruction and the prompts, and replies with the parsed answer', async () => {
    const answer = JSON.stringify({ improvedSystem: 'You are a precise assistant.', improvedPrompt: 'List three facts about Mars.' });
    mock.enqueue({ type: 'text', text: answer });
    const r = await improve({ model: 'openai/gpt-4o', system: 'be good', prompt: 'mars facts' });
    expect(r.status, JSON.stringify(r.json)).toBe(200);

    expect(mock.requests).toHaveLength(1);
    const sent = mock.requests[0]!;
    expect(sent.endpoint).toBe('openai.chat');
    expect(sent.headers.authorization).toBe('Bearer sk-up');
    expect(sent.json.model).toBe('gpt-4o');
    expect(sent.json.stream ?? false).toBe(false);
    expect(sent.json.messages).toHaveLength(2);
    expect(sent.json.messages[0]).toEqual({ role: 'system', content: improveInstruction('concise') });
    expect(sent.json.messages[0].content).toMatch(/improvedSystem/);
    expect(sent.json.messages[1].role).toBe('user');
    expect(sent.json.messages[1].content).toContain(JSON.stringify({ system: 'be good', prompt: 'mars facts' }, null, 2));

    expect(r.json).toEqual({
      improvedSystem: 'You are a precise assistant.',
      improvedPrompt: 'List three facts about Mars.',
      tokensIn: inputTokensFor(sent),
      tokensOut: tokenCount(answer),
    });
  });

  it('tone detailed changes the instruction', async () => {
    await improve({ model: 'openai/gpt-4o', prompt: 'x', tone: 'detailed' });
    expect(mock.requests[0]!.json.messages[0].content).toBe(improveInstruction('detailed'));
    expect(improveInstruction('detailed')).not.toBe(improveInstruction('concise'));
  });

  it('records usage against the caller key with the playground endpoint', async () => {
    mock.enqueue({ type: 'text', text: '{"improvedPrompt":"better"}', usage: { inputTokens: 321, outputTokens: 45 } });
    const r = await improve({ model: 'openai/gpt-4o', prompt: 'make it better' });
    expect(r.json).toMatchObject({ improvedSystem: '', improvedPrompt: 'better', tokensIn: 321, tokensOut: 45 });
    services.usage.flush();
    const row = services.db
      .prepare('SELECT api_key_id, endpoint, provider, model, requested_model, status, tokens_in, tokens_out, cost_usd FROM usage_log ORDER BY id DESC LIMIT 1')
      .get() as Record<string, unknown>;
    expect(row).toMatchObject({
      api_key_id: key.id,
      endpoint: PATH,
      provider: 'openai',
      model: 'gpt-4o',
      requested_model: 'openai/gpt-4o',
      status: 200,
      tokens_in: 321,
      tokens_out: 45,
    });
    expect(row.cost_usd as number).toBeGreaterThan(0);
  });

  it("the caller's quotas apply: model scopes and the daily request limit", async () => {
    const scoped = await services.keys.create('scoped', ['proxy', 'model:anthropic/*']);
    const denied = await improve({ model: 'openai/gpt-4o', prompt: 'x' }, scoped.key);
    expect(denied.status).toBe(403);
    const limited = await services.keys.create('limited', ['proxy'], { dailyRequestLimit: 1 });
    expect((await improve({ model: 'openai/gpt-4o', prompt: 'x' }, limited.key)).status).toBe(200);
    const second = await improve({ model: 'openai/gpt-4o', prompt: 'x' }, limited.key);
    expect(second.status).toBe(429);
    expect(second.json.error.type).toBe('rate_limit_error');
    expect(mock.requests).toHaveLength(1);
  });

  it('a plain-text answer becomes the improved prompt; fenced JSON is read', async () => {
    mock.enqueue({ type: 'text', text: 'Write a haiku about the sea.' });
    expect((await improve({ model: 'openai/gpt-4o', system: 'sys', prompt: 'poem' })).json).toMatchObject({
      improvedSystem: 'sys',
      improvedPrompt: 'Write a haiku about the sea.',
    });
    mock.enqueue({ type: 'text', text: 'Here you go:\n```json\n{"improvedSystem": "S", "improvedPrompt": "P"}\n```' });
    expect((await improve({ model: 'openai/gpt-4o', prompt: 'poem' })).json).toMatchObject({ improvedSystem: 'S', improvedPrompt: 'P' });
  });

  it('an unknown model is refused; an upstream error is passed through', async () => {
    const unknown = await improve({ model: 'nope/model', prompt: 'x' });
    expect(unknown.status).toBeGreaterThanOrEqual(400);
    expect(unknown.status).toBeLessThan(500);
    mock.enqueue({ type: 'status', status: 400, message: 'bad things' });
    const failed = await improve({ model: 'openai/gpt-4o', prompt: 'x' });
    expect(failed.status).toBe(400);
    expect(failed.json.error.message).toMatch(/bad things/);
  });
});

describe('parseImproved', () => {
  const given = { system: 'S0', prompt: 'P0' };
  it.each([
    ['{"improvedSystem":"S","improvedPrompt":"P"}', { improvedSystem: 'S', improvedPrompt: 'P' }],
    ['  {"improvedPrompt":"P"}  ', { improvedSystem: 'S0', improvedPrompt: 'P' }],
    ['Sure! {"improvedSystem":"S","improvedPrompt":"P"} Enjoy.', { improvedSystem: 'S', improvedPrompt: 'P' }],
    ['```\n{"improvedSystem":"S","improvedPrompt":"P"}\n```', { improvedSystem: 'S', improvedPrompt: 'P' }],
    ['{"other": 1}', { improvedSystem: 'S0', improvedPrompt: '{"other": 1}' }],
    ['[1,2]', { improvedSystem: 'S0', improvedPrompt: '[1,2]' }],
    ['{"improvedPrompt": 5}', { improvedSystem: 'S0', improvedPrompt: '{"improvedPrompt": 5}' }],
    ['  just text  ', { improvedSystem: 'S0', improvedPrompt: 'just text' }],
    ['{broken', { improvedSystem: 'S0', improvedPrompt: '{broken' }],
  ])('%s', (text, expected) => {
    expect(parseImproved(text, given)).toEqual(expected);
  });
});
