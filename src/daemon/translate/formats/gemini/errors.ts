import type { UpstreamErrorObject } from '../../codec.js';
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

/**
 * Google's error shape `{error: {code: <HTTP status>, message, status}}`, also sent wrapped in an array;
 * `status` (INVALID_ARGUMENT...) is the most specific code.
 */
export function readGeminiError(parsed: unknown): UpstreamErrorObject | undefined {
  const body = Array.isArray(parsed) ? parsed[0] : parsed;
  const error = (body as { error?: unknown } | null)?.error as { code?: unknown; message?: unknown; status?: unknown } | undefined;
  if (typeof error !== 'object' || error === null || typeof error.code !== 'number' || typeof error.message !== 'string') return undefined;
  return { message: error.message, ...(typeof error.status === 'string' && error.status ? { code: error.status } : {}) };
}
