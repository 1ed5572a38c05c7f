import type { IrFinishReason, IrUsage } from '../../ir.js';
import { isRecord } from '../../util/json.js';

/** Wire `usageMetadata`. */
export interface GeminiUsage {
  promptTokenCount?: number;
  candidatesTokenCount?: number;
  totalTokenCount?: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
  toolUsePromptTokenCount?: number;
}

/**
 * `usageMetadata` as IR usage. `promptTokenCount` already includes cached content; tokens of tool-use
 * prompts (search results fed back) are input too. Output is candidates + thoughts, as IR counts reasoning
 * inside the completion.
 */
export function decodeUsage(raw: unknown): IrUsage | undefined {
  if (!isRecord(raw)) return undefined;
  const u = raw as GeminiUsage;
  const out: IrUsage = {
    inputTokens: (u.promptTokenCount ?? 0) + (u.toolUsePromptTokenCount ?? 0),
    outputTokens: (u.candidatesTokenCount ?? 0) + (u.thoughtsTokenCount ?? 0),
  };
  if (u.cachedContentTokenCount) out.cacheReadTokens = u.cachedContentTokenCount;
  if (u.thoughtsTokenCount) out.reasoningTokens = u.thoughtsTokenCount;
  // Per-modality parts of the prompt and candidates counts (inclusive), priced at their own rates.
  const input = modalityCounts(raw.promptTokensDetails);
  const output = modalityCounts(raw.candidatesTokensDetails);
  if (input.AUDIO) out.audioInputTokens = input.AUDIO;
  if (input.IMAGE) out.imageInputTokens = input.IMAGE;
  if (output.AUDIO) out.audioOutputTokens = output.AUDIO;
  if (output.IMAGE) out.imageOutputTokens = output.IMAGE;
  return out;
}

/** `[{modality, tokenCount}]` as counts by modality. */
function modalityCounts(details: unknown): Record<string, number> {
  const out: Record<string, number> = {};
  if (!Array.isArray(details)) return out;
  for (const d of details) {
    if (isRecord(d) && typeof d.modality === 'string' && typeof d.tokenCount === 'number' && d.tokenCount > 0) out[d.modality] = (out[d.modality] ?? 0) + d.tokenCount;
  }
  return out;
}

/** IR usage as `usageMetadata`: thoughts are split back out of the output count. Cache writes have no field. */
export function encodeUsage(usage: IrUsage): GeminiUsage {
  const thoughts = usage.reasoningTokens ?? 0;
  const out: GeminiUsage = {
    promptTokenCount: usage.inputTokens,
    candidatesTokenCount: Math.max(0, usage.outputTokens - thoughts),
    totalTokenCount: usage.inputTokens + usage.outputTokens,
  };
  if (thoughts) out.thoughtsTokenCount = thoughts;
  if (usage.cacheReadTokens) out.cachedContentTokenCount = usage.cacheReadTokens;
  return out;
}

const FILTERED = new Set(['SAFETY', 'RECITATION', 'BLOCKLIST', 'PROHIBITED_CONTENT', 'SPII', 'IMAGE_SAFETY', 'IMAGE_PROHIBITED_CONTENT', 'IMAGE_RECITATION', 'LANGUAGE']);

/**
 * A candidate's `finishReason` as IR. Gemini says STOP also when it called functions, so tool calls are
 * inferred from the parts; blocked content of any kind is `content_filter`; a malformed or unexpected
 * tool call is an error.
 */
export function decodeFinish(reason: unknown, hasToolCalls: boolean): IrFinishReason {
  if (reason === 'MAX_TOKENS') return 'length';
  if (typeof reason === 'string' && FILTERED.has(reason)) return 'content_filter';
  if (reason === 'MALFORMED_FUNCTION_CALL' || reason === 'UNEXPECTED_TOOL_CALL') return 'error';
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/** An IR finish reason as a Gemini `finishReason`. */
export function encodeFinish(reason: IrFinishReason): string {
  switch (reason) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    case 'error':
      return 'OTHER';
    default:
      return 'STOP';
  }
}

/** Gemini's `error.status` for an HTTP status, as its error bodies carry both. */
export function statusName(status: number): string {
  const names: Record<number, string> = {
    400: 'INVALID_ARGUMENT',
    401: 'UNAUTHENTICATED',
    403: 'PERMISSION_DENIED',
    404: 'NOT_FOUND',
    429: 'RESOURCE_EXHAUSTED',
    500: 'INTERNAL',
    501: 'UNIMPLEMENTED',
    502: 'UNAVAILABLE',
    503: 'UNAVAILABLE',
    504: 'DEADLINE_EXCEEDED',
    529: 'UNAVAILABLE',
  };
  return names[status] ?? (status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION');
}
