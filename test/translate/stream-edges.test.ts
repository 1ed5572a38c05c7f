import { describe, expect, it } from 'vitest';
import type { IrRequest, IrStreamEvent, SseMessage } from '../../src/daemon/translate/ir.js';
import { getClientCodec, getUpstreamCodec } from '../../src/daemon/translate/registry.js';
import { deterministicOptions } from './golden-support.js';

/** Edge cases of the stream decoders and encoders that the golden corpus does not show one by one. */

function decode(format: 'anthropic' | 'openai-chat', messages: SseMessage[]): IrStreamEvent[] {
  const decoder = getUpstreamCodec(format).createStreamDecoder();
  return [...messages.flatMap((m) => decoder.push(m)), ...decoder.end()];
}

const an = (type: string, data: Record<string, unknown> = {}): SseMessage => ({ event: type, data: JSON.stringify({ type, ...data }) });
const oa = (delta: Record<string, unknown>, finish: string | null = null): SseMessage => ({ data: JSON.stringify({ id: 'c', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] }) });
const start = an('message_start', { message: { id: 'msg_1', model: 'm', usage: { input_tokens: 5, output_tokens: 1 } } });

describe('Anthropic stream decoder', () => {
  it('reports an empty stream (no message_start) as a 502 error', () => {
    expect(decode('anthropic', [])).toEqual([{ type: 'error', status: 502, message: expect.stringMatching(/upstream stream was empty/) }]);
  });

  it('reports message_start followed by nothing as empty, never as a success', () => {
    const events = decode('anthropic', [start, an('ping')]);
    expect(events.at(-1)).toMatchObject({ type: 'error', status: 502, message: expect.stringMatching(/empty/) });
    expect(events.some((e) => e.type === 'finish')).toBe(false);
  });

  it('reports a stream cut after some content as an error', () => {
    const events = decode('anthropic', [start, an('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }), an('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hi' } })]);
    expect(events.at(-1)).toMatchObject({ type: 'error', status: 502, message: expect.stringMatching(/before message_stop/) });
  });

  it('turns an error event into an IR error with the matching status', () => {
    const events = decode('anthropic', [start, an('error', { error: { type: 'overloaded_error', message: 'Overloaded' } })]);
    expect(events.at(-1)).toEqual({ type: 'error', status: 529, message: 'Overloaded', errorType: 'overloaded_error' });
  });

  it('gives a tool call with no streamed input the arguments {}', () => {
    const events = decode('anthropic', [
      start,
      an('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 't', name: 'f', input: {} } }),
      an('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: '' } }),
      an('content_block_stop', { index: 0 }),
      an('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 3 } }),
      an('message_stop'),
    ]);
    expect(events.filter((e) => e.type === 'tool_call_delta')).toEqual([{ type: 'tool_call_delta', index: 0, argumentsDelta: '{}' }]);
    expect(events.at(-1)).toMatchObject({ type: 'finish', finishReason: 'tool_calls', usage: { inputTokens: 5, outputTokens: 3 } });
  });
});

describe('Chat Completions stream decoder', () => {
  it('reports a stream of only [DONE] as empty', () => {
    expect(decode('openai-chat', [{ data: '[DONE]' }])).toEqual([{ type: 'error', status: 502, message: expect.stringMatching(/empty/) }]);
  });

  it('reports a stream cut before finish_reason and [DONE] as an error', () => {
    expect(decode('openai-chat', [oa({ content: 'Hi' })]).at(-1)).toMatchObject({ type: 'error', status: 502 });
  });

  it('finishes a stream that ends with [DONE] but no finish_reason (some compatible servers)', () => {
    expect(decode('openai-chat', [oa({ content: 'Hi' }), { data: '[DONE]' }]).at(-1)).toEqual({ type: 'finish', finishReason: 'stop' });
  });

  it('reads DeepSeek reasoning_content and OpenRouter reasoning as thinking', () => {
    const events = decode('openai-chat', [oa({ reasoning_content: 'a' }), oa({ reasoning: 'b' }), oa({ content: 'c' }, 'stop')]);
    expect(events.filter((e) => e.type !== 'start')).toEqual([
      { type: 'thinking_delta', index: 0, text: 'a' },
      { type: 'thinking_delta', index: 0, text: 'b' },
      { type: 'block_stop', index: 0 },
      { type: 'text_delta', index: 1, text: 'c' },
      { type: 'block_stop', index: 1 },
      { type: 'finish', finishReason: 'stop' },
    ]);
  });

  it('keeps every argument fragment of interleaved parallel calls in order, and calls a tool turn a tool turn', () => {
    const call = (index: number, fields: Record<string, unknown>) => oa({ tool_calls: [{ index, ...fields }] });
    const events = decode('openai-chat', [
      call(0, { id: 'a', function: { name: 'f', arguments: '{"x"' } }),
      call(1, { id: 'b', function: { name: 'g', arguments: '{"y"' } }),
      call(0, { function: { arguments: ':1}' } }),
      call(1, { function: { arguments: ':2}' } }),
      oa({}, 'stop'),
      { data: '[DONE]' },
    ]);
    const args = (i: number) => events.flatMap((e) => (e.type === 'tool_call_delta' && e.index === i ? [e.argumentsDelta] : [])).join('');
    expect([args(0), args(1)]).toEqual(['{"x":1}', '{"y":2}']);
    expect(events.at(-1)).toEqual({ type: 'finish', finishReason: 'tool_calls' });
  });

  it('turns an error chunk into an IR error', () => {
    const events = decode('openai-chat', [oa({ content: 'Hi' }), { data: JSON.stringify({ error: { message: 'boom', type: 'server_error' } }) }]);
    expect(events.at(-1)).toEqual({ type: 'error', status: 502, message: 'boom', errorType: 'server_error' });
  });
});

describe('stream encoders', () => {
  const request: IrRequest = { model: 'test-model', system: [], messages: [], stream: true };
  const encode = (format: 'anthropic' | 'openai-chat' | 'openai-completions', events: IrStreamEvent[], req = request) => {
    const encoder = getClientCodec(format).createStreamEncoder(req, deterministicOptions());
    return [...events.flatMap((e) => encoder.write(e)), ...encoder.end()];
  };
  const names = (messages: SseMessage[]) => messages.map((m) => m.event ?? JSON.parse(m.data).object ?? m.data);

  it('Anthropic: no empty text block, ping after message_start, tool turns end with tool_use', () => {
    const out = encode('anthropic', [
      { type: 'start', id: 'x', model: 'm', usage: { inputTokens: 7 } },
      { type: 'text_delta', index: 0, text: '' },
      { type: 'block_stop', index: 0 },
      { type: 'tool_call_start', index: 1, id: 't', name: 'f' },
      { type: 'tool_call_delta', index: 1, argumentsDelta: '{}' },
      { type: 'finish', finishReason: 'stop', usage: { inputTokens: 7, outputTokens: 2 } },
    ]);
    expect(names(out)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'content_block_stop', 'message_delta', 'message_stop']);
    expect(JSON.parse(out[0]!.data).message.usage.input_tokens).toBe(7);
    expect(JSON.parse(out[2]!.data)).toMatchObject({ index: 0, content_block: { type: 'tool_use', id: 't' } });
    expect(JSON.parse(out[5]!.data)).toMatchObject({ delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 2 } });
  });

  it('Chat Completions: usage chunk only with include_usage', () => {
    const events: IrStreamEvent[] = [{ type: 'start', id: 'x', model: 'm' }, { type: 'text_delta', index: 0, text: 'Hi' }, { type: 'finish', finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1 } }];
    const without = encode('openai-chat', events);
    const withUsage = encode('openai-chat', events, { ...request, includeUsage: true });
    expect(without.filter((m) => m.data.includes('"choices":[]'))).toHaveLength(0);
    expect(withUsage.filter((m) => m.data.includes('"choices":[]'))).toHaveLength(1);
    expect(without.at(-1)).toEqual({ data: '[DONE]' });
  });

  it('legacy Completions: echo puts the prompt first', () => {
    const out = encode('openai-completions', [{ type: 'start', id: 'x', model: 'm' }, { type: 'text_delta', index: 0, text: ' world' }, { type: 'finish', finishReason: 'stop' }], { ...request, legacy: { prompt: 'Hello', echo: true } });
    const texts = out.filter((m) => m.data !== '[DONE]').map((m) => JSON.parse(m.data).choices[0].text);
    expect(texts).toEqual(['Hello', ' world', '']);
  });
});

describe('Chat Completions stream decoder: skippable (unparsed forwarding after the commit)', () => {
  const started = () => {
    const d = getUpstreamCodec('openai-chat').createStreamDecoder();
    d.push(oa({ role: 'assistant', content: 'Hi' }));
    return d;
  };
  const raw = (text: string): SseMessage => ({ data: text });
  const table: Array<[string, SseMessage, boolean]> = [
    ['a plain text delta', oa({ content: ' there' }), true],
    ['a text delta with explicit nulls (usage, refusal, finish_reason)', raw('{"id":"c","choices":[{"index":0,"delta":{"content":"x","refusal":null},"finish_reason":null}],"usage":null}'), true],
    ['nulls written with spaces', raw('{"choices":[{"delta":{"content":"x"},"finish_reason" : null}],"usage": null}'), true],
    ['quoted field names inside the text do not count', oa({ content: 'the "usage" and "tool_calls" and "finish_reason":"stop" words' }), true],
    ['the finish', oa({}, 'stop'), false],
    ['a finish written with a space', raw('{"choices":[{"delta":{},"finish_reason": "length"}]}'), false],
    ['a usage chunk', raw('{"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}'), false],
    ['a tool call delta', oa({ tool_calls: [{ index: 0, function: { arguments: '{}' } }] }), false],
    ['reasoning', oa({ reasoning_content: 'hmm' }), false],
    ['reasoning set to null is still not skipped (conservative)', raw('{"choices":[{"delta":{"content":"x","reasoning_content":null}}]}'), false],
    ['a refusal', oa({ refusal: 'no' }), false],
    ['an in-stream error', raw('{"error":{"message":"boom"}}'), false],
    ['[DONE]', raw('[DONE]'), false],
  ];
  it.each(table)('%s', (_name, msg, want) => {
    expect(started().skippable!(msg)).toBe(want);
  });

  it('nothing is skippable before the first chunk was decoded', () => {
    expect(getUpstreamCodec('openai-chat').createStreamDecoder().skippable!(oa({ content: 'x' }))).toBe(false);
  });
});

describe('Messages stream decoder: skippable text deltas', () => {
  const startedDecoder = () => {
    const d = getUpstreamCodec('anthropic').createStreamDecoder();
    d.push(start);
    d.push(an('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }));
    return d;
  };
  const rawEv = (event: string, data: string): SseMessage => ({ event, data });
  it('skips exactly text deltas as Anthropic writes them, and reads their text back', () => {
    const d = startedDecoder();
    const text = rawEv('content_block_delta', '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hello \\"usage\\" there"}}');
    expect(d.skippable!(text)).toBe(true);
    expect(d.skippedText!(text)).toBe('Hello "usage" there');
    for (const m of [
      an('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'hmm' } }),
      an('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{}' } }),
      an('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 3 } }),
      an('content_block_stop', { index: 0 }),
      an('message_stop'),
      rawEv('content_block_delta', '{"index":0,"type":"content_block_delta","delta":{"type":"text_delta","text":"reordered"}}'),
      rawEv('error', '{"type":"error","error":{"type":"overloaded_error","message":"x"}}'),
    ]) {
      expect(d.skippable!(m), m.data).toBe(false);
    }
  });

  it('nothing is skippable before message_start', () => {
    const d = getUpstreamCodec('anthropic').createStreamDecoder();
    expect(d.skippable!(an('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'x' } }))).toBe(false);
  });
});
