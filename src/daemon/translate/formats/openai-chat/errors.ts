import { statusInfo } from '../../../../shared/error-status.js';
import type { ErrorDetail } from '../../codec.js';
import type { IrError, SseMessage } from '../../ir.js';

/**
 * An error in OpenAI's shape, `{error: {message, type, code}}`: router's standard body, whose type and code
 * fall back to router's standard ones for the status. Chat Completions, legacy completions and Responses
 * share it for whole replies.
 */
export function encodeOpenAiError(error: IrError, detail: ErrorDetail = {}): Record<string, unknown> {
  const info = statusInfo(error.status);
  return { error: { message: error.message, type: error.errorType ?? info.type, code: error.code ?? info.code, ...detail } };
}

/** The error as OpenAI streams one: `data: {"error": {...}}`, which the OpenAI SDKs raise as an APIError. */
export function encodeOpenAiStreamError(error: IrError): SseMessage[] {
  return [{ data: JSON.stringify(encodeOpenAiError(error)) }];
}
