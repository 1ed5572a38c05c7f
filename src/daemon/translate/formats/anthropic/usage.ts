import type { IrFinishReason, IrUsage } from '../../ir.js';
import { isRecord } from '../../util/json.js';

/** Usage as the Messages API reports it: `input_tokens` excludes cache reads and cache writes. */
export interface AnthropicUsage {
  input_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
  output_tokens: number;
  output_tokens_details?: { thinking_tokens: number };
}

/** IR usage (prompt includes cache) -> Anthropic usage (input excludes cache reads and writes). */
export function encodeAnthropicUsage(usage: Partial<IrUsage>): AnthropicUsage {
  const read = usage.cacheReadTokens ?? 0;
  const write = usage.cacheWriteTokens ?? 0;
  const out: AnthropicUsage = {
    input_tokens: Math.max(0, (usage.inputTokens ?? 0) - read - write),
    cache_creation_input_tokens: write,
    cache_read_input_tokens: read,
    output_tokens: usage.outputTokens ?? 0,
  };
  // Sent only when there was reasoning: the API omits the breakdown for replies without thinking.
  if (usage.reasoningTokens) out.output_tokens_details = { thinking_tokens: usage.reasoningTokens };
  return out;
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/**
 * Anthropic usage -> partial IR usage, with cache reads and writes added back into `inputTokens`. Only the
 * counts present are set: `message_delta` usage may carry nothing but `output_tokens`.
 */
export function decodeAnthropicUsage(raw: unknown): Partial<IrUsage> {
  if (!isRecord(raw)) return {};
  const input = count(raw.input_tokens);
  const read = count(raw.cache_read_input_tokens);
  const write = count(raw.cache_creation_input_tokens);
  const out: Partial<IrUsage> = {};
  if (input !== undefined) out.inputTokens = input + (read ?? 0) + (write ?? 0);
  if (read !== undefined) out.cacheReadTokens = read;
  if (write !== undefined) out.cacheWriteTokens = write;
  // cache_creation splits the writes by lifetime; the 1-hour ones bill at their own rate (2x input).
  const oneHour = isRecord(raw.cache_creation) ? count(raw.cache_creation.ephemeral_1h_input_tokens) : undefined;
  if (oneHour) out.cacheWrite1hTokens = oneHour;
  const output = count(raw.output_tokens);
  if (output !== undefined) out.outputTokens = output;
  const thinking = isRecord(raw.output_tokens_details) ? count(raw.output_tokens_details.thinking_tokens) : undefined;
  if (thinking !== undefined) out.reasoningTokens = thinking;
  return out;
}

/** A complete IR usage from partial counts (missing counts are 0). */
export function completeUsage(usage: Partial<IrUsage>): IrUsage {
  return { ...usage, inputTokens: usage.inputTokens ?? 0, outputTokens: usage.outputTokens ?? 0 };
}

export type AnthropicStopReason = 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'pause_turn' | 'refusal';

/** IR finish reason -> `stop_reason`. A content filter is Anthropic's `refusal`. */
export function encodeStopReason(reason: IrFinishReason): AnthropicStopReason {
  switch (reason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
      return 'tool_use';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'content_filter':
      return 'refusal';
    case 'pause':
      return 'pause_turn';
    default:
      return 'end_turn';
  }
}

/** `stop_reason` -> IR finish reason (`model_context_window_exceeded` is a length stop). */
export function decodeStopReason(reason: unknown): IrFinishReason {
  switch (reason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'stop_sequence':
      return 'stop_sequence';
    case 'refusal':
      return 'content_filter';
    case 'pause_turn':
      return 'pause';
    default:
      return 'stop';
  }
}
