import type { ErrorDetail, UpstreamErrorObject } from '../../codec.js';
import type { IrError, SseMessage } from '../../ir.js';

/** Anthropic's error types and the HTTP status each stands for (its API errors page). */
export const ANTHROPIC_ERROR_STATUS: Readonly<Record<string, number>> = {
  invalid_request_error: 400,
  authentication_error: 401,
  permission_error: 403,
  not_found_error: 404,
  request_too_large: 413,
  rate_limit_error: 429,
  api_error: 500,
  overloaded_error: 529,
};

const ERROR_TYPES = new Set(Object.keys(ANTHROPIC_ERROR_STATUS));

/** Anthropic's error `type`: the error's own when it is one of Anthropic's, else one derived from the status. */
export function anthropicErrorType(error: IrError): string {
  if (error.errorType && ERROR_TYPES.has(error.errorType)) return error.errorType;
  if (error.status === 429) return 'rate_limit_error';
  if (error.status === 529 || error.status === 503) return 'overloaded_error';
  if (error.status >= 500) return 'api_error';
  return 'invalid_request_error';
}

/**
 * An error as Anthropic writes one: `{type: "error", error: {type, message}}`; router's detail (its `code`,
 * `param`...) joins the error object, which the Anthropic SDKs keep as the error's body.
 */
export function encodeAnthropicError(error: IrError, detail: ErrorDetail = {}): Record<string, unknown> {
  return { type: 'error', error: { type: anthropicErrorType(error), message: error.message, ...detail } };
}

/** The error as Anthropic streams one: `event: error` with the same body (the SDKs raise it as an APIError). */
export function encodeAnthropicStreamError(error: IrError): SseMessage[] {
  return [{ event: 'error', data: JSON.stringify(encodeAnthropicError(error)) }];
}

/** Anthropic's error shape `{type: 'error', error: {type, message}}`; its `type` is the most specific code. */
export function readAnthropicError(parsed: unknown): UpstreamErrorObject | undefined {
  if (typeof parsed !== 'object' || parsed === null || (parsed as { type?: unknown }).type !== 'error') return undefined;
  const error = (parsed as { error?: unknown }).error as { type?: unknown; message?: unknown } | undefined;
  if (typeof error !== 'object' || error === null || typeof error.type !== 'string' || typeof error.message !== 'string') return undefined;
  return { message: error.message, code: error.type, type: error.type };
}
