import type { IrReasoning } from '../ir.js';

type Effort = NonNullable<IrReasoning['effort']>;

/**
 * Thinking budgets for OpenAI-style efforts, as LiteLLM maps them for Anthropic (low 1024, medium 2048,
 * high 4096), extended at both ends. Anthropic's minimum budget is 1024, hence minimal = low.
 */
const BUDGET: Record<Exclude<Effort, 'none'>, number> = {
  minimal: 1024,
  low: 1024,
  medium: 2048,
  high: 4096,
  xhigh: 8192,
};

/** The thinking budget for an effort; `undefined` for `none` (no thinking). */
export function effortToBudget(effort: Effort): number | undefined {
  return effort === 'none' ? undefined : BUDGET[effort];
}

/**
 * The effort closest to a thinking budget (inverse of `effortToBudget`, by ranges). Budgets above 2048 map
 * to `high`, never `xhigh`: most OpenAI-compatible models reject `xhigh`.
 */
export function budgetToEffort(budget: number): Effort {
  if (budget <= 1024) return 'low';
  if (budget <= 2048) return 'medium';
  return 'high';
}
