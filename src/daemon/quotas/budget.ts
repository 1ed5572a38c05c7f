/**
 * USD budgets per API key (issue 29 item 3): estimate-then-reconcile. Before a call the key's budget
 * counter takes a reservation, an estimate meant to be an upper bound of the call's cost (see
 * {@link estimateNano}); a request whose reservation does not fit is refused with 429 `budget_exceeded`.
 * When the call's usage row is committed, the counter is reconciled to the real cost (the reservation is
 * given back and the cost added). Spending can therefore pass the budget only by what in-flight calls cost
 * beyond their reservations, on one node or across a cluster (the counter lives in the hot-state port).
 *
 * Amounts are integers in nano-dollars (1e-9 USD), so Redis INCRBY and the in-process counters stay exact.
 */
import type { UsdBudget } from '../keys/store.js';
import type { Price } from '../usage/pricing.js';
import { requestText } from '../usage/estimate.js';
import type { WireFormat } from '../translate/ir.js';
import type { HotWindow } from '../hot/port.js';

export const NANO_PER_USD = 1_000_000_000;

/** Output tokens reserved when neither the request nor the model's catalog entry says how many it may get. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 8_192;

/** The counter of a key's budget in the hot-state port. */
export function budgetCounter(keyId: string): string {
  return `budget:${keyId}`;
}

export function budgetWindow(b: UsdBudget): HotWindow {
  return { kind: 'period', period: b.period };
}

export function toNano(usd: number): number {
  return Math.round(usd * NANO_PER_USD);
}

/** The request body's own output cap, in any client format. */
export function requestedMaxOutput(raw: Record<string, unknown>): number | undefined {
  const direct = raw.max_completion_tokens ?? raw.max_tokens ?? raw.max_output_tokens;
  if (typeof direct === 'number' && direct > 0) return direct;
  const gen = raw.generationConfig;
  if (gen && typeof gen === 'object') {
    const n = (gen as Record<string, unknown>).maxOutputTokens;
    if (typeof n === 'number' && n > 0) return n;
  }
  return undefined;
}

/**
 * A reservation in nano-dollars meant to be at least the call's cost: input tokens counted as one per two
 * UTF-8 bytes of the prompt text (English averages about four characters a token; CJK text about one
 * character, three bytes), plus framing per message, at the highest input-side rate (cache
 * writes may cost more than input), plus the most output tokens the call may produce (the request's cap,
 * else the model's, else {@link DEFAULT_MAX_OUTPUT_TOKENS}) at the highest output-side rate. 0 for a model
 * with no known price (its calls are recorded unpriced and cannot be counted).
 */
export function estimateNano(
  price: Price | undefined,
  call: { clientFormat: WireFormat; raw: Record<string, unknown>; model: string },
  modelMaxOutput: number | undefined,
): number {
  if (!price) return 0;
  const { text, messages } = requestText(call.clientFormat, call.raw, call.model);
  const inputTokens = Math.ceil(Buffer.byteLength(text, 'utf8') / 2) + 8 * messages + 16;
  const outputTokens = requestedMaxOutput(call.raw) ?? modelMaxOutput ?? DEFAULT_MAX_OUTPUT_TOKENS;
  const inRate = Math.max(price.input, price.cacheWrite ?? 0);
  const outRate = Math.max(price.output, price.reasoning ?? 0);
  return Math.ceil(((inputTokens * inRate + outputTokens * outRate) / 1_000_000) * NANO_PER_USD);
}

/** A reservation waiting for its call's usage rows. */
export interface Reservation {
  keyId: string;
  budget: UsdBudget;
  reserved: number;
  /** Cost of the call's failed attempts seen so far (nano-dollars). */
  spent: number;
  /** Date.now() when taken (stale ones are released by a sweep). */
  at: number;
  /** Taken on the node's fallback counters while Redis was down. */
  fallback: boolean;
}
