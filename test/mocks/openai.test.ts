import OpenAI from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inputTokensFor, tokenCount } from './reply.js';
import { startMockUpstream, type MockUpstream } from './upstream.js';

let mock: MockUpstream;
let client: OpenAI;

beforeAll(async () => {
  mock = await startMockUpstream();
  client = new OpenAI({ apiKey: 'sk-test', baseURL: mock.openaiBase, maxRetries: 0 });
});
afterEach(() => mock.reset());
afterAll(() => mock.close());

const messages = [{ role: 'user' as const, content: 'Say hello' }];
const weather = { name: 'get_weather', arguments: { city: 'Paris', unit: 'celsius' } };
const time = { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' };

describe('chat completions', () => {
  it('answers non-streaming with text, finish reason and deterministic usage', async () => {
    const res = await client.chat.completions.create({ model: 'gpt-4o-mini', messages });
    expect(res.object).toBe('chat.completion');
    expect(res.model).toBe('gpt-4o-mini');
    expect(res.choices[0]!.message.content).toBe('Hello from the mock.');
    expect(res.choices[0]!.finish_reason).toBe('stop');
    const input = inputTokensFor(mock.requests[0]!);
    expect(res.usage).toMatchObject({
      prompt_tokens: input,
      completion_tokens: tokenCount('Hello from the mock.'),
      total_tokens: input + tokenCount('Hello from the mock.'),
      prompt_tokens_details: { cached_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: 0 },
    });
    expect(mock.requests[0]).toMatchObject({ endpoint: 'openai.chat', model: 'gpt-4o-mini', stream: false });
    expect(mock.requests[0]!.headers.authorization).toBe('Bearer sk-test');
  });

  it('streams several deltas and a usage-only final chunk with include_usage', async () => {
    mock.enqueue({ type: 'text', text: 'One two three four', chunks: 4 });
    const stream = await client.chat.completions.create({
      model: 'gpt-4o-mini',
      messages,
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.every((c) => c.object === 'chat.completion.chunk')).toBe(true);
    const text = chunks.map((c) => c.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe('One two three four');
    expect(chunks.filter((c) => c.choices[0]?.delta.content).length).toBe(4);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.prompt_tokens).toBe(inputTokensFor(mock.requests[0]!));
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('stop');
    expect(chunks.slice(0, -1).every((c) => c.usage === null)).toBe(true);
  });

  it('omits usage entirely when include_usage is not asked for', async () => {
    const stream = await client.chat.completions.create({ model: 'gpt-4o-mini', messages, stream: true });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.every((c) => !('usage' in c))).toBe(true);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('stop');
  });

  it('accumulates through the SDK stream helper (validates chunk sequence)', async () => {
    const final = await client.chat.completions
      .stream({ model: 'gpt-4o-mini', messages, stream_options: { include_usage: true } })
      .finalChatCompletion();
    expect(final.choices[0]!.message.content).toBe('Hello from the mock.');
    expect(final.usage?.total_tokens).toBeGreaterThan(0);
  });

  it('returns parallel tool calls non-streaming', async () => {
    mock.enqueue({ type: 'tool-calls', calls: [weather, time] });
    const res = await client.chat.completions.create({ model: 'gpt-4o', messages });
    const choice = res.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBeNull();
    const calls = choice.message.tool_calls!.map((c) => (c.type === 'function' ? c.function : null));
    expect(calls).toEqual([
      { name: 'get_weather', arguments: '{"city":"Paris","unit":"celsius"}' },
      { name: 'get_time', arguments: '{"tz":"Europe/Paris"}' },
    ]);
    expect(choice.message.tool_calls![0]!.id).toMatch(/^call_/);
  });

  it('streams tool calls with argument fragments that the SDK reassembles', async () => {
    mock.enqueue({ type: 'tool-calls', calls: [weather, time] });
    const stream = client.chat.completions.stream({ model: 'gpt-4o', messages });
    const fragments: string[] = [];
    stream.on('chunk', (c) => {
      for (const tc of c.choices[0]?.delta.tool_calls ?? []) if (tc.function?.arguments) fragments.push(tc.function.arguments);
    });
    const final = await stream.finalChatCompletion();
    const calls = final.choices[0]!.message.tool_calls!;
    expect(calls.map((c) => (c.type === 'function' ? JSON.parse(c.function.arguments) : null))).toEqual([
      weather.arguments,
      { tz: 'Europe/Paris' },
    ]);
    expect(fragments.length).toBeGreaterThanOrEqual(4);
    expect(final.choices[0]!.finish_reason).toBe('tool_calls');
  });

  it('falls back to text for thinking but counts reasoning tokens', async () => {
    mock.enqueue({ type: 'thinking', thinking: 'Let me think about it.', text: 'Done.' });
    const res = await client.chat.completions.create({ model: 'o4-mini', messages });
    expect(res.choices[0]!.message.content).toBe('Done.');
    expect(res.usage!.completion_tokens_details!.reasoning_tokens).toBe(tokenCount('Let me think about it.'));
  });

  it('reports truncation and filtering through finish_reason', async () => {
    mock.enqueue({ type: 'max-tokens' }, { type: 'content-filter' });
    const cut = await client.chat.completions.create({ model: 'gpt-4o', messages });
    expect(cut.choices[0]!.finish_reason).toBe('length');
    expect(cut.choices[0]!.message.content).toBe('Hello from');
    const filtered = await client.chat.completions.create({ model: 'gpt-4o', messages, stream: true });
    const chunks = [];
    for await (const c of filtered) chunks.push(c);
    expect(chunks.at(-1)!.choices[0]!.finish_reason).toBe('content_filter');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('');
  });

  it('uses scripted usage numbers when a behavior gives them', async () => {
    mock.enqueue({ type: 'text', usage: { inputTokens: 100, outputTokens: 7, cachedTokens: 40 } });
    const res = await client.chat.completions.create({ model: 'gpt-4o', messages });
    expect(res.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 7, total_tokens: 107 });
    expect(res.usage!.prompt_tokens_details!.cached_tokens).toBe(40);
  });
});

describe('legacy completions, embeddings, models', () => {
  it('answers text_completion non-streaming and streaming with usage', async () => {
    const res = await client.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: 'Say hi' });
    expect(res.object).toBe('text_completion');
    expect(res.choices[0]!.text).toBe('Hello from the mock.');
    expect(res.usage!.prompt_tokens).toBe(inputTokensFor(mock.requests[0]!));

    mock.enqueue({ type: 'max-tokens', text: 'abcdef', chunks: 3 });
    const stream = await client.completions.create({
      model: 'gpt-3.5-turbo-instruct',
      prompt: 'Say hi',
      stream: true,
      stream_options: { include_usage: true },
    });
    const chunks = [];
    for await (const c of stream) chunks.push(c);
    expect(chunks.map((c) => c.choices[0]?.text ?? '').join('')).toBe('abcdef');
    expect(chunks.at(-2)!.choices[0]!.finish_reason).toBe('length');
    expect(chunks.at(-1)!.choices).toEqual([]);
    expect(chunks.at(-1)!.usage!.completion_tokens).toBe(tokenCount('abcdef'));
  });

  it('embeds deterministically as floats and as base64', async () => {
    const floats = await client.embeddings.create({
      model: 'text-embedding-3-small',
      input: ['alpha', 'beta'],
      encoding_format: 'float',
    });
    expect(floats.data).toHaveLength(2);
    expect(floats.data[0]!.embedding).toHaveLength(16);
    // The SDK asks for base64 by default and decodes it; the vectors must match the float answer.
    const decoded = await client.embeddings.create({ model: 'text-embedding-3-small', input: ['alpha', 'beta'] });
    expect(mock.requests[1]!.json.encoding_format).toBe('base64');
    decoded.data.forEach((d, i) => {
      d.embedding.forEach((v, j) => expect(v).toBeCloseTo(floats.data[i]!.embedding[j]!, 5));
    });
    const sized = await client.embeddings.create({ model: 'text-embedding-3-small', input: 'x', dimensions: 5 });
    expect(sized.data[0]!.embedding).toHaveLength(5);
    expect(sized.usage).toEqual({ prompt_tokens: 1, total_tokens: 1 });
  });

  it('lists models in the OpenAI shape', async () => {
    const page = await client.models.list();
    expect(page.data.map((m) => m.id)).toContain('gpt-4o-mini');
    expect(page.data[0]).toMatchObject({ object: 'model', owned_by: 'system' });
  });
});

describe('errors', () => {
  it('surfaces statuses as the SDK typed errors with the OpenAI error body', async () => {
    mock.enqueue(
      { type: 'status', status: 429, headers: { 'retry-after': '3' } },
      { type: 'status', status: 404 },
      { type: 'status', status: 500 },
      { type: 'status', status: 400, message: 'bad field', code: 'invalid_value' },
    );
    const call = () => client.chat.completions.create({ model: 'gpt-x', messages });
    const rate = await call().catch((e: unknown) => e);
    expect(rate).toBeInstanceOf(OpenAI.RateLimitError);
    expect((rate as InstanceType<typeof OpenAI.RateLimitError>).headers.get('retry-after')).toBe('3');
    expect((rate as InstanceType<typeof OpenAI.RateLimitError>).code).toBe('rate_limit_exceeded');
    const missing = await call().catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError);
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).message).toContain('The model `gpt-x` does not exist');
    const server = await call().catch((e: unknown) => e);
    expect(server).toBeInstanceOf(OpenAI.InternalServerError);
    expect((server as InstanceType<typeof OpenAI.InternalServerError>).type).toBe('server_error');
    const bad = await call().catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(OpenAI.BadRequestError);
    expect(bad).toMatchObject({ status: 400, code: 'invalid_value', type: 'invalid_request_error' });
    expect((bad as InstanceType<typeof OpenAI.BadRequestError>).requestID).toMatch(/^req_/);
  });

  it('raises an APIError for an error chunk inside a 200 stream', async () => {
    mock.enqueue({ type: 'stream-error', afterChunks: 2 });
    const stream = await client.chat.completions.create({ model: 'gpt-4o', messages, stream: true });
    const seen: string[] = [];
    const err = await (async () => {
      for await (const c of stream) seen.push(c.choices[0]?.delta.content ?? '');
    })().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(OpenAI.APIError);
    expect(seen.length).toBe(2);
  });
});
