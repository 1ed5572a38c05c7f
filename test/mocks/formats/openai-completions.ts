import { errorObject } from '../errors.js';
import { splitText, type Reply } from '../reply.js';
import { dataFrame, type RenderCtx, type WireFormat } from './format.js';

/** Legacy completions know neither tools nor reasoning: calls become their argument text, finish `stop`. */
function visibleText(r: Reply): string {
  if (r.calls.length === 0) return r.text;
  return r.text + r.calls.map((c) => c.arguments).join('\n');
}

function finish(r: Reply): string {
  if (r.finish === 'length') return 'length';
  if (r.finish === 'content_filter') return 'content_filter';
  return 'stop';
}

function usage(r: Reply) {
  return { prompt_tokens: r.usage.input, completion_tokens: r.usage.output, total_tokens: r.usage.input + r.usage.output };
}

function envelope(ctx: RenderCtx) {
  return { id: `cmpl-${ctx.id}`, object: 'text_completion', created: ctx.created, model: ctx.model };
}

export const openaiCompletions: WireFormat = {
  jsonContentType: 'application/json',
  sseContentType: 'text/event-stream; charset=utf-8',

  json(ctx) {
    const r = ctx.reply;
    return {
      ...envelope(ctx),
      choices: [{ text: visibleText(r), index: 0, logprobs: null, finish_reason: finish(r) }],
      usage: usage(r),
    };
  },

  stream(ctx) {
    const r = ctx.reply;
    const includeUsage = ctx.req.json?.stream_options?.include_usage === true;
    const usageField = includeUsage ? { usage: null } : {};
    const pieces = splitText(visibleText(r), r.chunks);
    if (pieces.length === 0) pieces.push('');
    const frames = pieces.map((text, i) =>
      dataFrame({
        ...envelope(ctx),
        choices: [{ text, index: 0, logprobs: null, finish_reason: i === pieces.length - 1 ? finish(r) : null }],
        ...usageField,
      }),
    );
    if (includeUsage) frames.push(dataFrame({ ...envelope(ctx), usage: usage(r), choices: [] }));
    frames.push(dataFrame('[DONE]'));
    return frames;
  },

  streamError(ctx, e) {
    return dataFrame(errorObject('openai', { ...e, model: ctx.model }, ''));
  },
};
