import { describe, expect, it } from 'vitest';
import { decodeGeminiRequest, geminiClient as client, geminiUpstream as upstream } from '../../src/daemon/translate/formats/gemini/index.js';
import type { IrStreamEvent, SseMessage } from '../../src/daemon/translate/ir.js';

const user = (text: string) => ({ role: 'user', parts: [{ text }] });

describe('Gemini reply decoding', () => {
  it('reads parts, usage and finish reasons', () => {
    const ir = upstream.decodeResponse({
      candidates: [
        {
          content: { role: 'model', parts: [{ text: 'hm', thought: true }, { text: 'Hi' }, { functionCall: { name: 'f', args: { a: 1 } }, thoughtSignature: 'sig' }] },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 3, cachedContentTokenCount: 4, totalTokenCount: 18 },
      modelVersion: 'gemini-x',
      responseId: 'r1',
    });
    expect(ir).toEqual({
      id: 'r1',
      model: 'gemini-x',
      parts: [
        { type: 'thinking', text: 'hm' },
        { type: 'text', text: 'Hi' },
        { type: 'thinking', text: '', signature: 'sig', issuer: 'gemini' },
        { type: 'tool_call', id: 'call_r1_0', name: 'f', arguments: '{"a":1}' },
      ],
      finishReason: 'tool_calls',
      usage: { inputTokens: 10, outputTokens: 8, cacheReadTokens: 4, reasoningTokens: 3 },
    });
  });

  it('maps blocked and truncated replies', () => {
    const finish = (finishReason: string) => upstream.decodeResponse({ candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason }] }).finishReason;
    expect(finish('MAX_TOKENS')).toBe('length');
    expect(finish('SAFETY')).toBe('content_filter');
    expect(finish('RECITATION')).toBe('content_filter');
    expect(upstream.decodeResponse({ promptFeedback: { blockReason: 'SAFETY' } })).toMatchObject({ parts: [], finishReason: 'content_filter' });
  });

  it('encodes a reply a Gemini client can send back, with router ids and usage split back out', () => {
    const body = client.encodeResponse(
      {
        id: 'x',
        model: 'm',
        parts: [{ type: 'thinking', text: '', signature: 's', issuer: 'gemini' }, { type: 'tool_call', id: 'c1', name: 'f', arguments: '{"a":1}' }],
        finishReason: 'tool_calls',
        usage: { inputTokens: 10, outputTokens: 8, reasoningTokens: 3 },
      },
      decodeGeminiRequest({ contents: [user('q')] }, 'm', false),
      { newId: (p) => `${p}id1` },
    );
    expect(body).toEqual({
      candidates: [{ content: { role: 'model', parts: [{ functionCall: { id: 'c1', name: 'f', args: { a: 1 } }, thoughtSignature: 's' }] }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, thoughtsTokenCount: 3, totalTokenCount: 18 },
      modelVersion: 'm',
      responseId: 'id1',
    });
  });
});

const chunk = (parts: unknown[], extra: Record<string, unknown> = {}): SseMessage => ({
  data: JSON.stringify({ candidates: [{ content: { role: 'model', parts }, index: 0, ...extra }], modelVersion: 'g', responseId: 'r' }),
});

function decodeAll(messages: SseMessage[]): IrStreamEvent[] {
  const decoder = upstream.createStreamDecoder();
  return [...messages.flatMap((m) => decoder.push(m)), ...decoder.end()];
}

describe('Gemini stream decoding', () => {
  it('turns partial responses into IR blocks, finishing at the end of the stream', () => {
    const events = decodeAll([
      chunk([{ text: 'hm', thought: true }]),
      chunk([{ text: 'Hel' }]),
      chunk([{ text: 'lo' }]),
      chunk([{ functionCall: { name: 'f', args: { a: 1 } } }]),
      chunk([{ text: '', thoughtSignature: 'sig' }], { finishReason: 'STOP' }),
      { data: JSON.stringify({ usageMetadata: { promptTokenCount: 2, candidatesTokenCount: 3, totalTokenCount: 5 } }) },
    ]);
    expect(events).toEqual([
      { type: 'start', id: 'r', model: 'g' },
      { type: 'thinking_delta', index: 0, text: 'hm' },
      { type: 'block_stop', index: 0 },
      { type: 'text_delta', index: 1, text: 'Hel' },
      { type: 'text_delta', index: 1, text: 'lo' },
      { type: 'block_stop', index: 1 },
      { type: 'tool_call_start', index: 2, id: 'call_r_0', name: 'f' },
      { type: 'tool_call_delta', index: 2, argumentsDelta: '{"a":1}' },
      { type: 'block_stop', index: 2 },
      { type: 'thinking_signature', index: 3, signature: 'sig', issuer: 'gemini' },
      { type: 'block_stop', index: 3 },
      { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 2, outputTokens: 3 } },
    ]);
  });

  it('reports error chunks, empty streams and streams without a finish reason', () => {
    expect(decodeAll([chunk([{ text: 'a' }]), { data: JSON.stringify({ error: { code: 429, message: 'quota', status: 'RESOURCE_EXHAUSTED' } }) }]).at(-1)).toEqual({
      type: 'error',
      status: 429,
      message: 'quota',
      code: 'RESOURCE_EXHAUSTED',
    });
    expect(decodeAll([])).toEqual([{ type: 'error', status: 502, message: 'The upstream stream was empty: it ended without any content.' }]);
    expect(decodeAll([chunk([{ text: 'a' }])]).at(-1)).toMatchObject({ type: 'error', status: 502 });
  });

  it('round-trips through the stream encoder', () => {
    const irEvents: IrStreamEvent[] = [
      { type: 'start', id: 'up', model: 'g' },
      { type: 'thinking_delta', index: 0, text: 'a' },
      { type: 'thinking_delta', index: 0, text: 'b' },
      { type: 'thinking_signature', index: 0, signature: 's', issuer: 'gemini' },
      { type: 'block_stop', index: 0 },
      { type: 'text_delta', index: 1, text: 'Hi' },
      { type: 'block_stop', index: 1 },
      { type: 'tool_call_start', index: 2, id: 'c', name: 'f' },
      { type: 'tool_call_delta', index: 2, argumentsDelta: '{"x":' },
      { type: 'tool_call_delta', index: 2, argumentsDelta: '2}' },
      { type: 'block_stop', index: 2 },
      { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 1, outputTokens: 2 } },
    ];
    const encoder = client.createStreamEncoder(decodeGeminiRequest({ contents: [user('q')] }, 'g', true), { newId: () => 'rid' });
    const messages = [...irEvents.flatMap((e) => encoder.write(e)), ...encoder.end()];
    expect(messages.every((m) => m.event === undefined)).toBe(true);
    expect(decodeAll(messages)).toEqual([
      { type: 'start', id: 'rid', model: 'g' },
      { type: 'thinking_delta', index: 0, text: 'a' },
      { type: 'thinking_delta', index: 0, text: 'b' },
      { type: 'thinking_signature', index: 0, signature: 's', issuer: 'gemini' },
      { type: 'block_stop', index: 0 },
      { type: 'text_delta', index: 1, text: 'Hi' },
      { type: 'block_stop', index: 1 },
      { type: 'tool_call_start', index: 2, id: 'c', name: 'f' },
      { type: 'tool_call_delta', index: 2, argumentsDelta: '{"x":2}' },
      { type: 'block_stop', index: 2 },
      { type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 1, outputTokens: 2 } },
    ]);
  });
});
