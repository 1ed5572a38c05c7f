import type { EncodeOptions } from '../../codec.js';
import type { IrRequest, IrResponse } from '../../ir.js';
import { idFactory, replyModel } from '../../util/ids.js';
import { modelParts } from './encode-contents.js';
import { encodeFinish, encodeUsage } from './usage.js';

/**
 * The model turn of a reply, built with the same rules as a request's model turn (thinking, signatures,
 * function calls with their ids) so a client can send it back verbatim.
 */
export function replyParts(response: IrResponse, request: IrRequest): Array<Record<string, unknown>> {
  return modelParts(response.parts, request, false);
}

/**
 * IR reply -> `GenerateContentResponse`, for a Gemini client. The `responseId` is router's own, like the
 * ids other client formats get; `modelVersion` is the model the upstream reported.
 */
export function encodeGeminiResponse(response: IrResponse, request: IrRequest, options?: EncodeOptions): Record<string, unknown> {
  const parts = replyParts(response, request);
  // A reply with no parts (a filtered one) has no content at all, as Gemini sends it.
  const content = parts.length ? { content: { role: 'model', parts } } : {};
  const body: Record<string, unknown> = { candidates: [{ ...content, finishReason: encodeFinish(response.finishReason), index: 0 }] };
  if (response.usage) body.usageMetadata = encodeUsage(response.usage);
  body.modelVersion = replyModel(response.model, request);
  body.responseId = idFactory(options)('');
  return body;
}
