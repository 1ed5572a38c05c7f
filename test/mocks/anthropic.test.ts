import Anthropic from '@anthropic-ai/sdk';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { inputTokensFor, tokenCount } from './reply.js';
import { startMockUpstream, type MockUpstream } from './upstream.js';

let mock: MockUpstream;
let client: Anthropic;

beforeAll(async () => {
  mock = await startMockUpstream();
  // The SDK appends /v1/messages itself, so it gets the bare origin.
  client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, maxRetries: 0 });
});
afterEach(() => mock.reset());
afterAll(() => mock.close());

const base = { model: 'claude-haiku-4-5', max_tokens: 256, messages: [{ role: 'user' as const, content: 'Hi' }] };
const tools = [
  { name: 'get_weather', input_schema: { type: 'object' as const, properties: { city: { type: 'string' } } } },
];

describe('messages', () => {
  it('answers non-streaming with a text block and usage', async () => {
    const msg = await client.messages.create(base);
    expect(msg).toMatchObject({ type: 'message', role: 'assistant', model: 'claude-haiku-4-5', stop_reason: 'end_turn' });
    expect(msg.content).toEqual([{ type: 'text', text: 'Hello from the mock.' }]);
    expect(msg.usage).toMatchObject({
      input_tokens: inputTokensFor(mock.requests[0]!),
      output_tokens: tokenCount('Hello from the mock.'),
      cache_read_input_tokens: 0,
      cache_creation_input_tokens: 0,
    });
    expect(mock.requests[0]).toMatchObject({ endpoint: 'anthropic.messages', provider: 'anthropic' });
    // @anthropic-ai/sdk 1.x sends the API key as a Bearer token and a dated anthropic-version.
    expect(mock.requests[0]!.headers.authorization).toBe('Bearer sk-ant-test');
    expect(mock.requests[0]!.headers['anthropic-version']).toMatch(/^\d{4}-\d{2}-\d{2}$/);
  });

  it('streams the full event sequence through the SDK accumulator', async () => {
    mock.enqueue({ type: 'text', text: 'Streaming works fine', chunks: 5 });
    const stream = client.messages.stream(base);
    const events: string[] = [];
    stream.on('streamEvent', (e) => events.push(e.type));
    const final = await stream.finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Streaming works fine' }]);
    expect(events).toEqual([
      'message_start',
      'content_block_start',
      ...Array(5).fill('content_block_delta'),
      'content_block_stop',
      'message_delta',
      'message_stop',
    ]);
    expect(final.usage.output_tokens).toBe(tokenCount('Streaming works fine'));
    expect(final.usage.input_tokens).toBe(inputTokensFor(mock.requests[0]!));
    expect(final.stop_reason).toBe('end_turn');
  });

  it('sends a ping after the first block starts and uses event: lines', async () => {
    const res = await fetch(`${mock.anthropicBase}/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...base, stream: true }),
    });
    const text = await res.text();
    expect(res.headers.get('request-id')).toMatch(/^req_/);
    expect(text.split('\n\n').filter(Boolean).map((f) => f.split('\n')[0])).toEqual([
      'event: message_start',
      'event: content_block_start',
      'event: ping',
      'event: content_block_delta',
      'event: content_block_delta',
      'event: content_block_delta',
      'event: content_block_stop',
      'event: message_delta',
      'event: message_stop',
    ]);
  });

  it('streams parallel tool_use blocks via input_json_delta fragments', async () => {
    mock.enqueue({
      type: 'tool-calls',
      text: 'Checking both.',
      calls: [
        { name: 'get_weather', arguments: { city: 'Paris' } },
        { name: 'get_weather', arguments: { city: 'Tokyo' } },
      ],
    });
    const stream = client.messages.stream({ ...base, tools });
    const fragments: string[] = [];
    stream.on('inputJson', (partial) => fragments.push(partial));
    const final = await stream.finalMessage();
    expect(final.stop_reason).toBe('tool_use');
    expect(final.content[0]).toMatchObject({ type: 'text', text: 'Checking both.' });
    const uses = final.content.filter((b) => b.type === 'tool_use');
    expect(uses.map((u) => u.input)).toEqual([{ city: 'Paris' }, { city: 'Tokyo' }]);
    expect(uses[0]!.id).toMatch(/^toolu_/);
    expect(fragments.length).toBeGreaterThanOrEqual(4);
  });

  it('returns tool_use with parsed input non-streaming', async () => {
    mock.enqueue({ type: 'tool-calls', calls: [{ name: 'get_weather', arguments: '{"city":"Oslo"}', id: 'toolu_x' }] });
    const msg = await client.messages.create({ ...base, tools });
    expect(msg.content).toEqual([{ type: 'tool_use', id: 'toolu_x', name: 'get_weather', input: { city: 'Oslo' } }]);
  });

  it('streams thinking with thinking_delta and signature_delta before the text', async () => {
    mock.enqueue({ type: 'thinking', thinking: 'Consider the greeting.', signature: 'EqQBsig==', text: 'Hello!' });
    const stream = client.messages.stream({ ...base, thinking: { type: 'enabled', budget_tokens: 1024 } });
    const signatures: string[] = [];
    stream.on('signature', (s) => signatures.push(s));
    const final = await stream.finalMessage();
    expect(final.content[0]).toEqual({ type: 'thinking', thinking: 'Consider the greeting.', signature: 'EqQBsig==' });
    expect(final.content[1]).toMatchObject({ type: 'text', text: 'Hello!' });
    expect(signatures).toEqual(['EqQBsig==']);
  });

  it('maps truncation to max_tokens and filtering to refusal', async () => {
    mock.enqueue({ type: 'max-tokens' }, { type: 'content-filter' });
    const cut = await client.messages.stream(base).finalMessage();
    expect(cut.stop_reason).toBe('max_tokens');
    expect(cut.content).toMatchObject([{ type: 'text', text: 'Hello from' }]);
    const refused = await client.messages.create(base);
    expect(refused.stop_reason).toBe('refusal');
    expect(refused.content).toEqual([]);
  });

  it('counts tokens and lists models in the Anthropic shape', async () => {
    const count = await client.messages.countTokens({ model: base.model, messages: base.messages });
    expect(count.input_tokens).toBe(inputTokensFor(mock.requests[0]!));
    const page = await client.models.list();
    expect(page.data[0]).toMatchObject({ type: 'model', id: 'claude-sonnet-4-6', display_name: 'Claude Sonnet 4 6' });
    expect(mock.requests[1]!.endpoint).toBe('anthropic.models');
  });
});

describe('errors', () => {
  it('surfaces statuses as typed errors with the Anthropic body and request-id', async () => {
    mock.enqueue(
      { type: 'status', status: 529 },
      { type: 'status', status: 429, headers: { 'retry-after': '7' } },
      { type: 'status', status: 401 },
    );
    const overloaded = await client.messages.create(base).catch((e: unknown) => e);
    expect(overloaded).toBeInstanceOf(Anthropic.InternalServerError);
    expect(overloaded).toMatchObject({ status: 529, type: 'overloaded_error' });
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
      type: 'error',
      error: { type: 'overloaded_error', message: 'Overloaded' },
    });
    expect((overloaded as InstanceType<typeof Anthropic.APIError>).requestID).toMatch(/^req_/);
    const limited = await client.messages.create(base).catch((e: unknown) => e);
    expect(limited).toBeInstanceOf(Anthropic.RateLimitError);
    expect((limited as InstanceType<typeof Anthropic.RateLimitError>).headers?.get('retry-after')).toBe('7');
    const auth = await client.messages.create(base).catch((e: unknown) => e);
    expect(auth).toBeInstanceOf(Anthropic.AuthenticationError);
  });

  it('raises the in-stream error event as an APIError', async () => {
    mock.enqueue({ type: 'stream-error', afterChunks: 4 });
    const stream = client.messages.stream(base);
    const texts: string[] = [];
    stream.on('text', (t) => texts.push(t));
    const err = await stream.finalMessage().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(Anthropic.APIError);
    expect(err).toMatchObject({ type: 'overloaded_error' });
    expect(texts.length).toBe(1);
  });
});
