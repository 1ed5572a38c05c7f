import type { CostUsage, RowCost } from './pricing.js';
import type { UsageRecord } from './record.js';

/** The cost of a reply served from the response cache: nothing was spent upstream. */
export const CACHE_HIT: RowCost = { costUsd: 0, costSource: 'computed', priceVersion: 'cache-hit' };
/** The cost of a failed attempt without tokens. */
export const NOTHING_BILLED: RowCost = { costUsd: 0, costSource: 'computed', priceVersion: null };

/** Sets a row's cost, its source and price version. */
export function setCost(rec: UsageRecord, cost: RowCost): void {
  rec.costUsd = cost.costUsd;
  rec.costSource = cost.costSource;
  rec.priceVersion = cost.priceVersion;
}

/** A row's token counts as pricing reads them (the totals and every part priced at its own rate). */
export function usageOf(r: UsageRecord): CostUsage {
  return {
    inputTokens: r.tokensIn,
    outputTokens: r.tokensOut,
    cacheReadTokens: r.cacheReadTokens,
    cacheWriteTokens: r.cacheWriteTokens,
    cacheWrite1hTokens: r.cacheWrite1hTokens,
    reasoningTokens: r.reasoningTokens,
    audioInputTokens: r.audioInputTokens,
    audioOutputTokens: r.audioOutputTokens,
    imageInputTokens: r.imageInputTokens,
    imageOutputTokens: r.imageOutputTokens,
  };
}
