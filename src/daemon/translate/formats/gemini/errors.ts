import type { IrError, SseMessage } from '../../ir.js';
import { statusName } from './usage.js';

/** An error as Google's APIs write one: `{error: {code: <HTTP status>, message, status: "INVALID_ARGUMENT"...}}`. */
export function encodeGeminiError(error: IrError): Record<string, unknown> {
  return { error: { code: error.status, message: error.message, status: statusName(error.status) } };
}

/** The error as Gemini streams one: a `data:` event holding the error body. */
export function encodeGeminiStreamError(error: IrError): SseMessage[] {
  return [{ data: JSON.stringify(encodeGeminiError(error)) }];
}
