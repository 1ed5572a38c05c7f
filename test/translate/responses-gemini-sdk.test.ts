import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import type { StreamEncoder } from '../../src/daemon/translate/codec.js';
import { geminiClient } from '../../src/daemon/translate/formats/gemini/index.js';
import { openAiResponsesClient } from '../../src/daemon/translate/formats/openai-responses/index.js';
import type { IrRequest, IrResponse, IrStreamEvent } from '../../src/daemon/translate/ir.js';
import { formatSseBatch } from '../../src/daemon/translate/sse.js';

/**
 * The official SDKs must accept what router's encoders produce: each test serves an encoder's output through
 * the SDK's custom `fetch` (no network) and checks what the SDK parsed and accumulated.
 */

let counter = 0;
const options = { newId: (prefix: string) => `${prefix}${++counter}`, now: () => 1700000000 };
const request: IrRequest = { model: 'test-model', system: [], messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }], stream: false };
const usage = { inputTokens: 12, outputTokens: 30, reasoningTokens: 10, cacheReadTokens: 4 };

const reply: IrResponse = {
  id: 'upstream-1',
  model: 'test-model',
  parts: [
    { type: 'thinking', text: 'Need the weather.', signature: 'sig-1' },
    { type: 'text', text: 'Checking.' },
    { type: 'tool_call', id: 'call_a', name: 'get_weather', arguments: '{"city":"Paris"}' },
    { type: 'tool_call', id: 'call_b', name: 'get_weather', arguments: '{"city":"Rome"}' },
  ],
  finishReason: 'tool_calls',
  usage,
};

const streamEvents: IrStreamEvent[] = [
  { type: 'start', id: 'upstream-1', model: 'test-model' },
  { type: 'thinking_delta', index: 0, text: 'Need the ' },
  { type: 'thinking_delta', index: 0, text: 'weather.' },
  { type: 'thinking_signature', index: 0, signature: 'sig-1' },
  { type: 'block_stop', index: 0 },
  { type: 'text_delta', index: 1, text: 'Check' },
  { type: 'text_delta', index: 1, text: 'ing.' },
  { type: 'block_stop', index: 1 },
  { type: 'tool_call_start', index: 2, id: 'call_a', name: 'get_weather' },
  { type: 'tool_call_start', index: 3, id: 'call_b', name: 'get_weather' },
  { type: 'tool_call_delta', index: 2, argumentsDelta: '{"city":' },
  { type: 'tool_call_delta', index: 3, argumentsDelta: '{"city":"Rome"}' },
  { type: 'tool_call_delta', index: 2, argumentsDelta: '"Paris"}' },
  { type: 'block_stop', index: 2 },
  { type: 'block_stop', index: 3 },
  { type: 'finish', finishReason: 'tool_calls', usage },
];

function sseBody(encoder: StreamEncoder, events: IrStreamEvent[]): string {
  const messages = events.flatMap((e) => encoder.write(e));
  return formatSseBatch([...messages, ...encoder.end()]);
}

function respond(body: unknown, sse: boolean, status = 200): Response {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  return new Response(text, { status, headers: { 'content-type': sse ? 'text/event-stream' : 'application/json' } });
}

function openai(serve: () => Response): OpenAI {
  return new OpenAI({ apiKey: 'x', baseURL: 'http://x/v1', fetch: async () => serve(), maxRetries: 0 });
}

function gemini(serve: () => Response): GoogleGenAI {
  return new GoogleGenAI({ apiKey: 'x', httpOptions: { baseUrl: 'http://x', fetch: async () => serve() } });
}

describe('openai SDK accepts the Responses encoders', () => {
  it('parses a non-streaming response with reasoning, text and parallel function calls', async () => {
    const body = openAiResponsesClient.encodeResponse(reply, request, options);
    const res = await openai(() => respond(body, false)).responses.create({ model: 'test-model', input: 'hi' });
    expect(res.output_text).toBe('Checking.');
    expect(res.output.map((o) => o.type)).toEqual(['reasoning', 'message', 'function_call', 'function_call']);
    const calls = res.output.filter((o) => o.type === 'function_call');
    expect(calls.map((c) => [c.call_id, c.arguments])).toEqual([['call_a', '{"city":"Paris"}'], ['call_b', '{"city":"Rome"}']]);
    expect(res.usage).toMatchObject({ input_tokens: 12, output_tokens: 30, total_tokens: 42 });
    expect(res.usage?.output_tokens_details.reasoning_tokens).toBe(10);
    expect(res.usage?.input_tokens_details.cached_tokens).toBe(4);
  });

  it('accumulates a stream into the same final response with responses.stream()', async () => {
    const client = openai(() => respond(sseBody(openAiResponsesClient.createStreamEncoder(request, options), streamEvents), true));
    const stream = client.responses.stream({ model: 'test-model', input: 'hi' });
    const deltas: string[] = [];
    stream.on('response.output_text.delta', (e) => deltas.push(e.delta));
    const final = await stream.finalResponse();
    expect(deltas.join('')).toBe('Checking.');
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe('Checking.');
    const reasoning = final.output[0];
    expect(reasoning?.type === 'reasoning' && reasoning.summary[0]?.text).toBe('Need the weather.');
    expect(reasoning?.type === 'reasoning' && reasoning.encrypted_content).toBe('sig-1');
    const calls = final.output.filter((o) => o.type === 'function_call');
    expect(calls.map((c) => c.arguments)).toEqual(['{"city":"Paris"}', '{"city":"Rome"}']);
    expect(final.usage?.total_tokens).toBe(42);
  });

  it('iterates raw stream events with increasing sequence numbers', async () => {
    const client = openai(() => respond(sseBody(openAiResponsesClient.createStreamEncoder(request, options), streamEvents), true));
    const stream = await client.responses.create({ model: 'test-model', input: 'hi', stream: true });
    const seqs: number[] = [];
    for await (const event of stream) seqs.push(event.sequence_number);
    expect(seqs).toEqual(seqs.map((_, i) => i));
  });

  it('reports a truncated stream as incomplete', async () => {
    const events: IrStreamEvent[] = [
      { type: 'start', id: 'x', model: 'test-model' },
      { type: 'text_delta', index: 0, text: 'Once upon' },
      { type: 'finish', finishReason: 'length', usage: { inputTokens: 5, outputTokens: 2 } },
    ];
    const client = openai(() => respond(sseBody(openAiResponsesClient.createStreamEncoder(request, options), events), true));
    const final = await client.responses.stream({ model: 'test-model', input: 'hi' }).finalResponse();
    expect(final.status).toBe('incomplete');
    expect(final.incomplete_details?.reason).toBe('max_output_tokens');
    expect(final.output_text).toBe('Once upon');
  });

  it('throws the error event of a stream that failed upstream', async () => {
    const events: IrStreamEvent[] = [
      { type: 'start', id: 'x', model: 'test-model' },
      { type: 'text_delta', index: 0, text: 'Hel' },
      { type: 'error', status: 529, message: 'Overloaded', errorType: 'overloaded_error' },
    ];
    const client = openai(() => respond(sseBody(openAiResponsesClient.createStreamEncoder(request, options), events), true));
    // The SDK throws on `event: error`, as it does for OpenAI's own in-stream errors.
    await expect(client.responses.stream({ model: 'test-model', input: 'hi' }).finalResponse()).rejects.toThrow(/Overloaded/);
  });
});

describe('@google/genai accepts the Gemini encoders', () => {
  it('parses a non-streaming reply with thoughts, text and function calls', async () => {
    const body = geminiClient.encodeResponse(reply, request, options);
    const res = await gemini(() => respond(body, false)).models.generateContent({ model: 'test-model', contents: 'hi' });
    expect(res.text).toBe('Checking.');
    expect(res.functionCalls?.map((c) => [c.id, c.name, c.args])).toEqual([
      ['call_a', 'get_weather', { city: 'Paris' }],
      ['call_b', 'get_weather', { city: 'Rome' }],
    ]);
    const thought = res.candidates?.[0]?.content?.parts?.[0];
    expect(thought).toMatchObject({ thought: true, text: 'Need the weather.', thoughtSignature: 'sig-1' });
    expect(res.candidates?.[0]?.finishReason).toBe('STOP');
    expect(res.usageMetadata).toMatchObject({ promptTokenCount: 12, candidatesTokenCount: 20, thoughtsTokenCount: 10, totalTokenCount: 42 });
  });

  it('streams chunks the SDK yields one by one, ending with finishReason and usage', async () => {
    const body = sseBody(geminiClient.createStreamEncoder(request, options), streamEvents);
    const chunks = [];
    for await (const chunk of await gemini(() => respond(body, true)).models.generateContentStream({ model: 'test-model', contents: 'hi' })) {
      chunks.push(chunk);
    }
    const parts = chunks.flatMap((c) => c.candidates?.[0]?.content?.parts ?? []);
    expect(parts.filter((p) => p.thought).map((p) => p.text).join('')).toBe('Need the weather.');
    expect(parts.find((p) => p.thoughtSignature)?.thoughtSignature).toBe('sig-1');
    expect(parts.filter((p) => !p.thought && p.text).map((p) => p.text).join('')).toBe('Checking.');
    expect(parts.flatMap((p) => (p.functionCall ? [p.functionCall.args] : []))).toEqual([{ city: 'Paris' }, { city: 'Rome' }]);
    const last = chunks[chunks.length - 1];
    expect(last?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last?.usageMetadata?.totalTokenCount).toBe(42);
  });

  it('lets a chat session record a streamed turn in its history', async () => {
    const body = sseBody(geminiClient.createStreamEncoder(request, options), streamEvents);
    const chat = gemini(() => respond(body, true)).chats.create({ model: 'test-model' });
    for await (const _chunk of await chat.sendMessageStream({ message: 'hi' })) void _chunk;
    // The SDK records each streamed chunk's content; it records nothing if any chunk has empty parts.
    const history = chat.getHistory();
    expect(history.length).toBeGreaterThan(1);
    expect(history.slice(1).every((c) => c.role === 'model')).toBe(true);
  });

  it('throws the error chunk of a failed stream as an ApiError', async () => {
    const events: IrStreamEvent[] = [
      { type: 'start', id: 'x', model: 'test-model' },
      { type: 'text_delta', index: 0, text: 'Hel' },
      { type: 'error', status: 503, message: 'Overloaded' },
    ];
    const body = sseBody(geminiClient.createStreamEncoder(request, options), events);
    const run = async () => {
      for await (const _chunk of await gemini(() => respond(body, true)).models.generateContentStream({ model: 'test-model', contents: 'hi' })) void _chunk;
    };
    await expect(run()).rejects.toThrow(/Overloaded/);
  });
});
