import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from './upstream.js';

let mock: MockUpstream;
let openai: OpenAI;
let anthropic: Anthropic;
let gemini: GoogleGenAI;

beforeAll(async () => {
  mock = await startMockUpstream({ text: 'Custom default.' });
  // logLevel off: the garbage tests make both SDKs log the unparsable frames they reject.
  openai = new OpenAI({ apiKey: 'sk-test', baseURL: mock.openaiBase, maxRetries: 0, logLevel: 'off' });
  anthropic = new Anthropic({ apiKey: 'sk-ant', baseURL: mock.url, maxRetries: 0, logLevel: 'off' });
  gemini = new GoogleGenAI({ apiKey: 'gm', httpOptions: { baseUrl: mock.url } });
});
afterEach(() => mock.reset());
afterAll(() => mock.close());

const messages = [{ role: 'user' as const, content: 'Hi' }];
const claude = { model: 'claude-haiku-4-5', max_tokens: 64, messages };
const chat = (model = 'gpt-4o') => openai.chat.completions.create({ model, messages });
const chatStream = (model = 'gpt-4o') => openai.chat.completions.create({ model, messages, stream: true });

/** Collects stream items until the stream ends or fails. */
async function drain<T>(iterable: AsyncIterable<T>): Promise<{ items: T[]; error?: unknown }> {
  const items: T[] = [];
  try {
    for await (const item of iterable) items.push(item);
    return { items };
  } catch (error) {
    return { items, error };
  }
}

describe('scripting', () => {
  it('answers per model and per call count; newest handler first; undefined falls through', async () => {
    mock.handle((req) => (req.model === 'gpt-a' ? { type: 'text', text: 'from A' } : undefined));
    let calls = 0;
    const remove = mock.handle((req) => (req.model === 'gpt-b' && calls++ === 0 ? { type: 'status', status: 503 } : undefined));
    expect((await chat('gpt-a')).choices[0]!.message.content).toBe('from A');
    await expect(chat('gpt-b')).rejects.toMatchObject({ status: 503 });
    expect((await chat('gpt-b')).choices[0]!.message.content).toBe('Custom default.');
    remove();
    calls = 0;
    expect((await chat('gpt-b')).choices[0]!.message.content).toBe('Custom default.');
  });

  it('serves queued behaviors first, in order, and reset() forgets everything', async () => {
    mock.handle(() => ({ type: 'text', text: 'handler' }));
    mock.enqueue({ type: 'text', text: 'first' }, { type: 'text', text: 'second' });
    const texts = [];
    for (let i = 0; i < 3; i++) texts.push((await chat()).choices[0]!.message.content);
    expect(texts).toEqual(['first', 'second', 'handler']);
    mock.enqueue({ type: 'text', text: 'stale' });
    mock.reset();
    expect(mock.requests).toHaveLength(0);
    expect((await chat()).choices[0]!.message.content).toBe('Custom default.');
    expect(mock.requests[0]!.index).toBe(0);
  });

  it('records method, path, query, headers, raw body and parsed JSON', async () => {
    await fetch(`${mock.url}/v1beta/models/gemini-2.5-pro:generateContent?key=abc`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-custom': 'yes' },
      body: '{"contents":[]}',
    });
    expect(mock.requests[0]).toMatchObject({
      method: 'POST',
      path: '/v1beta/models/gemini-2.5-pro:generateContent',
      query: { key: 'abc' },
      body: '{"contents":[]}',
      json: { contents: [] },
      provider: 'gemini',
      model: 'gemini-2.5-pro',
    });
    expect(mock.requests[0]!.headers['x-custom']).toBe('yes');
  });

  it('answers /v1/models in the Anthropic shape only when anthropic-version is sent', async () => {
    const asOpenAI = await (await fetch(`${mock.url}/v1/models`, { headers: { authorization: 'Bearer k' } })).json();
    const asAnthropic = await (
      await fetch(`${mock.url}/v1/models`, { headers: { 'x-api-key': 'k', 'anthropic-version': '2023-06-01' } })
    ).json();
    expect(asOpenAI.object).toBe('list');
    expect(asOpenAI.data[0]).toMatchObject({ object: 'model', owned_by: 'system' });
    expect(asAnthropic.has_more).toBe(false);
    expect(asAnthropic.data[0]).toMatchObject({ type: 'model', display_name: expect.any(String) });
    expect(asAnthropic.first_id).toBe(asAnthropic.data[0].id);
  });

  it('answers unknown routes 404 in the provider format and custom behaviors raw', async () => {
    const res = await fetch(`${mock.url}/v1/nope`, { method: 'POST' });
    expect(res.status).toBe(404);
    expect((await res.json()).error.message).toBe('Invalid URL (POST /v1/nope)');
    mock.enqueue({ type: 'custom', fn: (_req, r) => void r.writeHead(418, { 'x-teapot': '1' }).end('short and stout') });
    const tea = await fetch(`${mock.openaiBase}/chat/completions`, { method: 'POST', body: '{}' });
    expect([tea.status, tea.headers.get('x-teapot'), await tea.text()]).toEqual([418, '1', 'short and stout']);
  });
});

describe('auth', () => {
  it('enforces requireKey with each provider header and 401 in its own format', async () => {
    const locked = await startMockUpstream({ requireKey: 'right' });
    try {
      const bad = new OpenAI({ apiKey: 'wrong', baseURL: locked.openaiBase, maxRetries: 0 });
      await expect(bad.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
      const good = new OpenAI({ apiKey: 'right', baseURL: locked.openaiBase, maxRetries: 0 });
      expect((await good.models.list()).data.length).toBeGreaterThan(0);

      const badClaude = new Anthropic({ apiKey: 'wrong', baseURL: locked.url, maxRetries: 0 });
      const err = await badClaude.messages.create(claude).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Anthropic.AuthenticationError);
      expect(err).toMatchObject({ type: 'authentication_error' });
      const viaHeader = await fetch(`${locked.anthropicBase}/messages`, {
        method: 'POST',
        headers: { 'x-api-key': 'right', 'content-type': 'application/json' },
        body: JSON.stringify(claude),
      });
      expect(viaHeader.status).toBe(200);

      const badGemini = new GoogleGenAI({ apiKey: 'wrong', httpOptions: { baseUrl: locked.url } });
      const gErr = await badGemini.models.generateContent({ model: 'gemini-2.5-flash', contents: 'q' }).catch((e) => e);
      expect(gErr).toBeInstanceOf(ApiError);
      expect((gErr as ApiError).status).toBe(401);
      expect((gErr as ApiError).message).toContain('API_KEY_INVALID');
      const viaQuery = await fetch(`${locked.geminiBase}/models/gemini-2.5-flash:generateContent?key=right`, {
        method: 'POST',
        body: '{"contents":[]}',
      });
      expect(viaQuery.status).toBe(200);
    } finally {
      await locked.close();
    }
  });

  it('can answer a wrong Gemini key the way the real API does (400 INVALID_ARGUMENT)', async () => {
    const locked = await startMockUpstream({ requireKey: 'right', geminiAuthStatus: 400 });
    const res = await fetch(`${locked.geminiBase}/models/m:generateContent`, { method: 'POST', body: '{}' });
    expect(res.status).toBe(400);
    expect((await res.json()).error.status).toBe('INVALID_ARGUMENT');
    await locked.close();
  });
});

describe('transport behaviors', () => {
  it('delay holds the headers back, then runs the inner behavior', async () => {
    mock.enqueue({ type: 'delay', ms: 250, then: { type: 'status', status: 500 } }, { type: 'delay', ms: 250 });
    const t0 = Date.now();
    await expect(chat()).rejects.toBeInstanceOf(OpenAI.InternalServerError);
    expect(Date.now() - t0).toBeGreaterThanOrEqual(240);
    const t1 = Date.now();
    expect((await chat()).choices[0]!.message.content).toBe('Custom default.');
    expect(Date.now() - t1).toBeGreaterThanOrEqual(240);
  });

  it('slow-stream spaces the chunks out', async () => {
    mock.enqueue({ type: 'slow-stream', intervalMs: 80, then: { type: 'text', text: 'a b c', chunks: 3 } });
    const stamps: number[] = [];
    const sentAt = Date.now();
    for await (const _ of await chatStream()) stamps.push(Date.now());
    expect(stamps.length).toBe(5);
    // Four gaps of 80 ms (60 with timer slack): the last chunk cannot arrive sooner after the request. (Gaps between two
    // arrivals are not measured: a client that was not scheduled for a while reads queued chunks at once.)
    expect(stamps.at(-1)! - sentAt).toBeGreaterThanOrEqual(4 * 60);
  });

  it('drop-mid-stream sends N chunks then kills the socket, for every provider', async () => {
    mock.enqueue({ type: 'drop-mid-stream', afterChunks: 3 });
    const o = await drain(await chatStream());
    expect(o.items).toHaveLength(3);
    expect(o.error).toBeDefined();

    mock.enqueue({ type: 'drop-mid-stream', afterChunks: 3 });
    await expect(anthropic.messages.stream(claude).finalMessage()).rejects.toThrow();

    mock.enqueue({ type: 'drop-mid-stream', afterChunks: 1 });
    const g = await drain(await gemini.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'q' }));
    expect(g.items).toHaveLength(1);
    expect(g.error).toBeDefined();

    mock.enqueue({ type: 'drop-mid-stream' });
    await expect(chat()).rejects.toThrow();
  });

  it('garbage answers 200 with a body no client can parse', async () => {
    mock.enqueue({ type: 'garbage' }, { type: 'garbage' }, { type: 'garbage' }, { type: 'garbage' });
    await expect(chat()).rejects.toThrow();
    expect((await drain(await chatStream())).error).toBeDefined();
    await expect(anthropic.messages.stream(claude).finalMessage()).rejects.toThrow();
    await expect(gemini.models.generateContent({ model: 'gemini-2.5-flash', contents: 'q' })).rejects.toThrow();
  });

  it('empty-stream opens a 200 event stream and closes it without a single event', async () => {
    mock.enqueue({ type: 'empty-stream' }, { type: 'empty-stream' }, { type: 'empty-stream' }, { type: 'empty-stream' });
    const raw = await fetch(`${mock.openaiBase}/chat/completions`, {
      method: 'POST',
      body: JSON.stringify({ model: 'gpt-4o', messages, stream: true }),
    });
    expect([raw.status, raw.headers.get('content-type'), await raw.text()]).toEqual([
      200,
      'text/event-stream; charset=utf-8',
      '',
    ]);
    const o = await drain(await chatStream());
    expect(o).toEqual({ items: [] });
    await expect(anthropic.messages.stream(claude).finalMessage()).rejects.toThrow();
    const g = await drain(await gemini.models.generateContentStream({ model: 'gemini-2.5-flash', contents: 'q' }));
    expect(g).toEqual({ items: [] });
  });
});

describe('lifecycle', () => {
  it('hang never answers; the client times out and close() releases the socket', async () => {
    const own = await startMockUpstream();
    own.handle(() => ({ type: 'hang' }));
    const client = new OpenAI({ apiKey: 'k', baseURL: own.openaiBase, maxRetries: 0, timeout: 300 });
    const t0 = Date.now();
    await expect(client.chat.completions.create({ model: 'm', messages })).rejects.toBeInstanceOf(
      OpenAI.APIConnectionTimeoutError,
    );
    expect(Date.now() - t0).toBeGreaterThanOrEqual(280);
    // A second hanging request whose client never gives up: only close() can end it.
    const pending = fetch(`${own.openaiBase}/chat/completions`, { method: 'POST', body: '{}' }).catch((e: unknown) => e);
    await own.waitForRequests(2);
    expect(own.openConnections()).toBeGreaterThanOrEqual(1);
    await own.close();
    expect(await pending).toBeInstanceOf(Error);
    expect(own.openConnections()).toBe(0);
  });

  it('close() leaves no sockets after keep-alive traffic and mid-stream failures', async () => {
    const own = await startMockUpstream();
    const client = new OpenAI({ apiKey: 'k', baseURL: own.openaiBase, maxRetries: 0 });
    await client.chat.completions.create({ model: 'm', messages });
    own.enqueue({ type: 'drop-mid-stream' }, { type: 'slow-stream', intervalMs: 1000 });
    await drain(await client.chat.completions.create({ model: 'm', messages, stream: true }));
    const slow = await client.chat.completions.create({ model: 'm', messages, stream: true });
    const reading = drain(slow);
    await own.waitForRequests(3);
    expect(own.openConnections()).toBeGreaterThanOrEqual(1);
    await own.close();
    expect((await reading).error).toBeDefined();
    expect(own.openConnections()).toBe(0);
  });

  it('waitForRequests times out with a clear message', async () => {
    await expect(mock.waitForRequests(1, 50)).rejects.toThrow('0 of 1 requests after 50 ms');
  });
});
