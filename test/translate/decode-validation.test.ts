import { describe, expect, it } from 'vitest';
import { asRouterError, RouterError } from '../../src/daemon/http/errors.js';
import { CodecError } from '../../src/daemon/translate/errors.js';
import type { WireFormat } from '../../src/daemon/translate/ir.js';
import { getClientCodec } from '../../src/daemon/translate/registry.js';

/** decodeRequest turns invalid client input into a 400 that names the parameter, as the providers do. */

function badRequestOf(format: WireFormat, body: unknown): RouterError {
  try {
    getClientCodec(format).decodeRequest(body);
  } catch (error) {
    // Codecs raise their own error; the HTTP layer maps it to the standard 400 (status, code, param).
    expect(error).toBeInstanceOf(CodecError);
    return asRouterError(error) as RouterError;
  }
  throw new Error('expected a 400');
}

const user = { role: 'user', content: 'hi' };

describe('Chat Completions request validation', () => {
  it.each([
    ['a body that is not an object', [], undefined],
    ['missing messages', { model: 'm' }, 'messages'],
    ['empty messages', { model: 'm', messages: [] }, 'messages'],
    ['an unknown role', { model: 'm', messages: [{ role: 'function', content: 'x', name: 'f' }] }, 'messages[0].role'],
    ['user content of the wrong type', { model: 'm', messages: [{ role: 'user', content: 42 }] }, 'messages[0].content'],
    ['a tool message without tool_call_id', { model: 'm', messages: [user, { role: 'tool', content: 'x' }] }, 'messages[1].tool_call_id'],
    ['a temperature out of range', { model: 'm', messages: [user], temperature: 3 }, 'temperature'],
    ['n > 1', { model: 'm', messages: [user], n: 2 }, 'n'],
    ['a function tool without a name', { model: 'm', messages: [user], tools: [{ type: 'function', function: {} }] }, 'tools[0].function.name'],
  ])('rejects %s', (_label, body, param) => {
    const error = badRequestOf('openai-chat', body);
    expect(error.status).toBe(400);
    expect(error.extra?.param).toBe(param);
  });

  it('rejects a file part with neither file_id nor file_data', () => {
    const body = { model: 'm', messages: [{ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf' } }] }] };
    expect(badRequestOf('openai-chat', body).extra?.param).toBe('messages[0].content[0].file');
  });

  it('keeps the opening developer text as the system prompt, a later system message at its place, and notes fields it cannot carry', () => {
    const ir = getClientCodec('openai-chat').decodeRequest({
      model: 'm',
      messages: [{ role: 'developer', content: 'a' }, user, { role: 'system', content: [{ type: 'text', text: 'b' }] }],
      logit_bias: { '1': 2 },
      stop: 'END',
    });
    expect(ir.system).toEqual([{ type: 'text', text: 'a' }]);
    expect(ir.messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }, { role: 'system', parts: [{ type: 'text', text: 'b' }] }]);
    expect(ir.stop).toEqual(['END']);
    expect(ir.dropped).toContain('logit_bias');
  });

  it('prefers max_completion_tokens and names tool results after their call', () => {
    const ir = getClientCodec('openai-chat').decodeRequest({
      model: 'm',
      max_tokens: 10,
      max_completion_tokens: 20,
      messages: [user, { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{}' } }] }, { role: 'tool', tool_call_id: 'c1', content: 'ok' }],
    });
    expect(ir.maxTokens).toBe(20);
    expect(ir.messages[2]).toEqual({ role: 'tool', parts: [{ type: 'tool_result', toolCallId: 'c1', name: 'f', content: [{ type: 'text', text: 'ok' }] }] });
  });
});

describe('Messages request validation', () => {
  const base = { model: 'm', max_tokens: 100, messages: [user] };
  it.each([
    ['missing max_tokens', { model: 'm', messages: [user] }, 'max_tokens'],
    ['missing messages', { model: 'm', max_tokens: 100 }, 'messages'],
    ['empty messages', { ...base, messages: [] }, 'messages'],
    ['a tool role in messages', { ...base, messages: [{ role: 'tool', content: 'x' }] }, 'messages[0].role'],
    ['a user turn without content', { ...base, messages: [{ role: 'user' }] }, 'messages[0].content'],
    ['a tool_result without tool_use_id', { ...base, messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] }, 'messages[0].content[0].tool_use_id'],
    ['a base64 image without media_type', { ...base, messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'base64', data: 'x' } }] }] }, 'messages[0].content[0].source.media_type'],
    ['a thinking budget under 1024', { ...base, thinking: { type: 'enabled', budget_tokens: 100 } }, 'thinking.budget_tokens'],
    ['a temperature above 1', { ...base, temperature: 1.5 }, 'temperature'],
    ['a custom tool without input_schema', { ...base, tools: [{ name: 't' }] }, 'tools[0].input_schema'],
  ])('rejects %s', (_label, body, param) => {
    const error = badRequestOf('anthropic', body);
    expect(error.status).toBe(400);
    expect(error.extra?.param).toBe(param);
  });

  it('splits tool results out of a user turn and keeps built-in tools raw', () => {
    const ir = getClientCodec('anthropic').decodeRequest({
      ...base,
      messages: [
        user,
        { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'f', input: { a: 1 } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'r' }], is_error: true }, { type: 'text', text: 'next' }] },
      ],
      tools: [{ type: 'web_search_20250305', name: 'web_search', max_uses: 2 }],
      tool_choice: { type: 'any', disable_parallel_tool_use: true },
    });
    expect(ir.messages.slice(2)).toEqual([
      { role: 'tool', parts: [{ type: 'tool_result', toolCallId: 't1', name: 'f', isError: true, content: [{ type: 'text', text: 'r' }] }] },
      { role: 'user', parts: [{ type: 'text', text: 'next' }] },
    ]);
    expect(ir.tools).toEqual([{ type: 'builtin', format: 'anthropic', raw: { type: 'web_search_20250305', name: 'web_search', max_uses: 2 } }]);
    expect([ir.toolChoice, ir.parallelToolCalls]).toEqual(['required', false]);
  });
});

describe('legacy Completions request validation', () => {
  it.each([
    ['missing prompt', { model: 'm' }, 'prompt'],
    ['a token prompt', { model: 'm', prompt: [1, 2, 3] }, 'prompt'],
    ['token-array prompts', { model: 'm', prompt: [[1, 2]] }, 'prompt'],
    ['several prompts', { model: 'm', prompt: ['a', 'b'] }, 'prompt'],
    ['best_of 0', { model: 'm', prompt: 'a', best_of: 0 }, 'best_of'],
  ])('rejects %s', (_label, body, param) => {
    const error = badRequestOf('openai-completions', body);
    expect(error.status).toBe(400);
    expect(error.extra?.param).toBe(param);
  });

  it('says clearly that token prompts are not supported', () => {
    expect(badRequestOf('openai-completions', { model: 'm', prompt: [1, 2] }).message).toMatch(/Token-array prompts are not supported/);
  });

  it('accepts a one-string array and keeps the legacy fields', () => {
    const ir = getClientCodec('openai-completions').decodeRequest({ model: 'm', prompt: ['Say hi'], echo: true, suffix: '!' });
    expect(ir.messages).toEqual([{ role: 'user', parts: [{ type: 'text', text: 'Say hi' }] }]);
    expect(ir.legacy).toEqual({ prompt: 'Say hi', suffix: '!', echo: true });
    expect(ir.dropped).toContain('suffix');
  });
});
