import { errorObject } from '../errors.js';
import { splitArguments, splitText, type Finish, type Reply } from '../reply.js';
import { dataFrame, type RenderCtx, type WireFormat } from './format.js';

/** Chat Completions has no reasoning text, so thinking is dropped and only counted in usage. */
const FINISH: Record<Finish, string> = {
  stop: 'stop',
  length: 'length',
  tool_calls: 'tool_calls',
  content_filter: 'content_filter',
};

export function chatUsage(r: Reply) {
  return {
    prompt_tokens: r.usage.input,
    completion_tokens: r.usage.output,
    total_tokens: r.usage.input + r.usage.output,
    prompt_tokens_details: { cached_tokens: r.usage.cached, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: r.usage.reasoning,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}

function callId(c: Reply['calls'][number]): string {
  return c.id ?? `call_${c.key}`;
}

function envelope(ctx: RenderCtx) {
  return {
    id: `chatcmpl-${ctx.id}`,
    object: 'chat.completion.chunk',
    created: ctx.created,
    model: ctx.model,
    service_tier: 'default',
    system_fingerprint: null,
  };
}

export const openaiChat: WireFormat = {
  jsonContentType: 'application/json',
  sseContentType: 'text/event-stream; charset=utf-8',

  json(ctx) {
    const r = ctx.reply;
    const calls = r.calls.map((c) => ({
      id: callId(c),
      type: 'function',
      function: { name: c.name, arguments: c.arguments },
    }));
    return {
      id: `chatcmpl-${ctx.id}`,
      object: 'chat.completion',
      created: ctx.created,
      model: ctx.model,
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: calls.length > 0 && r.text === '' ? null : r.text,
            refusal: null,
            annotations: [],
            ...(calls.length > 0 ? { tool_calls: calls } : {}),
          },
          logprobs: null,
          finish_reason: FINISH[r.finish],
        },
      ],
      usage: chatUsage(r),
      service_tier: 'default',
      system_fingerprint: null,
    };
  },

  stream(ctx) {
    const r = ctx.reply;
    const includeUsage = ctx.req.json?.stream_options?.include_usage === true;
    // With include_usage every chunk carries `usage: null` until the final usage-only chunk.
    const usageField = includeUsage ? { usage: null } : {};
    const chunk = (delta: object, finish: string | null = null) =>
      dataFrame({ ...envelope(ctx), choices: [{ index: 0, delta, finish_reason: finish }], ...usageField });

    const frames = [chunk({ role: 'assistant', content: '', refusal: null })];
    for (const piece of splitText(r.text, r.chunks)) frames.push(chunk({ content: piece }));
    r.calls.forEach((c, index) => {
      frames.push(
        chunk({ tool_calls: [{ index, id: callId(c), type: 'function', function: { name: c.name, arguments: '' } }] }),
      );
      for (const frag of splitArguments(c.arguments)) {
        frames.push(chunk({ tool_calls: [{ index, function: { arguments: frag } }] }));
      }
    });
    frames.push(chunk({}, FINISH[r.finish]));
    if (includeUsage) frames.push(dataFrame({ ...envelope(ctx), choices: [], usage: chatUsage(r) }));
    frames.push(dataFrame('[DONE]'));
    return frames;
  },

  streamError(ctx, e) {
    return dataFrame(errorObject('openai', { ...e, model: ctx.model }, ''));
  },
};
