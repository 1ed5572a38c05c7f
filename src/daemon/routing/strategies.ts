/**
 * Combo target ordering: for one request, the order in which a combo's targets are tried. The first
 * target is the primary, the rest are the failover sequence. Each call is O(n log n) in the number of
 * targets (a handful) and allocates one array of that size; `priority` allocates nothing.
 */

import { COMBO_STRATEGIES, DEFAULT_COMBO_STRATEGY, type ComboStrategy } from '../../shared/records.js';

export { COMBO_STRATEGIES, DEFAULT_COMBO_STRATEGY, type ComboStrategy };


/** Whether a value is a known strategy name (for config validation). */
export function isComboStrategy(value: unknown): value is ComboStrategy {
  return typeof value === 'string' && (COMBO_STRATEGIES as readonly string[]).includes(value);
}

/** One combo target. `weight` is only read by `weighted` (missing means 1, negative means 0). */
export interface ComboTarget {
  id: string;
  model: string;
  weight?: number;
}

/** Per-combo mutable state kept by the caller between requests (one per combo). */
export interface ComboState {
  /** Round-robin position; advanced by each `round-robin` ordering. */
  cursor: number;
}

/** Creates fresh per-combo state. */
export function createComboState(): ComboState {
  return { cursor: 0 };
}

/** Inputs the strategies read. A strategy whose input is missing falls back to declared order. */
export interface StrategyContext {
  /** Needed by `round-robin`. */
  state?: ComboState;
  /** Uniform [0, 1) source for `random` and `weighted`; defaults to `Math.random`. */
  random?: () => number;
  /** Requests sent to a target so far (`least-used`); the caller counts them. */
  usageCount?: (targetId: string) => number;
  /** Relative price of a model (`cost-optimized`); `undefined` means unknown and sorts last. */
  costOf?: (model: string) => number | undefined;
  /** Recent latency of a target in ms (`latency-optimized`); `undefined` means not measured yet. */
  latencyOf?: (targetId: string) => number | undefined;
}

/**
 * Orders targets for one request. Ties always keep declared order. Unknown strategies act as `priority`.
 * - `priority`: declared order.
 * - `weighted`: primary drawn with probability weight/sum; the rest by descending weight.
 * - `round-robin`: primary rotates per request; the rest follow it cyclically.
 * - `random`: uniform shuffle.
 * - `least-used`: ascending usage count.
 * - `cost-optimized`: ascending cost, unknown cost last.
 * - `latency-optimized`: ascending latency; an unmeasured target counts as the mean of the measured ones,
 *   so new targets get sampled without jumping ahead of proven fast ones.
 */
export function orderTargets<T extends ComboTarget>(
  strategy: ComboStrategy | string | undefined,
  targets: readonly T[],
  ctx: StrategyContext = {},
): readonly T[] {
  if (targets.length < 2) return targets;
  switch (strategy) {
    case 'weighted':
      return weighted(targets, ctx.random ?? Math.random);
    case 'round-robin':
      return ctx.state ? roundRobin(targets, ctx.state) : targets;
    case 'random':
      return shuffle(targets, ctx.random ?? Math.random);
    case 'least-used': {
      const usage = ctx.usageCount;
      return usage ? sortByKey(targets, (t) => usage(t.id)) : targets;
    }
    case 'cost-optimized': {
      const cost = ctx.costOf;
      return cost ? sortByKey(targets, (t) => cost(t.model) ?? Infinity) : targets;
    }
    case 'latency-optimized':
      return ctx.latencyOf ? byLatency(targets, ctx.latencyOf) : targets;
    default:
      return targets;
  }
}

function weightOf(target: ComboTarget): number {
  const w = target.weight ?? 1;
  return Number.isFinite(w) && w > 0 ? w : 0;
}

function weighted<T extends ComboTarget>(targets: readonly T[], random: () => number): readonly T[] {
  let sum = 0;
  for (const t of targets) sum += weightOf(t);
  if (sum <= 0) return targets;
  let r = random() * sum;
  let primary = -1;
  for (let i = 0; i < targets.length; i++) {
    const w = weightOf(targets[i]!);
    if (w === 0) continue;
    primary = i; // Remembering the last positive weight covers float rounding leaving r >= 0 at the end.
    if (r < w) break;
    r -= w;
  }
  const rest = sortByKey(
    targets.filter((_, i) => i !== primary),
    (t) => -weightOf(t),
  );
  return [targets[primary]!, ...rest];
}

function roundRobin<T>(targets: readonly T[], state: ComboState): T[] {
  const n = targets.length;
  const start = ((state.cursor % n) + n) % n;
  // Keep the cursor small so it never loses integer precision, whatever the request count.
  state.cursor = (start + 1) % n;
  const out = new Array<T>(n);
  for (let i = 0; i < n; i++) out[i] = targets[(start + i) % n]!;
  return out;
}

function shuffle<T>(targets: readonly T[], random: () => number): T[] {
  const out = targets.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const tmp = out[i]!;
    out[i] = out[j]!;
    out[j] = tmp;
  }
  return out;
}

function byLatency<T extends ComboTarget>(targets: readonly T[], latencyOf: (id: string) => number | undefined): readonly T[] {
  const known = targets.map((t) => latencyOf(t.id));
  let sum = 0;
  let count = 0;
  for (const ms of known) {
    if (ms !== undefined && Number.isFinite(ms)) {
      sum += ms;
      count++;
    }
  }
  if (count === 0) return targets;
  const mean = sum / count;
  return sortByKey(targets, (_, i) => {
    const ms = known[i];
    return ms !== undefined && Number.isFinite(ms) ? ms : mean;
  });
}

/** Stable ascending sort by a numeric key; NaN keys sort last like Infinity. */
function sortByKey<T>(targets: readonly T[], keyOf: (t: T, index: number) => number): T[] {
  const keyed = targets.map((t, i) => {
    const k = keyOf(t, i);
    return { t, i, k: Number.isNaN(k) ? Infinity : k };
  });
  keyed.sort((a, b) => (a.k === b.k ? a.i - b.i : a.k < b.k ? -1 : 1));
  return keyed.map((x) => x.t);
}
