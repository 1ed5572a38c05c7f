import { statusInfo } from '../../http/errors.js';
import type { IrStreamEvent, SseMessage } from '../ir.js';

type ErrorEvent = Extract<IrStreamEvent, { type: 'error' }>;

/**
 * An IR error as OpenAI streams one (`data: {"error": {...}}`, which the OpenAI SDKs raise as an APIError).
 * Type and code fall back to router's standard ones for the status, as in its error bodies.
 */
export function openAiStreamError(event: ErrorEvent): SseMessage {
  const info = statusInfo(event.status);
  const error = { message: event.message, type: event.errorType ?? info.type, code: event.code ?? info.code };
  return { data: JSON.stringify({ error }) };
}
