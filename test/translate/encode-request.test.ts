import { describe, expect, it } from 'vitest';
import type { IrRequest } from '../../src/daemon/translate/ir.js';
import { getUpstreamCodec } from '../../src/daemon/translate/registry.js';

/** Upstream request decisions the golden corpus does not isolate: defaults, clamps and what gets dropped. */

const base = (extra: Partial<IrRequest> = {}): IrRequest => ({
  model: 'test-model',
  system: [],
  messages: [{ role: 'user', parts: [{ type: 'text', text: 'hi' }] }],
  stream: false,
  ...extra,
});

describe('Messages upstream request', () => {
  const encode = (r: IrRequest) => getUpstreamCodec('anthropic').encodeRequest(r);

  it('defaults max_tokens to 4096, and above the thinking budget when there is one', () => {
    expect(encode(base()).max_tokens).toBe(4096);
    expect(encode(base({ reasoning: { effort: 'xhigh' } }))).toMatchObject({ max_tokens: 8192 + 4096, thinking: { type: 'enabled', budget_tokens: 8192 } });
    expect(encode(base({ reasoning: { enabled: true } })).thinking).toEqual({ type: 'adaptive' });
  });

  it("asks for the model's own output maximum when the client set none (capped without streaming)", () => {
    const encodeFor = (r: IrRequest) => getUpstreamCodec('anthropic').encodeRequest(r, { maxOutputTokens: 64_000 });
    expect(encodeFor(base({ stream: true })).max_tokens).toBe(64_000);
    expect(encodeFor(base()).max_tokens).toBe(21_333);
    expect(encodeFor(base({ maxTokens: 100 })).max_tokens).toBe(100);
    expect(encodeFor(base({ stream: true, reasoning: { budgetTokens: 64_000 } })).max_tokens).toBe(64_000 + 4096);
  });

  it('drops temperature and top_k with thinking on, clamps temperature to 1 otherwise', () => {
    const thinking = base({ temperature: 0.5, topK: 5, reasoning: { budgetTokens: 2048 } });
    expect(encode(thinking)).not.toHaveProperty('temperature');
    expect(thinking.dropped).toEqual(['temperature (thinking enabled)', 'top_k (thinking enabled)']);
    expect(encode(base({ temperature: 1.7 })).temperature).toBe(1);
  });

  it('notes what Messages cannot express', () => {
    const request = base({
      responseFormat: { type: 'json_object' },
      seed: 1,
      tools: [{ type: 'builtin', format: 'openai-chat', raw: { type: 'custom', name: 'grammar' } }],
      messages: [{ role: 'user', parts: [{ type: 'audio', data: 'AAAA', format: 'wav' }, { type: 'text', text: 'x' }] }],
    });
    const body = encode(request);
    expect(body).not.toHaveProperty('tools');
    expect(request.dropped).toEqual(expect.arrayContaining(['response_format json_object', 'seed', 'builtin tool custom', 'audio input']));
  });

  it('sends tool results and the following user text as one user turn, results first', () => {
    const body = encode(base({
      messages: [
        { role: 'assistant', parts: [{ type: 'tool_call', id: 't', name: 'f', arguments: '{"a":1}' }] },
        { role: 'tool', parts: [{ type: 'tool_result', toolCallId: 't', content: [{ type: 'text', text: 'r' }], isError: true }] },
        { role: 'user', parts: [{ type: 'text', text: 'go on' }] },
      ],
    }));
    expect(body.messages).toEqual([
      { role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'f', input: { a: 1 } }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: 'r', is_error: true }, { type: 'text', text: 'go on' }] },
    ]);
  });
});

describe('Chat Completions upstream request', () => {
  const encode = (r: IrRequest) => getUpstreamCodec('openai-chat').encodeRequest(r);

  it('always asks a stream for usage, and maps a thinking budget to an effort', () => {
    expect(encode(base({ stream: true, reasoning: { budgetTokens: 3000 } }))).toMatchObject({ stream: true, stream_options: { include_usage: true }, reasoning_effort: 'high' });
  });

  it('sends reasoning_effort only to models that take it', () => {
    const thinking = (extra: Partial<IrRequest> = {}) => base({ reasoning: { enabled: true, budgetTokens: 10_000 }, ...extra });
    const gpt4o = thinking();
    expect(getUpstreamCodec('openai-chat').encodeRequest(gpt4o, { reasoningEffort: false })).not.toHaveProperty('reasoning_effort');
    expect(gpt4o.dropped).toContain('reasoning_effort (the model does not take it)');
    expect(getUpstreamCodec('openai-chat').encodeRequest(thinking(), { reasoningEffort: true }).reasoning_effort).toBe('high');
  });

  it('notes dropped thinking, is_error and top_k', () => {
    const request = base({
      topK: 3,
      messages: [
        { role: 'assistant', parts: [{ type: 'thinking', text: 't', signature: 's' }, { type: 'tool_call', id: 'c', name: 'f', arguments: '{}' }] },
        { role: 'tool', parts: [{ type: 'tool_result', toolCallId: 'c', content: [{ type: 'text', text: 'bad' }], isError: true }] },
      ],
    });
    expect(encode(request).messages).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 'c', content: 'bad' },
    ]);
    expect(request.dropped).toEqual(expect.arrayContaining(['assistant thinking', 'tool_result.is_error', 'top_k']));
  });
});
