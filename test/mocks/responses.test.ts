import OpenAI from 'openai';
import { EventSourceParserStream } from 'eventsource-parser/stream';
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

/** Reads a raw SSE reply into (event, data) pairs, to check what the SDK does not. */
async function rawEvents(body: object): Promise<{ event?: string; data: any }[]> {
  const res = await fetch(`${mock.openaiBase}/responses`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-test' },
    body: JSON.stringify(body),
  });
  expect(res.headers.get('content-type')).toContain('text/event-stream');
  const out: { event?: string; data: any }[] = [];
  const reader = res.body!.pipeThrough(new TextDecoderStream()).pipeThrough(new EventSourceParserStream()).getReader();
  for (let r = await reader.read(); !r.done; r = await reader.read()) out.push({ event: r.value.event, data: JSON.parse(r.value.data) });
  return out;
}

describe('responses API', () => {
  it('answers non-streaming with a message item and full usage', async () => {
    const res = await client.responses.create({ model: 'gpt-4.1', input: 'Say hello', instructions: 'Be brief' });
    expect(res.object).toBe('response');
    expect(res.status).toBe('completed');
    expect(res.output_text).toBe('Hello from the mock.');
    expect(res.instructions).toBe('Be brief');
    expect(res.output[0]).toMatchObject({ type: 'message', role: 'assistant', status: 'completed' });
    expect(res.usage).toEqual({
      input_tokens: inputTokensFor(mock.requests[0]!),
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: tokenCount('Hello from the mock.'),
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: inputTokensFor(mock.requests[0]!) + tokenCount('Hello from the mock.'),
    });
  });

  it('streams the documented event lifecycle with contiguous sequence numbers', async () => {
    const events = await rawEvents({ model: 'gpt-4.1', input: 'hi', stream: true });
    expect(events.map((e) => e.event)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.completed',
    ]);
    events.forEach((e, i) => {
      expect(e.data.type).toBe(e.event);
      expect(e.data.sequence_number).toBe(i);
    });
    expect(events[0]!.data.response).toMatchObject({ status: 'in_progress', output: [], usage: null });
  });

  it('accumulates through the SDK stream helper', async () => {
    const stream = client.responses.stream({ model: 'gpt-4.1', input: 'hi' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(final.output_text).toBe('Hello from the mock.');
    expect(deltas.join('')).toBe('Hello from the mock.');
    expect(final.usage!.input_tokens).toBe(inputTokensFor(mock.requests[0]!));
  });

  it('streams function calls whose argument fragments reassemble', async () => {
    mock.enqueue({
      type: 'tool-calls',
      calls: [
        { name: 'get_weather', arguments: { city: 'Paris' } },
        { name: 'get_time', arguments: { tz: 'UTC' }, id: 'call_fixed' },
      ],
    });
    const stream = client.responses.stream({ model: 'gpt-4.1', input: 'weather?' });
    let fragments = 0;
    stream.on('response.function_call_arguments.delta', () => fragments++);
    const final = await stream.finalResponse();
    const calls = final.output.filter((o) => o.type === 'function_call');
    expect(calls.map((c) => [c.name, JSON.parse(c.arguments)])).toEqual([
      ['get_weather', { city: 'Paris' }],
      ['get_time', { tz: 'UTC' }],
    ]);
    expect(calls[1]!.call_id).toBe('call_fixed');
    expect(calls[0]!.id).toMatch(/^fc_/);
    expect(fragments).toBeGreaterThanOrEqual(4);
    expect(final.output.some((o) => o.type === 'message')).toBe(false);
  });

  it('emits a reasoning item with summary and encrypted content before the message', async () => {
    mock.enqueue({ type: 'thinking', thinking: 'Weigh the options.', signature: 'sig-123', text: 'Answer.' });
    mock.enqueue({ type: 'thinking', thinking: 'Weigh the options.', signature: 'sig-123', text: 'Answer.' });
    const plain = await client.responses.create({ model: 'o4-mini', input: 'q' });
    const streamed = await client.responses.stream({ model: 'o4-mini', input: 'q' }).finalResponse();
    for (const res of [plain, streamed]) {
      expect(res.output[0]).toMatchObject({
        type: 'reasoning',
        summary: [{ type: 'summary_text', text: 'Weigh the options.' }],
        encrypted_content: 'sig-123',
      });
      expect(res.output_text).toBe('Answer.');
      expect(res.usage!.output_tokens_details.reasoning_tokens).toBe(tokenCount('Weigh the options.'));
    }
  });

  it('ends truncated and filtered answers as incomplete with their reason', async () => {
    mock.enqueue({ type: 'max-tokens' }, { type: 'content-filter' }, { type: 'max-tokens' });
    const cut = await client.responses.create({ model: 'gpt-4.1', input: 'q' });
    expect(cut.status).toBe('incomplete');
    expect(cut.incomplete_details).toEqual({ reason: 'max_output_tokens' });
    expect(cut.output_text).toBe('Hello from');
    const filtered = await client.responses.create({ model: 'gpt-4.1', input: 'q' });
    expect(filtered.incomplete_details).toEqual({ reason: 'content_filter' });
    expect(filtered.output).toEqual([]);
    const events = await rawEvents({ model: 'gpt-4.1', input: 'q', stream: true });
    expect(events.at(-1)!.event).toBe('response.incomplete');
    expect(events.at(-1)!.data.response.incomplete_details.reason).toBe('max_output_tokens');
  });

  it('ends a failing stream with response.failed', async () => {
    mock.enqueue({ type: 'stream-error', afterChunks: 3, message: 'boom' });
    const events = await rawEvents({ model: 'gpt-4.1', input: 'q', stream: true });
    expect(events.map((e) => e.data.sequence_number)).toEqual([0, 1, 2, 3]);
    expect(events.at(-1)!.data.response).toMatchObject({ status: 'failed', error: { message: 'boom' } });
  });
});
