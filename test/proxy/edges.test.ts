/**
 * The proxy under bad input and bad upstreams: every failure is a clean 4xx/5xx with the standard body,
 * never a crash, a hang or a leaked socket. Plus the spec rules on truncation, empty streams, legacy
 * completions, token counting, embeddings and the relay route.
 */
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import OpenAI from 'openai';
import Anthropic from '@anthropic-ai/sdk';
import type { MockUpstream } from '../mocks/upstream.js';
import type { RouterProcess } from '../support/router-daemon.js';
import { startProxyEnv, type ProxyEnv } from '../support/proxy-env.js';

let mock: MockUpstream;
let router: RouterProcess;
let key: string;

let env: ProxyEnv;

beforeAll(async () => {
  env = await startProxyEnv([
    { provider: 'openai', apiKey: 'sk-up-openai' },
    { provider: 'anthropic', apiKey: 'sk-up-ant' },
  ]);
  ({ mock, router, key } = env);
}, 60_000);

afterAll(async () => {
  await env?.stop();
});

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${router.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  let json: any;
  try {
    json = JSON.parse(text);
  } catch {
    json = undefined;
  }
  return { status: res.status, json, text, headers: res.headers };
}

function expectStandardError(r: { json: any }, status?: number) {
  expect(r.json).toMatchObject({ error: { message: expect.any(String), type: expect.any(String), code: expect.any(String) } });
  expect(r.json.error.message).not.toMatch(/\/(home|tmp|work|usr)\/|\n\s+at /);
  if (status) expect(typeof status).toBe('number');
}

const chat = { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] };

describe('bad input', () => {
  it('malformed JSON is a 400 with the standard body', async () => {
    const r = await post('/v1/chat/completions', '{"model": "openai/gpt-4o", ');
    expect(r.status).toBe(400);
    expectStandardError(r);
  });

  it('a body that is not an object is a 400', async () => {
    const r = await post('/v1/chat/completions', '[1,2,3]');
    expect(r.status).toBe(400);
    expectStandardError(r);
  });

  it('a wrong content type is a 415', async () => {
    const r = await post('/v1/chat/completions', JSON.stringify(chat), { 'content-type': 'text/plain' });
    expect(r.status).toBe(415);
    expectStandardError(r);
  });

  it('a missing model is a 400 naming the field', async () => {
    const r = await post('/v1/chat/completions', { messages: chat.messages });
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe('model');
  });

  it('an unknown model is a 404 and never reaches an upstream', async () => {
    const before = mock.requests.length;
    for (const model of ['gpt-4o', 'nosuchprovider/gpt-4o', 'openai/']) {
      const r = await post('/v1/chat/completions', { ...chat, model });
      expect(r.status).toBe(404);
      expect(r.json.error.code).toBe('model_not_found');
    }
    expect(mock.requests.length).toBe(before);
  });

  it('an over-long model id is a 400', async () => {
    const r = await post('/v1/chat/completions', { ...chat, model: `openai/${'x'.repeat(600)}` });
    expect(r.status).toBe(400);
  });

  it('a non-boolean stream flag is a 400', async () => {
    const r = await post('/v1/chat/completions', { ...chat, stream: 'yes' });
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe('stream');
  });

  it('an invalid request on the translation path is a 400 from the codec', async () => {
    // Anthropic clients must send max_tokens; routed to an OpenAI upstream, router validates it itself.
    const r = await post('/v1/messages', { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] });
    expect(r.status).toBe(400);
    expectStandardError(r);
  });

  it('bodies over the client body limit are a 413, at the limit they pass', async () => {
    expect((await router.manage('PATCH', '/api/settings', { maxRequestBodyBytes: 2048 })).status).toBe(200);
    try {
      const base = JSON.stringify({ ...chat, messages: [{ role: 'user', content: '' }] });
      const fill = (n: number) => JSON.stringify({ ...chat, messages: [{ role: 'user', content: 'x'.repeat(n - base.length) }] });
      expect(Buffer.byteLength(fill(2048))).toBe(2048);
      expect((await post('/v1/chat/completions', fill(2048))).status).toBe(200);
      const over = await post('/v1/chat/completions', fill(2049));
      expect(over.status).toBe(413);
      expectStandardError(over);
    } finally {
      await router.manage('PATCH', '/api/settings', { maxRequestBodyBytes: 32 * 1024 * 1024 });
    }
  });

  it('stored-state fields are refused, not dropped, when the upstream cannot honour them', async () => {
    const r = await post('/v1/responses', { model: 'anthropic/claude-haiku-4-5', input: 'hi', previous_response_id: 'resp_1' });
    expect(r.status).toBe(400);
    expect(r.json.error.param).toBe('previous_response_id');
  });

  it('no key is a 401, a key in the query string is ignored', async () => {
    const res = await fetch(`${router.url}/v1/chat/completions?key=${key}&api_key=${key}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(chat),
    });
    expect(res.status).toBe(401);
  });
});

describe('bad upstreams', () => {
  it('a 200 with a body that is not JSON is a 502', async () => {
    mock.enqueue({ type: 'garbage' });
    const r = await post('/v1/chat/completions', chat);
    expect(r.status).toBe(502);
    expectStandardError(r);
  });

  it('a garbage stream is an error, never a synthetic success', async () => {
    mock.enqueue({ type: 'garbage' });
    const r = await post('/v1/chat/completions', { ...chat, stream: true });
    expect(r.status).toBe(502);
  });

  it('an empty Anthropic stream is an error, never a synthetic success (spec rule 4)', async () => {
    mock.enqueue({ type: 'empty-stream' });
    const client = new Anthropic({ apiKey: key, baseURL: router.url, maxRetries: 0 });
    await expect(
      client.messages.stream({ model: 'anthropic/claude-haiku-4-5', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }).finalMessage(),
    ).rejects.toMatchObject({ status: 502 });
  });

  it('an upstream that hangs gets a clean timeout at the request deadline', async () => {
    await router.manage('PATCH', '/api/settings', { requestDeadlineMs: 1000 });
    try {
      mock.enqueue({ type: 'hang' });
      const t0 = Date.now();
      const r = await post('/v1/chat/completions', chat);
      expect(r.status).toBe(504);
      expectStandardError(r);
      expect(Date.now() - t0).toBeLessThan(3000);
    } finally {
      await router.manage('PATCH', '/api/settings', { requestDeadlineMs: 600_000 });
    }
  });

  it('a stream dropped after bytes reached the client ends with one error event', async () => {
    mock.enqueue({ type: 'drop-mid-stream', afterChunks: 3, then: { type: 'text', text: 'one two three four five six', chunks: 6 } });
    const r = await post('/v1/chat/completions', { ...chat, stream: true });
    expect(r.status).toBe(200);
    const errors = r.text.split('\n\n').filter((e) => e.includes('"error"'));
    expect(errors).toHaveLength(1);
    expect(r.text).not.toContain('[DONE]');
    const client = new OpenAI({ apiKey: key, baseURL: `${router.url}/v1`, maxRetries: 0 });
    mock.enqueue({ type: 'drop-mid-stream', afterChunks: 3, then: { type: 'text', text: 'one two three four five six', chunks: 6 } });
    await expect(
      (async () => {
        for await (const _ of (await client.chat.completions.create({ ...chat, stream: true } as any)) as unknown as AsyncIterable<unknown>) void _;
      })(),
    ).rejects.toThrow();
    expect((await fetch(`${router.url}/api/health`)).status).toBe(200);
  });

  it('a client that disconnects mid-stream aborts the upstream request', async () => {
    mock.enqueue({ type: 'slow-stream', intervalMs: 200, then: { type: 'text', text: 'a b c d e f g h i j', chunks: 10 } });
    const before = mock.openConnections();
    const ac = new AbortController();
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...chat, stream: true }),
      signal: ac.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    ac.abort();
    // The router destroys its upstream socket: the mock's open connections fall back.
    const deadline = Date.now() + 3000;
    while (mock.openConnections() > before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(mock.openConnections()).toBeLessThanOrEqual(before);
  });

  it('upstream errors keep their provider object same-format (message as [code]: text), and are standard bodies cross-format', async () => {
    mock.enqueue({ type: 'status', status: 400, message: 'bad thing', code: 'invalid_value' });
    const same = await post('/v1/chat/completions', chat);
    expect(same.status).toBe(400);
    expect(same.json.error).toMatchObject({ message: '[invalid_value]: bad thing', code: 'invalid_value' });
    mock.enqueue({ type: 'status', status: 400, message: 'bad thing' });
    const cross = await post('/v1/messages', { model: 'openai/gpt-4o', max_tokens: 20, messages: [{ role: 'user', content: 'hi' }] });
    expect(cross.status).toBe(400);
    expect(cross.json.error.message).toMatch(/^\[[^\]]+\]: bad thing$/);
  });
});

describe('spec rules and other endpoints', () => {
  it('a reply truncated by max_tokens is a success (spec rule 3)', async () => {
    mock.enqueue({ type: 'max-tokens', text: 'Partial' });
    const r = await post('/v1/messages', { model: 'openai/gpt-4o', max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] });
    expect(r.status).toBe(200);
    expect(r.json.stop_reason).toBe('max_tokens');
  });

  it('legacy completions return the text_completion shape, also when translated', async () => {
    const r = await post('/v1/completions', { model: 'anthropic/claude-haiku-4-5', prompt: 'Say hi', max_tokens: 20 });
    expect(r.status).toBe(200);
    expect(r.json.object).toBe('text_completion');
    expect(r.json.choices[0].text).toBe('Hello from the mock.');
    const native = await post('/v1/completions', { model: 'openai/gpt-3.5-turbo-instruct', prompt: 'Say hi' });
    expect(native.json.object).toBe('text_completion');
    expect(mock.requests.at(-1)!.path).toBe('/v1/completions');
  });

  it('count_tokens is native for Anthropic targets and estimated otherwise', async () => {
    const body = { messages: [{ role: 'user', content: 'How many tokens is this sentence?' }] };
    const native = await post('/v1/messages/count_tokens', { ...body, model: 'anthropic/claude-haiku-4-5' });
    expect(native.status).toBe(200);
    expect(mock.requests.at(-1)!.path).toBe('/v1/messages/count_tokens');
    const estimated = await post('/v1/messages/count_tokens', { ...body, model: 'openai/gpt-4o' });
    expect(estimated.status).toBe(200);
    expect(estimated.json.input_tokens).toBeGreaterThan(5);
  });

  it('embeddings strip upstream content-encoding (and decode a body compressed anyway)', async () => {
    const payload = JSON.stringify({ object: 'list', data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2] }], model: 'm', usage: { prompt_tokens: 1, total_tokens: 1 } });
    mock.enqueue({
      type: 'custom',
      fn: (_req: unknown, res: any) => {
        res.writeHead(200, { 'content-type': 'application/json', 'content-encoding': 'gzip' });
        res.end(gzipSync(payload));
      },
    } as any);
    const r = await post('/v1/embeddings', { model: 'openai/text-embedding-3-small', input: 'hello' });
    expect(r.status).toBe(200);
    expect(r.headers.get('content-encoding')).toBeNull();
    expect(r.json.data[0].embedding).toEqual([0.1, 0.2]);
  });

  it('the relay route proxies like chat completions', async () => {
    const r = await post('/api/v1/relay/chat/completions', chat);
    expect(r.status).toBe(200);
    expect(r.json.choices[0].message.content).toBe('Hello from the mock.');
  });

  it('proxied replies carry Server-Timing with router and upstream time, and the version header', async () => {
    const r = await post('/v1/chat/completions', chat);
    expect(r.headers.get('server-timing')).toMatch(/^router;dur=\d+(\.\d+)?, upstream;dur=\d+(\.\d+)?$/);
    expect(r.headers.get('x-router-version')).toMatch(/^\d+\.\d+\.\d+$/);
  });
});

describe('secrets in upstream errors', () => {
  it('an upstream error that quotes the upstream key reaches the client masked', async () => {
    const upstreamKey = 'gsk-abcdefghijklmnop123456';
    await router.addConnection({ provider: 'groq', apiKey: upstreamKey, providerSpecificData: { baseUrl: mock.openaiBase } });
    // Only chat calls fail: the router's own recovery check (GET /models) must not eat the scripted reply.
    const off = mock.handle((req) =>
      req.endpoint === 'openai.chat' && req.model === 'llama-3.3-70b-versatile'
        ? { type: 'status', status: 401, message: `Invalid API key: ${upstreamKey}` }
        : undefined,
    );
    try {
      for (const stream of [false, true]) {
        const r = await post('/v1/chat/completions', { model: 'groq/llama-3.3-70b-versatile', messages: [{ role: 'user', content: 'hi' }], stream });
        expect(r.status, r.text).toBe(502);
        expect(r.text).not.toContain(upstreamKey);
        expect(r.text).toContain('gsk-...3456');
      }
    } finally {
      off();
    }
  });
});

describe('output-token limit name in translated Chat Completions requests', () => {
  it('OpenAI gets max_completion_tokens; an OpenAI-compatible provider gets max_tokens', async () => {
    await router.addConnection({ provider: 'deepseek', apiKey: 'sk-up-deepseek', providerSpecificData: { baseUrl: mock.openaiBase } });
    const messages = { max_tokens: 77, messages: [{ role: 'user', content: 'hi' }] };
    for (const [model, field, absent] of [
      ['openai/gpt-4o', 'max_completion_tokens', 'max_tokens'],
      ['deepseek/deepseek-chat', 'max_tokens', 'max_completion_tokens'],
    ] as const) {
      for (const stream of [false, true]) {
        const before = mock.requests.length;
        const r = await post('/v1/messages', { model, stream, ...messages });
        expect(r.status, r.text).toBe(200);
        const sent = mock.requests.slice(before).find((q) => q.endpoint === 'openai.chat')!;
        expect(sent.json[field], `${model} stream=${stream}`).toBe(77);
        expect(sent.json).not.toHaveProperty(absent);
      }
    }
  });
});
