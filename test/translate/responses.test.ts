import { describe, expect, it } from 'vitest';
import {
  assertResponsesStatePortable,
  openAiResponsesClient as client,
  openAiResponsesUpstream as upstream,
} from '../../src/daemon/translate/formats/openai-responses/index.js';
import type { IrRequest, IrStreamEvent, SseMessage } from '../../src/daemon/translate/ir.js';
import { RouterError } from '../../src/daemon/http/errors.js';

const base = (extra: Record<string, unknown> = {}) => ({ model: 'gpt-test', input: 'hi', ...extra });

function badRequestOf(fn: () => unknown): RouterError {
  try {
    fn();
  } catch (e) {
    if (e instanceof RouterError) return e;
    throw e;
  }
  throw new Error('expected a RouterError');
}

describe('Responses request decoding', () => {
  it('reads a string input and instructions', () => {
    const ir = client.decodeRequest(base({ instructions: 'Be brief.', stream: true, max_output_tokens: 50 }));
    expect(ir).toMatchObject({ model: 'gpt-test', stream: true, maxTokens: 50, system: [{ type: 'text', text: 'Be brief.' }] });
    expect(ir.messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }]);
  });

  it('reads message, reasoning, function call and output items into IR turns', () => {
    const ir = client.decodeRequest(
      base({
        input: [
          { role: 'developer', content: 'Use tools.' },
          { role: 'user', content: [{ type: 'input_text', text: 'Weather?' }, { type: 'input_image', image_url: 'data:image/png;base64,AAA', detail: 'low' }] },
          { type: 'reasoning', id: 'rs_1', summary: [{ type: 'summary_text', text: 'a' }, { type: 'summary_text', text: 'b' }], encrypted_content: 'enc' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Checking.', annotations: [] }] },
          { type: 'function_call', id: 'fc_1', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'sunny' },
          { type: 'web_search_call', id: 'ws_1', status: 'completed' },
        ],
      }),
    );
    expect(ir.system).toEqual([{ type: 'text', text: 'Use tools.' }]);
    expect(ir.messages).toEqual([
      {
        role: 'user',
        parts: [
          { type: 'text', text: 'Weather?' },
          { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'AAA' }, detail: 'low' },
        ],
      },
      {
        role: 'assistant',
        parts: [
          { type: 'thinking', text: 'a\n\nb', signature: 'enc' },
          { type: 'text', text: 'Checking.' },
          { type: 'tool_call', id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        ],
      },
      { role: 'tool', parts: [{ type: 'tool_result', toolCallId: 'call_1', name: 'get_weather', content: [{ type: 'text', text: 'sunny' }] }] },
    ]);
    expect(ir.dropped).toEqual(['input[6] (web_search_call)']);
  });

  it('reads flat function tools, built-ins, tool choice, text format and reasoning', () => {
    const ir = client.decodeRequest(
      base({
        tools: [{ type: 'function', name: 'f', description: 'd', parameters: { type: 'object' }, strict: true }, { type: 'web_search' }],
        tool_choice: { type: 'function', name: 'f' },
        parallel_tool_calls: false,
        text: { format: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true }, verbosity: 'low' },
        reasoning: { effort: 'high', summary: 'auto' },
        user: 'u1',
        metadata: { k: 'v' },
      }),
    );
    expect(ir.tools).toEqual([
      { type: 'function', name: 'f', description: 'd', parameters: { type: 'object' }, strict: true },
      { type: 'builtin', format: 'openai-responses', raw: { type: 'web_search' } },
    ]);
    expect(ir).toMatchObject({
      toolChoice: { name: 'f' },
      parallelToolCalls: false,
      responseFormat: { type: 'json_schema', name: 'out', schema: { type: 'object' }, strict: true },
      reasoning: { effort: 'high', summary: 'auto' },
      user: 'u1',
      metadata: { k: 'v' },
      passthrough: { format: 'openai-responses', fields: { text: { verbosity: 'low' } } },
    });
  });

  it('keeps Responses-only fields in passthrough', () => {
    const ir = client.decodeRequest(base({ store: false, include: ['reasoning.encrypted_content'], previous_response_id: 'resp_1', tool_choice: { type: 'file_search' } }));
    expect(ir.passthrough?.fields).toEqual({
      store: false,
      include: ['reasoning.encrypted_content'],
      previous_response_id: 'resp_1',
      tool_choice: { type: 'file_search' },
    });
    expect(ir.toolChoice).toBeUndefined();
  });

  it('rejects invalid input with a 400 naming the parameter', () => {
    expect(badRequestOf(() => client.decodeRequest({ input: 'hi' })).extra).toEqual({ param: 'model' });
    const missing = badRequestOf(() => client.decodeRequest(base({ input: [{ role: 'user', content: 'x' }, { type: 'function_call', name: 'f', arguments: '{}' }] })));
    expect(missing.status).toBe(400);
    expect(missing.extra).toEqual({ param: 'input[1].call_id' });
    expect(badRequestOf(() => client.decodeRequest(base({ input: [{ type: 'item_reference', id: 'msg_1' }] }))).extra).toEqual({ param: 'input[0].type' });
    expect(badRequestOf(() => client.decodeRequest(base({ input: [{ role: 'user', content: [{ type: 'input_image' }] }] }))).status).toBe(400);
    expect(badRequestOf(() => client.decodeRequest(base({ temperature: 3 }))).extra).toEqual({ param: 'temperature' });
  });
});

describe('Responses request encoding', () => {
  const ir: IrRequest = {
    model: 'up-model',
    system: [{ type: 'text', text: 'sys' }],
    messages: [
      { role: 'user', parts: [{ type: 'text', text: 'q' }, { type: 'document', source: { kind: 'base64', mediaType: 'application/pdf', data: 'UEY=' } }] },
      {
        role: 'assistant',
        parts: [
          { type: 'thinking', text: 'hmm', signature: 'enc' },
          { type: 'thinking', text: 'unsigned' },
          { type: 'text', text: 'ok' },
          { type: 'tool_call', id: 'c1', name: 'f', arguments: '{}' },
        ],
      },
      { role: 'tool', parts: [{ type: 'tool_result', toolCallId: 'c1', content: [{ type: 'text', text: 'done' }] }] },
    ],
    tools: [{ type: 'function', name: 'f' }],
    toolChoice: 'required',
    reasoning: { budgetTokens: 4000 },
    stop: ['x'],
    stream: true,
  };

  it('builds input items, defaults strict to false and asks for encrypted reasoning', () => {
    const body = upstream.encodeRequest(structuredClone(ir));
    expect(body).toEqual({
      model: 'up-model',
      instructions: 'sys',
      input: [
        {
          type: 'message',
          role: 'user',
          content: [
            { type: 'input_text', text: 'q' },
            { type: 'input_file', filename: 'document.pdf', file_data: 'data:application/pdf;base64,UEY=' },
          ],
        },
        { type: 'reasoning', summary: [{ type: 'summary_text', text: 'hmm' }], encrypted_content: 'enc' },
        { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'ok' }] },
        { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
        { type: 'function_call_output', call_id: 'c1', output: 'done' },
      ],
      tools: [{ type: 'function', name: 'f', parameters: { type: 'object', properties: {} }, strict: false }],
      tool_choice: 'required',
      reasoning: { effort: 'high', summary: 'auto' },
      store: false,
      include: ['reasoning.encrypted_content'],
      stream: true,
    });
  });

  it('lets a Responses client set its own storage fields', () => {
    const decoded = client.decodeRequest(base({ store: true, previous_response_id: 'resp_9', text: { verbosity: 'high', format: { type: 'json_object' } } }));
    const body = upstream.encodeRequest(decoded);
    expect(body).toMatchObject({ store: true, previous_response_id: 'resp_9', text: { format: { type: 'json_object' }, verbosity: 'high' } });
    expect(body.include).toBeUndefined();
  });

  it('rejects stored-state fields for an upstream of another format', () => {
    const decoded = client.decodeRequest(base({ previous_response_id: 'resp_9' }));
    expect(() => assertResponsesStatePortable(decoded, 'openai-responses')).not.toThrow();
    const error = badRequestOf(() => assertResponsesStatePortable(decoded, 'anthropic'));
    expect(error.extra).toEqual({ param: 'previous_response_id' });
  });
});

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
        { type: 'thinking', text: 't', signature: 'e' },
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
      { type: 'thinking_signature', index: 0, signature: 'enc' },
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
      { type: 'thinking_signature', index: 0, signature: 's' },
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
