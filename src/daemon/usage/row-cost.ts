import type { IrUsage } from '../translate/ir.js';
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

/**
 * A row's token counts as pricing reads them, with the parts the row does not store (1-hour cache writes,
 * audio and image tokens) from the upstream's usage when it reported them.
 */
export function usageOf(r: UsageRecord, u?: Partial<IrUsage>): CostUsage {
  const out: CostUsage = {
    inputTokens: r.tokensIn,
    outputTokens: r.tokensOut,
    cacheReadTokens: r.cacheReadTokens,
    cacheWriteTokens: r.cacheWriteTokens,
    reasoningTokens: r.reasoningTokens,
  };
  if (u) {
    out.cacheWrite1hTokens = u.cacheWrite1hTokens;
    out.audioInputTokens = u.audioInputTokens;
    out.audioOutputTokens = u.audioOutputTokens;
    out.imageInputTokens = u.imageInputTokens;
    out.imageOutputTokens = u.imageOutputTokens;
  }
  return out;
}
