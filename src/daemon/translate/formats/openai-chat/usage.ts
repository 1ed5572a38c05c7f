import type { IrFinishReason, IrUsage } from '../../ir.js';
import { isRecord } from '../../util/json.js';

/** Usage as Chat Completions reports it. */
export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number };
  completion_tokens_details: { reasoning_tokens: number };
}

/**
 * IR usage -> Chat Completions usage. The IR already uses OpenAI's semantics (prompt includes cached
 * tokens). Both detail objects are always present, as in OpenAI's replies, with 0 for counts the upstream
 * did not report; cache writes have no field here and are dropped.
 */
export function encodeChatUsage(usage: IrUsage): ChatUsage {
  return {
    prompt_tokens: usage.inputTokens,
    completion_tokens: usage.outputTokens,
    total_tokens: usage.inputTokens + usage.outputTokens,
    prompt_tokens_details: { cached_tokens: usage.cacheReadTokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoningTokens ?? 0 },
  };
}

function count(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

/** Chat Completions usage -> IR usage; `undefined` when the object carries no counts. */
export function decodeChatUsage(raw: unknown): IrUsage | undefined {
  if (!isRecord(raw)) return undefined;
  const input = count(raw.prompt_tokens);
  const output = count(raw.completion_tokens);
  if (input === undefined && output === undefined) return undefined;
  const usage: IrUsage = { inputTokens: input ?? 0, outputTokens: output ?? 0 };
  const cached = isRecord(raw.prompt_tokens_details) ? count(raw.prompt_tokens_details.cached_tokens) : undefined;
  const reasoning = isRecord(raw.completion_tokens_details) ? count(raw.completion_tokens_details.reasoning_tokens) : undefined;
  if (cached !== undefined) usage.cacheReadTokens = cached;
  if (reasoning !== undefined) usage.reasoningTokens = reasoning;
  // Audio and image tokens are parts of prompt_tokens / completion_tokens (inclusive), priced at their own rates.
  const prompt = isRecord(raw.prompt_tokens_details) ? raw.prompt_tokens_details : {};
  const completion = isRecord(raw.completion_tokens_details) ? raw.completion_tokens_details : {};
  const parts: Array<[unknown, 'audioInputTokens' | 'imageInputTokens' | 'audioOutputTokens']> = [
    [prompt.audio_tokens, 'audioInputTokens'],
    [prompt.image_tokens, 'imageInputTokens'],
    [completion.audio_tokens, 'audioOutputTokens'],
  ];
  for (const [v, k] of parts) {
    const n = count(v);
    if (n) usage[k] = n;
  }
  // OpenRouter states what it charged for the reply (USD; docs openrouter.ai/docs/use-cases/usage-accounting).
  const cost = count(raw.cost);
  if (cost !== undefined && cost >= 0) usage.costUsd = cost;
  return usage;
}

/** IR finish reason -> Chat Completions `finish_reason`. Reasons it has no word for end as `stop`. */
export function encodeChatFinish(reason: IrFinishReason): 'stop' | 'length' | 'tool_calls' | 'content_filter' {
  switch (reason) {
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return reason;
    default:
      return 'stop';
  }
}

/** Chat Completions `finish_reason` -> IR (the deprecated `function_call` counts as `tool_calls`). */
export function decodeChatFinish(reason: unknown): IrFinishReason {
  switch (reason) {
    case 'length':
    case 'tool_calls':
    case 'content_filter':
      return reason;
    case 'function_call':
      return 'tool_calls';
    default:
      return 'stop';
  }
}
