import type { IrFinishReason, IrUsage } from '../../ir.js';

/** Wire `usage` of a response object. */
export interface ResponsesUsage {
  input_tokens?: number;
  input_tokens_details?: { cached_tokens?: number } | null;
  output_tokens?: number;
  output_tokens_details?: { reasoning_tokens?: number } | null;
  total_tokens?: number;
}

/**
 * IR usage on the wire. The token semantics match IR (input includes cached reads, output includes
 * reasoning); cache writes have no Responses field and are left out.
 */
export function encodeUsage(usage: IrUsage): ResponsesUsage {
  return {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: usage.cacheReadTokens ?? 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };
}

/** Wire usage as IR usage; zero cache/reasoning counts are omitted (the usual IR shape). */
export function decodeUsage(usage: ResponsesUsage): IrUsage {
  const out: IrUsage = { inputTokens: usage.input_tokens ?? 0, outputTokens: usage.output_tokens ?? 0 };
  const cached = usage.input_tokens_details?.cached_tokens;
  const reasoning = usage.output_tokens_details?.reasoning_tokens;
  if (cached) out.cacheReadTokens = cached;
  if (reasoning) out.reasoningTokens = reasoning;
  return out;
}

/** Status and `incomplete_details` for an IR finish reason. */
export function statusFor(finish: IrFinishReason): { status: string; incomplete_details: { reason: string } | null } {
  if (finish === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finish === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  if (finish === 'error') return { status: 'failed', incomplete_details: null };
  return { status: 'completed', incomplete_details: null };
}

/** IR finish reason for a response status; Responses has no finish reason, tool calls are inferred. */
export function finishFor(status: unknown, reason: unknown, hasToolCalls: boolean): IrFinishReason {
  if (status === 'incomplete') return reason === 'content_filter' ? 'content_filter' : 'length';
  if (status === 'failed' || status === 'cancelled') return 'error';
  return hasToolCalls ? 'tool_calls' : 'stop';
}

const ERROR_STATUS: Record<string, number> = {
  rate_limit_exceeded: 429,
  insufficient_quota: 429,
  invalid_prompt: 400,
  context_length_exceeded: 400,
  invalid_request_error: 400,
  server_error: 500,
  vector_store_timeout: 504,
};

/** HTTP-like status for an error code found in a stream (`error` event, `response.failed`). */
export function statusForErrorCode(code: unknown): number {
  return (typeof code === 'string' && ERROR_STATUS[code]) || 502;
}
