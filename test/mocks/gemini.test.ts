import { ApiError, FinishReason, GoogleGenAI } from '@google/genai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inputTokensFor, tokenCount } from './reply.js';
import { startMockUpstream, type MockUpstream } from './upstream.js';

let mock: MockUpstream;
let ai: GoogleGenAI;

beforeAll(async () => {
  mock = await startMockUpstream();
  ai = new GoogleGenAI({ apiKey: 'gm-test', httpOptions: { baseUrl: mock.url } });
});
afterEach(() => mock.reset());
afterAll(() => mock.close());

const model = 'gemini-2.5-flash';

describe('generateContent', () => {
  it('answers with a candidate, finish reason, usage, modelVersion and responseId', async () => {
    const res = await ai.models.generateContent({ model, contents: 'Say hello' });
    expect(res.text).toBe('Hello from the mock.');
    expect(res.candidates![0]!.finishReason).toBe(FinishReason.STOP);
    expect(res.candidates![0]!.content!.role).toBe('model');
    const input = inputTokensFor(mock.requests[0]!);
    expect(res.usageMetadata).toMatchObject({
      promptTokenCount: input,
      candidatesTokenCount: tokenCount('Hello from the mock.'),
      totalTokenCount: input + tokenCount('Hello from the mock.'),
    });
    expect(res.modelVersion).toBe(model);
    expect(res.responseId).toBeTruthy();
    expect(mock.requests[0]).toMatchObject({ endpoint: 'gemini.generate', model, path: `/v1beta/models/${model}:generateContent` });
    expect(mock.requests[0]!.headers['x-goog-api-key']).toBe('gm-test');
  });

  it('streams several chunks over alt=sse with usage complete only on the last', async () => {
    mock.enqueue({ type: 'text', text: 'one two three four', chunks: 4 });
    const chunks = [];
    for await (const c of await ai.models.generateContentStream({ model, contents: 'count' })) chunks.push(c);
    expect(chunks).toHaveLength(4);
    expect(chunks.map((c) => c.text).join('')).toBe('one two three four');
    expect(chunks.slice(0, -1).every((c) => c.candidates![0]!.finishReason === undefined)).toBe(true);
    expect(chunks.at(-1)!.candidates![0]!.finishReason).toBe(FinishReason.STOP);
    expect(chunks[0]!.usageMetadata!.candidatesTokenCount).toBeUndefined();
    expect(chunks.at(-1)!.usageMetadata!.candidatesTokenCount).toBe(tokenCount('one two three four'));
    expect(mock.requests[0]).toMatchObject({ endpoint: 'gemini.stream', stream: true, query: { alt: 'sse' } });
  });

  it('separates SSE events with CRLF pairs like the real API', async () => {
    const res = await fetch(`${mock.geminiBase}/models/${model}:streamGenerateContent?alt=sse`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-goog-api-key': 'k' },
      body: JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }),
    });
    const text = await res.text();
    expect(text.split('\r\n\r\n').filter(Boolean)).toHaveLength(3);
    expect(text.startsWith('data: {"candidates"')).toBe(true);
  });

  it('returns parallel function calls, non-streaming and streaming', async () => {
    const calls = [
      { name: 'get_weather', arguments: { city: 'Paris' } },
      { name: 'get_time', arguments: { tz: 'UTC' } },
    ];
    mock.enqueue({ type: 'tool-calls', calls }, { type: 'tool-calls', calls });
    const res = await ai.models.generateContent({ model, contents: 'weather?' });
    expect(res.functionCalls).toEqual([
      { name: 'get_weather', args: { city: 'Paris' } },
      { name: 'get_time', args: { tz: 'UTC' } },
    ]);
    const chunks = [];
    for await (const c of await ai.models.generateContentStream({ model, contents: 'weather?' })) chunks.push(c);
    expect(chunks.flatMap((c) => c.functionCalls ?? []).map((f) => f.name)).toEqual(['get_weather', 'get_time']);
    expect(chunks.at(-1)!.candidates![0]!.finishReason).toBe(FinishReason.STOP);
  });

  it('sends thoughts as thought parts and a thoughtSignature on the first answer part', async () => {
    const thinking = { type: 'thinking' as const, thinking: 'Think first.', signature: 'c2ln', text: 'Answer.' };
    mock.enqueue(thinking, thinking);
    const res = await ai.models.generateContent({ model, contents: 'q' });
    const parts = res.candidates![0]!.content!.parts!;
    expect(parts[0]).toEqual({ text: 'Think first.', thought: true });
    expect(parts[1]).toEqual({ text: 'Answer.', thoughtSignature: 'c2ln' });
    expect(res.text).toBe('Answer.');
    expect(res.usageMetadata!.thoughtsTokenCount).toBe(tokenCount('Think first.'));
    const chunks = [];
    for await (const c of await ai.models.generateContentStream({ model, contents: 'q' })) chunks.push(c);
    const streamed = chunks.flatMap((c) => c.candidates![0]!.content!.parts!);
    expect(streamed.filter((p) => p.thought).map((p) => p.text).join('')).toBe('Think first.');
    expect(streamed.find((p) => !p.thought)!.thoughtSignature).toBe('c2ln');
  });

  it('reports MAX_TOKENS and SAFETY finish reasons', async () => {
    mock.enqueue({ type: 'max-tokens' }, { type: 'content-filter' }, { type: 'content-filter' });
    const cut = await ai.models.generateContent({ model, contents: 'q' });
    expect(cut.candidates![0]!.finishReason).toBe(FinishReason.MAX_TOKENS);
    expect(cut.text).toBe('Hello from');
    const blocked = await ai.models.generateContent({ model, contents: 'q' });
    expect(blocked.candidates![0]!.finishReason).toBe(FinishReason.SAFETY);
    expect(blocked.candidates![0]!.content).toBeUndefined();
    expect(blocked.text).toBeUndefined();
    const chunks = [];
    for await (const c of await ai.models.generateContentStream({ model, contents: 'q' })) chunks.push(c);
    expect(chunks).toHaveLength(1);
    expect(chunks[0]!.candidates![0]!.finishReason).toBe(FinishReason.SAFETY);
  });

  it('lists models', async () => {
    const names: string[] = [];
    for await (const m of await ai.models.list()) names.push(m.name!);
    expect(names).toEqual(['models/gemini-2.5-flash', 'models/gemini-2.5-pro']);
    expect(mock.requests[0]!.endpoint).toBe('gemini.models');
  });

  it('keeps slashes in model names (router-style prefixes)', async () => {
    await ai.models.generateContent({ model: 'openai/gpt-4o', contents: 'q' });
    expect(mock.requests[0]).toMatchObject({ model: 'openai/gpt-4o', endpoint: 'gemini.generate' });
  });
});

describe('errors', () => {
  it('surfaces statuses as ApiError with the Google error body', async () => {
    mock.enqueue({ type: 'status', status: 429 }, { type: 'status', status: 503 });
    const limited = await ai.models.generateContent({ model, contents: 'q' }).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(ApiError);
    expect((limited as ApiError).status).toBe(429);
    expect(JSON.parse((limited as ApiError).message)).toMatchObject({ error: { code: 429, status: 'RESOURCE_EXHAUSTED' } });
    const down = await ai.models.generateContent({ model, contents: 'q' }).catch((e: unknown) => e);
    expect((down as ApiError).status).toBe(503);
    expect((down as ApiError).message).toContain('UNAVAILABLE');
  });

  it('raises an error chunk inside a 200 stream as ApiError', async () => {
    mock.enqueue({ type: 'stream-error', afterChunks: 1, status: 500 });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const c of await ai.models.generateContentStream({ model, contents: 'q' })) seen.push(c.text ?? '');
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).status).toBe(500);
    expect(seen).toHaveLength(1);
  });
});
