import { describe, expect, it } from 'vitest';
import {
  openAiResponsesClient as client,
  openAiResponsesUpstream as upstream,
} from '../../src/daemon/translate/formats/openai-responses/index.js';
import type { IrStreamEvent, SseMessage } from '../../src/daemon/translate/ir.js';
import { asRouterError, RouterError } from '../../src/daemon/http/errors.js';
import { CodecError } from '../../src/daemon/translate/errors.js';

const base = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-test', input: 'hi', ...extra });

function badRequestOf(fn: () => unknown): RouterError {
  try {
    fn();
  } catch (e) {
    // Codecs raise their own error; the HTTP layer maps it to the standard 400 (status, code, param).
    if (e instanceof CodecError) return asRouterError(e) as RouterError;
    throw e;
  }
  throw new Error('expected a RouterError');
}

describe('Responses reply decoding', () => {
  it('reads output items, usage and status', () => {
    const ir = upstream.decodeResponse({
      id: 'resp_1',
      object: 'response',
      created_at: 1,
      status: 'completed',
      model: 'm',
      output: [
        { id: 'rs_1', type: 'reasoning', summary: [{ type: 'summary_text', text: 't' }], encrypted_content: 'e' },
        { id: 'msg_1', type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Hi', annotations: [] }] },
        { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{}', status: 'completed' },
      ],
      usage: { input_tokens: 10, input_tokens_details: { cached_tokens: 2 }, output_tokens: 5, output_tokens_details: { reasoning_tokens: 3 }, total_tokens: 15 },
    });
    expect(ir).toEqual({
      id: 'resp_1',
      model: 'm',
      created: 1,
      parts: [
        { type: 'thinking', text: 't', signature: 'e', issuer: 'openai' },
        { type: 'text', text: 'Hi' },
        { type: 'tool_call', id: 'call_1', name: 'f', arguments: '{}' },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 10, outputTokens: 5, cacheReadTokens: 2, reasoningTokens: 3 },
    });
  });

  it('maps incomplete reasons and failures', () => {
    const incomplete = (reason: string) => upstream.decodeResponse({ id: 'r', status: 'incomplete', incomplete_details: { reason }, output: [] }).finishReason;
    expect(incomplete('max_output_tokens')).toBe('length');
    expect(incomplete('content_filter')).toBe('content_filter');
    const failed = badRequestOf(() => upstream.decodeResponse({ id: 'r', status: 'failed', error: { code: 'rate_limit_exceeded', message: 'slow down' } }));
    expect([failed.status, failed.message]).toEqual([429, 'slow down']);
  });
});

function sse(events: Array<Record<string, unknown>>): SseMessage[] {
  return events.map((e, i) => ({ event: String(e.type), data: JSON.stringify({ ...e, sequence_number: i }) }));
}

function decodeAll(messages: SseMessage[]): IrStreamEvent[] {
  const decoder = upstream.createStreamDecoder();
  return [...messages.flatMap((m) => decoder.push(m)), ...decoder.end()];
}

describe('Responses stream decoding', () => {
  const response = { id: 'resp_1', object: 'response', created_at: 5, status: 'in_progress', model: 'm', output: [] };

  it('turns item and delta events into IR blocks', () => {
    const events = decodeAll(
      sse([
        { type: 'response.created', response },
        { type: 'response.in_progress', response },
        { type: 'response.output_item.added', output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } },
        { type: 'response.reasoning_summary_part.added', item_id: 'rs_1', output_index: 0, summary_index: 0, part: { type: 'summary_text', text: '' } },
        { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'think' },
        { type: 'response.reasoning_summary_part.added', item_id: 'rs_1', output_index: 0, summary_index: 1, part: { type: 'summary_text', text: '' } },
        { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 1, delta: 'more' },
        { type: 'response.output_item.done', output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'enc' } },
        { type: 'response.output_item.added', output_index: 1, item: { id: 'msg_1', type: 'message', role: 'assistant', content: [] } },
        { type: 'response.content_part.added', item_id: 'msg_1', output_index: 1, content_index: 0, part: { type: 'output_text', text: '' } },
        { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'Hel' },
        { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 1, content_index: 0, delta: 'lo' },
        { type: 'response.output_text.done', item_id: 'msg_1', output_index: 1, content_index: 0, text: 'Hello' },
        { type: 'response.content_part.done', item_id: 'msg_1', output_index: 1, content_index: 0, part: { type: 'output_text', text: 'Hello' } },
        { type: 'response.output_item.done', output_index: 1, item: { id: 'msg_1', type: 'message', content: [{ type: 'output_text', text: 'Hello' }] } },
        { type: 'response.output_item.added', output_index: 2, item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '' } },
        { type: 'response.function_call_arguments.delta', item_id: 'fc_1', output_index: 2, delta: '{"a":1}' },
        { type: 'response.function_call_arguments.done', item_id: 'fc_1', output_index: 2, arguments: '{"a":1}' },
        { type: 'response.output_item.done', output_index: 2, item: { id: 'fc_1', type: 'function_call', call_id: 'call_1', name: 'f', arguments: '{"a":1}' } },
        { type: 'response.completed', response: { ...response, status: 'completed', usage: { input_tokens: 3, output_tokens: 4 } } },
      ]),
    );
    expect(events).toEqual([
      { type: 'start', id: 'resp_1', model: 'm', created: 5 },
      { type: 'thinking_delta', index: 0, text: 'think' },
      { type: 'thinking_delta', index: 0, text: '\n\nmore' },
      { type: 'thinking_signature', index: 0, signature: 'enc', issuer: 'openai' },
      { type: 'block_stop', index: 0 },
      { type: 'text_delta', index: 1, text: 'Hel' },
      { type: 'text_delta', index: 1, text: 'lo' },
      { type: 'block_stop', index: 1 },
      { type: 'tool_call_start', index: 2, id: 'call_1', name: 'f' },
      { type: 'tool_call_delta', index: 2, argumentsDelta: '{"a":1}' },
      { type: 'block_stop', index: 2 },
      { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 3, outputTokens: 4 } },
    ]);
  });

  it('starts on response.queued (background responses) as on response.created', () => {
    const events = decodeAll(sse([{ type: 'response.queued', response: { ...response, status: 'queued' } }]));
    expect(events[0]).toEqual({ type: 'start', id: 'resp_1', model: 'm', created: 5 });
  });

  it('handles providers that only send whole items', () => {
    const events = decodeAll(
      sse([
        { type: 'response.created', response },
        { type: 'response.output_item.done', output_index: 0, item: { type: 'message', content: [{ type: 'output_text', text: 'Whole' }] } },
        { type: 'response.incomplete', response: { ...response, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } },
      ]),
    );
    expect(events.slice(1)).toEqual([
      { type: 'text_delta', index: 0, text: 'Whole' },
      { type: 'block_stop', index: 0 },
      { type: 'finish', finishReason: 'length' },
    ]);
  });

  it('reports error events, failed responses and truncated streams as errors', () => {
    const flat = decodeAll(sse([{ type: 'response.created', response }, { type: 'error', code: 'rate_limit_exceeded', message: 'slow', param: null }]));
    expect(flat.at(-1)).toEqual({ type: 'error', status: 429, message: 'slow', code: 'rate_limit_exceeded' });
    const nested = decodeAll(sse([{ type: 'error', error: { code: 'server_error', message: 'boom' } }]));
    expect(nested).toEqual([{ type: 'error', status: 500, message: 'boom', code: 'server_error' }]);
    const failed = decodeAll(sse([{ type: 'response.failed', response: { ...response, status: 'failed', error: { code: 'x', message: 'bad' } } }]));
    expect(failed).toEqual([{ type: 'error', status: 502, message: 'bad', code: 'x' }]);
    const cut = decodeAll(sse([{ type: 'response.created', response }]));
    expect(cut.at(-1)).toMatchObject({ type: 'error', status: 502 });
  });
});

describe('Responses stream encoder -> decoder round trip', () => {
  it('reproduces the IR events', () => {
    const irEvents: IrStreamEvent[] = [
      { type: 'start', id: 'resp_up', model: 'm' },
      { type: 'thinking_delta', index: 0, text: 'th' },
      { type: 'thinking_signature', index: 0, signature: 's', issuer: 'openai' },
      { type: 'block_stop', index: 0 },
      { type: 'text_delta', index: 1, text: 'Hi' },
      { type: 'block_stop', index: 1 },
      { type: 'refusal_delta', index: 2, text: 'No' },
      { type: 'block_stop', index: 2 },
      { type: 'tool_call_start', index: 3, id: 'c', name: 'f' },
      { type: 'tool_call_delta', index: 3, argumentsDelta: '{}' },
      { type: 'block_stop', index: 3 },
      { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 1, outputTokens: 2 } },
    ];
    const request = client.decodeRequest(base());
    let n = 0;
    const encoder = client.createStreamEncoder(request, { newId: (p) => `${p}${n++}`, now: () => 7 });
    const messages = [...irEvents.flatMap((e) => encoder.write(e)), ...encoder.end()];
    expect(messages.every((m) => m.event === JSON.parse(m.data).type)).toBe(true);
    const decoded = decodeAll(messages);
    expect(decoded[0]).toEqual({ type: 'start', id: 'resp_up', model: 'm', created: 7 });
    expect(decoded.slice(1)).toEqual(irEvents.slice(1));
  });
});
