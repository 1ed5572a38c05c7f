import { describe, expect, it } from 'vitest';
import {
  assertResponsesStatePortable,
  openAiResponsesClient as client,
  openAiResponsesUpstream as upstream,
} from '../../src/daemon/translate/formats/openai-responses/index.js';
import type { IrRequest } from '../../src/daemon/translate/ir.js';
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
          { type: 'thinking', text: 'a\n\nb', signature: 'enc', issuer: 'openai' },
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
          { type: 'thinking', text: 'hmm', signature: 'enc', issuer: 'openai' },
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
