import type { IrResponse } from '../../ir.js';
import { CodecError } from '../../errors.js';
import { randomId } from '../../util/ids.js';
import { isRecord } from '../../util/json.js';
import { decodeChatFinish, decodeChatUsage } from '../openai-chat/usage.js';

/** The first choice of a `text_completion` (router's IR carries one completion). */
export function firstChoice(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const choices = Array.isArray(body.choices) ? body.choices.filter(isRecord) : [];
  return choices.find((c) => (c.index ?? 0) === 0) ?? choices[0];
}

/** `text_completion` -> IR: the first choice's text, its finish reason and the usage totals. */
export function decodeCompletionResponse(body: unknown): IrResponse {
  if (!isRecord(body) || !Array.isArray(body.choices)) throw new CodecError(502, 'The upstream reply is not a text_completion.');
  const choice = firstChoice(body);
  const text = typeof choice?.text === 'string' ? choice.text : '';
  const usage = decodeChatUsage(body.usage);
  return {
    id: typeof body.id === 'string' ? body.id : randomId('cmpl-'),
    model: typeof body.model === 'string' ? body.model : '',
    ...(typeof body.created === 'number' ? { created: body.created } : {}),
    parts: text ? [{ type: 'text', text }] : [],
    finishReason: decodeChatFinish(choice?.finish_reason),
    ...(usage ? { usage } : {}),
  };
}
