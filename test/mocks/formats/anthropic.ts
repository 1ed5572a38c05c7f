import { splitArguments, splitText, type Finish, type Reply } from '../reply.js';
import { errorObject } from '../errors.js';
import { eventFrame, type RenderCtx, type WireFormat } from './format.js';

const STOP: Record<Finish, string> = {
  stop: 'end_turn',
  length: 'max_tokens',
  tool_calls: 'tool_use',
  content_filter: 'refusal',
};

type Block =
  | { type: 'thinking'; thinking: string; signature: string }
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: unknown; raw: string };

function parseInput(args: string): unknown {
  try {
    return JSON.parse(args);
  } catch {
    // A test may script malformed arguments on purpose; the non-stream body still needs an object.
    return {};
  }
}

function blocks(r: Reply): Block[] {
  const out: Block[] = [];
  if (r.thinking) out.push({ type: 'thinking', thinking: r.thinking.text, signature: r.thinking.signature });
  if (r.text !== '' || (r.calls.length === 0 && r.finish !== 'content_filter')) out.push({ type: 'text', text: r.text });
  for (const c of r.calls) {
    out.push({ type: 'tool_use', id: c.id ?? `toolu_${c.key}`, name: c.name, input: parseInput(c.arguments), raw: c.arguments });
  }
  return out;
}

function usage(r: Reply, outputTokens: number) {
  return {
    input_tokens: r.usage.input,
    cache_creation_input_tokens: 0,
    cache_read_input_tokens: r.usage.cached,
    output_tokens: outputTokens,
  };
}

function startBlock(b: Block): object {
  if (b.type === 'thinking') return { type: 'thinking', thinking: '', signature: '' };
  if (b.type === 'text') return { type: 'text', text: '' };
  return { type: 'tool_use', id: b.id, name: b.name, input: {} };
}

function deltas(b: Block, chunks: number): object[] {
  if (b.type === 'thinking') {
    return [
      ...splitText(b.thinking, chunks).map((thinking) => ({ type: 'thinking_delta', thinking })),
      { type: 'signature_delta', signature: b.signature },
    ];
  }
  if (b.type === 'text') return splitText(b.text, chunks).map((text) => ({ type: 'text_delta', text }));
  // The API opens every tool input with an empty fragment; clients must tolerate it.
  return ['', ...splitArguments(b.raw)].map((partial_json) => ({ type: 'input_json_delta', partial_json }));
}

export const anthropic: WireFormat = {
  jsonContentType: 'application/json',
  sseContentType: 'text/event-stream; charset=utf-8',

  json(ctx) {
    const r = ctx.reply;
    return {
      id: `msg_${ctx.id}`,
      type: 'message',
      role: 'assistant',
      model: ctx.model,
      content: blocks(r).map((b) => (b.type === 'tool_use' ? { type: b.type, id: b.id, name: b.name, input: b.input } : b)),
      stop_reason: STOP[r.finish],
      stop_sequence: null,
      usage: { ...usage(r, r.usage.output), service_tier: 'standard' },
    };
  },

  stream(ctx) {
    const r = ctx.reply;
    const frames: string[] = [];
    const emit = (type: string, payload: object = {}) => frames.push(eventFrame(type, { type, ...payload }));
    emit('message_start', {
      message: {
        id: `msg_${ctx.id}`,
        type: 'message',
        role: 'assistant',
        model: ctx.model,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: { ...usage(r, 1), service_tier: 'standard' },
      },
    });
    const list = blocks(r);
    if (list.length === 0) emit('ping');
    list.forEach((b, index) => {
      emit('content_block_start', { index, content_block: startBlock(b) });
      if (index === 0) emit('ping');
      for (const delta of deltas(b, r.chunks)) emit('content_block_delta', { index, delta });
      emit('content_block_stop', { index });
    });
    emit('message_delta', { delta: { stop_reason: STOP[r.finish], stop_sequence: null }, usage: usage(r, r.usage.output) });
    emit('message_stop');
    return frames;
  },

  streamError(ctx, e) {
    // In-stream errors carry no request_id: the request id already came in the 200's headers.
    const { request_id: _omit, ...body } = errorObject('anthropic', { ...e, model: ctx.model }, '') as Record<string, unknown>;
    return eventFrame('error', body);
  },
};
