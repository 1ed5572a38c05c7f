import { statusInfo } from '../../../../shared/error-status.js';
import type { StreamPosition } from '../../codec.js';
import type { IrError, SseMessage } from '../../ir.js';

/** The `code` a Responses error carries: the error's own, else its type, else router's code for the status. */
export function responsesErrorCode(error: IrError): string {
  return error.code ?? error.errorType ?? statusInfo(error.status).code;
}

/**
 * The events that end a failed Responses stream, numbered from `position.nextSequence`: an `error` event,
 * then `response.failed` with the error in the response object, the terminal event clients wait for (Codex
 * otherwise reports "stream closed before response.completed"). `response` is the stream's own response
 * object when the encoder has one; a passthrough stream gets a minimal one with the id and model it announced.
 */
export function encodeResponsesStreamError(error: IrError, position: StreamPosition = {}, response?: Record<string, unknown>): SseMessage[] {
  const code = responsesErrorCode(error);
  let seq = position.nextSequence ?? 0;
  const event = (type: string, payload: Record<string, unknown>): SseMessage => ({ event: type, data: JSON.stringify({ type, sequence_number: seq++, ...payload }) });
  const failed = response ?? {
    id: position.id || 'resp_failed',
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: 'failed',
    incomplete_details: null,
    model: position.model ?? '',
    output: [],
    usage: null,
  };
  return [
    event('error', { code, message: error.message, param: null }),
    event('response.failed', { response: { ...failed, status: 'failed', error: { code, message: error.message } } }),
  ];
}
