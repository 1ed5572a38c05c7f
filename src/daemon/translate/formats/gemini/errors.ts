import type { ErrorDetail, UpstreamErrorObject } from '../../codec.js';
import type { IrError, SseMessage } from '../../ir.js';
import { statusName } from './usage.js';

/**
 * An error as Google's APIs write one: `{error: {code: <HTTP status>, message, status: "INVALID_ARGUMENT"...}}`.
 * Router's detail goes where Google puts a machine-readable reason: a `google.rpc.ErrorInfo` in `details`
 * (`reason` its code, `domain` router, the other fields as `metadata` strings).
 */
export function encodeGeminiError(error: IrError, detail?: ErrorDetail): Record<string, unknown> {
  const body: Record<string, unknown> = { code: error.status, message: error.message, status: statusName(error.status) };
  if (detail) {
    const { code, ...rest } = detail;
    const metadata = Object.fromEntries(Object.entries(rest).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
    body.details = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: code ?? statusName(error.status), domain: 'router', ...(Object.keys(metadata).length ? { metadata } : {}) }];
  }
  return { error: body };
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
