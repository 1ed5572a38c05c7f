import { splitArguments, splitText, type Reply } from '../reply.js';
import { eventFrame, type RenderCtx, type WireFormat } from './format.js';

type Item = Record<string, unknown> & { type: string; id: string };

function usage(r: Reply) {
  return {
    input_tokens: r.usage.input,
    input_tokens_details: { cached_tokens: r.usage.cached },
    output_tokens: r.usage.output,
    output_tokens_details: { reasoning_tokens: r.usage.reasoning },
    total_tokens: r.usage.input + r.usage.output,
  };
}

/** Why the response stopped early, or null; both truncation and filtering make it `incomplete`. */
function incompleteReason(r: Reply): string | null {
  if (r.finish === 'length') return 'max_output_tokens';
  if (r.finish === 'content_filter') return 'content_filter';
  return null;
}

/** The finished output items, in the order the API emits them: reasoning, message, function calls. */
function outputItems(ctx: RenderCtx): Item[] {
  const r = ctx.reply;
  const items: Item[] = [];
  if (r.thinking) {
    items.push({
      id: `rs_${ctx.id}`,
      type: 'reasoning',
      summary: [{ type: 'summary_text', text: r.thinking.text }],
      encrypted_content: r.thinking.signature,
    });
  }
  const wantsMessage = r.text !== '' || (r.calls.length === 0 && r.finish !== 'content_filter');
  if (wantsMessage) {
    items.push({
      id: `msg_${ctx.id}`,
      type: 'message',
      status: r.finish === 'length' ? 'incomplete' : 'completed',
      role: 'assistant',
      content: [{ type: 'output_text', text: r.text, annotations: [], logprobs: [] }],
    });
  }
  for (const c of r.calls) {
    items.push({
      id: `fc_${c.key}`,
      type: 'function_call',
      status: 'completed',
      arguments: c.arguments,
      call_id: c.id ?? `call_${c.key}`,
      name: c.name,
    });
  }
  return items;
}

function responseObject(ctx: RenderCtx, phase: 'in_progress' | 'final' | 'failed', error?: object) {
  const body = ctx.req.json ?? {};
  const r = ctx.reply;
  const reason = incompleteReason(r);
  const status = phase === 'final' ? (reason ? 'incomplete' : 'completed') : phase;
  return {
    id: `resp_${ctx.id}`,
    object: 'response',
    created_at: ctx.created,
    status,
    background: false,
    error: error ?? null,
    incomplete_details: phase === 'final' && reason ? { reason } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: ctx.model,
    output: phase === 'final' ? outputItems(ctx) : [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    service_tier: 'default',
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: phase === 'final' ? usage(r) : null,
    user: null,
    metadata: body.metadata ?? {},
  };
}

/** The added/delta/done event run of one output item, following the documented lifecycle. */
function itemEvents(item: Item, oi: number, r: Reply, emit: (type: string, payload: object) => void) {
  const at = { item_id: item.id, output_index: oi };
  if (item.type === 'reasoning') {
    const text = (item.summary as { text: string }[])[0]!.text;
    emit('response.output_item.added', { output_index: oi, item: { ...item, summary: [] } });
    emit('response.reasoning_summary_part.added', { ...at, summary_index: 0, part: { type: 'summary_text', text: '' } });
    for (const delta of splitText(text, r.chunks)) {
      emit('response.reasoning_summary_text.delta', { ...at, summary_index: 0, delta });
    }
    emit('response.reasoning_summary_text.done', { ...at, summary_index: 0, text });
    emit('response.reasoning_summary_part.done', { ...at, summary_index: 0, part: { type: 'summary_text', text } });
  } else if (item.type === 'message') {
    const part = (item.content as { text: string }[])[0]!;
    emit('response.output_item.added', { output_index: oi, item: { ...item, status: 'in_progress', content: [] } });
    emit('response.content_part.added', { ...at, content_index: 0, part: { ...part, text: '' } });
    for (const delta of splitText(part.text, r.chunks)) {
      emit('response.output_text.delta', { ...at, content_index: 0, delta, logprobs: [] });
    }
    emit('response.output_text.done', { ...at, content_index: 0, text: part.text, logprobs: [] });
    emit('response.content_part.done', { ...at, content_index: 0, part });
  } else {
    const args = item.arguments as string;
    emit('response.output_item.added', { output_index: oi, item: { ...item, status: 'in_progress', arguments: '' } });
    for (const delta of splitArguments(args)) emit('response.function_call_arguments.delta', { ...at, delta });
    emit('response.function_call_arguments.done', { ...at, name: item.name, arguments: args });
  }
  emit('response.output_item.done', { output_index: oi, item });
}

export const openaiResponses: WireFormat = {
  jsonContentType: 'application/json',
  sseContentType: 'text/event-stream; charset=utf-8',

  json(ctx) {
    return responseObject(ctx, 'final');
  },

  stream(ctx) {
    const frames: string[] = [];
    const emit = (type: string, payload: object) =>
      frames.push(eventFrame(type, { type, sequence_number: frames.length, ...payload }));
    emit('response.created', { response: responseObject(ctx, 'in_progress') });
    emit('response.in_progress', { response: responseObject(ctx, 'in_progress') });
    outputItems(ctx).forEach((item, oi) => itemEvents(item, oi, ctx.reply, emit));
    const final = responseObject(ctx, 'final');
    emit(final.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response: final });
    return frames;
  },

  // `response.failed` is the documented terminal event for a response that fails after streaming began.
  streamError(ctx, e, sent) {
    const error = { code: e.errorType ?? 'server_error', message: e.message ?? 'The server had an error while processing your request. Sorry about that!' };
    const type = 'response.failed';
    return eventFrame(type, { type, sequence_number: sent, response: responseObject(ctx, 'failed', error) });
  },
};
