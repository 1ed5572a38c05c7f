/**
 * Token budgets per key (API key) and scope (`global`, `model:<id>`, `provider:<id>`) over a UTC day or
 * month. Besides allow/refuse answers it detects threshold crossings (by default 80% and 100%) and
 * reports each threshold at most once per key, scope and period, which is what `quota.exceeded`
 * webhooks need. Memory is bounded: the least recently used counters are evicted.
 */
import { type Clock, nextUtcMidnight, nextUtcMonthStart, secondsUntil, systemClock, utcDayIndex, utcMonthIndex } from '../routing/clock.js';
import { LruMap } from '../routing/lru.js';
import type { LimitResult } from './rate-limit.js';

/** What a budget applies to. */
export type BudgetScope = 'global' | `model:${string}` | `provider:${string}`;

/** Budget period; both reset at UTC boundaries. */
export type BudgetPeriod = 'day' | 'month';

/** A budget as configured by the caller; passed on every call so config changes apply at once. */
export interface TokenBudget {
  limit: number;
  /** Default `day`. */
  period?: BudgetPeriod;
}

/** Reported when usage reaches a threshold for the first time in a period. */
export interface ThresholdEvent {
  key: string;
  scope: BudgetScope;
  /** The fraction of the limit reached, e.g. 0.8 or 1. */
  threshold: number;
  used: number;
  limit: number;
  period: BudgetPeriod;
  /** Epoch ms when the period (and the counter) resets. */
  resetsAt: number;
}

/** Whether a string is a valid scope (for config validation). */
export function isBudgetScope(value: unknown): value is BudgetScope {
  return typeof value === 'string' && (value === 'global' || /^(?:model|provider):.+/.test(value));
}

/** The scopes a request to `model` on `provider` counts against, broadest first. */
export function scopesFor(model: string, provider: string): BudgetScope[] {
  return ['global', `provider:${provider}`, `model:${model}`];
}

interface Counter {
  period: BudgetPeriod;
  periodId: number;
  used: number;
  /** Bit i set: thresholds[i] already reported this period. */
  fired: number;
}

/** Token counters with threshold-crossing detection. All operations are O(thresholds). */
export class TokenBudgets {
  private readonly counters: LruMap<string, Counter>;
  private readonly thresholds: readonly number[];
  private readonly listeners = new Set<(event: ThresholdEvent) => void>();
  private readonly now: Clock;

  constructor(options: { now?: Clock; thresholds?: readonly number[]; maxEntries?: number } = {}) {
    this.now = options.now ?? systemClock;
    this.thresholds = [...(options.thresholds ?? [0.8, 1])].sort((a, b) => a - b);
    if (this.thresholds.length > 31 || this.thresholds.some((t) => !(t > 0))) {
      throw new RangeError('thresholds must be up to 31 positive fractions');
    }
    this.counters = new LruMap(options.maxEntries ?? 100_000);
  }

  /** Subscribes to threshold crossings; returns an unsubscribe function. */
  onThreshold(listener: (event: ThresholdEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Whether another request may start: allowed while usage is below the limit. */
  check(key: string, scope: BudgetScope, budget: TokenBudget): LimitResult {
    return this.result(this.counterOf(key, scope, budget), budget);
  }

  /**
   * Adds tokens actually spent (they are counted even past the limit: they were used) and reports any
   * threshold reached for the first time this period. Returns the state for the next request.
   */
  consume(key: string, scope: BudgetScope, tokens: number, budget: TokenBudget): LimitResult {
    const counter = this.counterOf(key, scope, budget);
    if (Number.isFinite(tokens) && tokens > 0) counter.used += tokens;
    this.fireCrossings(key, scope, counter, budget);
    return this.result(counter, budget);
  }

  /** Tokens used in the current period. */
  used(key: string, scope: BudgetScope, budget: TokenBudget): number {
    return this.counterOf(key, scope, budget).used;
  }

  /** Clears every counter (e.g. an operator reset), which also re-arms the thresholds. */
  reset(): void {
    this.counters.clear();
  }

  private counterOf(key: string, scope: BudgetScope, budget: TokenBudget): Counter {
    const period = budget.period ?? 'day';
    const now = this.now();
    const periodId = period === 'day' ? utcDayIndex(now) : utcMonthIndex(now);
    const id = `${key}\u0000${scope}`;
    let counter = this.counters.get(id);
    if (!counter) {
      counter = { period, periodId, used: 0, fired: 0 };
      this.counters.set(id, counter);
    } else if (counter.period !== period || counter.periodId !== periodId) {
      // A new period (or a changed period kind) starts from zero with every threshold re-armed.
      Object.assign(counter, { period, periodId, used: 0, fired: 0 });
    }
    return counter;
  }

  private fireCrossings(key: string, scope: BudgetScope, counter: Counter, budget: TokenBudget): void {
    // Comparing against the current limit (not "before < t <= after") also catches a limit lowered
    // below existing usage, still at most once per threshold per period.
    for (let i = 0; i < this.thresholds.length; i++) {
      const bit = 1 << i;
      const threshold = this.thresholds[i]!;
      if (counter.fired & bit || counter.used < threshold * budget.limit) continue;
      counter.fired |= bit;
      const event: ThresholdEvent = {
        key,
        scope,
        threshold,
        used: counter.used,
        limit: budget.limit,
        period: counter.period,
        resetsAt: this.periodEnd(counter.period),
      };
      for (const listener of this.listeners) {
        try {
          listener(event);
        } catch {
          // A failing webhook sender must not break accounting.
        }
      }
    }
  }

  private result(counter: Counter, budget: TokenBudget): LimitResult {
    const allowed = counter.used < budget.limit;
    const now = this.now();
    return {
      allowed,
      retryAfterSeconds: allowed ? 0 : secondsUntil(this.periodEnd(counter.period), now),
      remaining: Math.max(0, budget.limit - counter.used),
      limit: budget.limit,
    };
  }

  private periodEnd(period: BudgetPeriod): number {
    const now = this.now();
    return period === 'day' ? nextUtcMidnight(now) : nextUtcMonthStart(now);
  }
}
