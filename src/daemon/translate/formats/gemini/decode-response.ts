import type { IrResponse } from '../../ir.js';
import { CodecError } from '../../errors.js';
import { isRecord } from '../../util/json.js';
import { callIdCounter, decodeModelParts } from './decode-parts.js';
import { decodeFinish, decodeUsage } from './usage.js';

/** The first candidate (router asks for one), or nothing when the prompt itself was blocked. */
export function firstCandidate(body: Record<string, unknown>): Record<string, unknown> | undefined {
  const candidates = Array.isArray(body.candidates) ? body.candidates : [];
  return candidates.find(isRecord);
}

/** True when `promptFeedback.blockReason` says the prompt was refused before generation. */
export function promptBlocked(body: Record<string, unknown>): boolean {
  return isRecord(body.promptFeedback) && typeof body.promptFeedback.blockReason === 'string';
}

/**
 * `GenerateContentResponse` -> IR. Function calls without ids get `call_<responseId>_<n>`. A blocked
 * prompt (no candidates, `promptFeedback.blockReason`) is an empty `content_filter` reply.
 */
export function decodeGeminiResponse(body: unknown): IrResponse {
  if (!isRecord(body)) throw new CodecError(502, 'The upstream returned a reply that is not a GenerateContentResponse.');
  const id = typeof body.responseId === 'string' ? body.responseId : '';
  const candidate = firstCandidate(body);
  const content = isRecord(candidate?.content) ? candidate.content : {};
  const parts = decodeModelParts(content.parts, callIdCounter(id));
  const hasCalls = parts.some((p) => p.type === 'tool_call');
  const response: IrResponse = {
    id,
    model: typeof body.modelVersion === 'string' ? body.modelVersion : '',
    parts,
    finishReason: !candidate && promptBlocked(body) ? 'content_filter' : decodeFinish(candidate?.finishReason, hasCalls),
  };
  const usage = decodeUsage(body.usageMetadata);
  if (usage) response.usage = usage;
  return response;
}
