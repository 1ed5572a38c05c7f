import type { EncodeOptions } from '../../codec.js';
import type { IrFinishReason, IrRequest, IrResponse, IrUsage } from '../../ir.js';
import { idFactory, nowSeconds, replyModel } from '../../util/ids.js';

/** IR finish reason -> legacy `finish_reason` (only stop, length and content_filter exist there). */
export function completionFinish(reason: IrFinishReason): 'stop' | 'length' | 'content_filter' {
  if (reason === 'length' || reason === 'content_filter') return reason;
  return 'stop';
}

/** Legacy usage: the three totals, without detail objects (the format never had them). */
export function completionUsage(usage: IrUsage): Record<string, number> {
  return { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens };
}

/**
 * IR reply -> `text_completion`. Only text reaches the client (thinking and tool calls have no place in this
 * format; a refusal is shown as the text it is); with `echo` the prompt is put in front of the completion,
 * as the legacy API does.
 */
export function encodeCompletionResponse(response: IrResponse, request: IrRequest, options?: EncodeOptions): Record<string, unknown> {
  const text = response.parts.flatMap((p) => (p.type === 'text' || p.type === 'refusal' ? [p.text] : [])).join('');
  const echo = request.legacy?.echo ? request.legacy.prompt : '';
  const body: Record<string, unknown> = {
    id: idFactory(options)('cmpl-'),
    object: 'text_completion',
    created: nowSeconds(options),
    model: replyModel(response.model, request),
    choices: [{ text: echo + text, index: 0, logprobs: null, finish_reason: completionFinish(response.finishReason) }],
  };
  if (response.usage) body.usage = completionUsage(response.usage);
  return body;
}
