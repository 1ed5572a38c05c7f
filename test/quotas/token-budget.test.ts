import { beforeEach, describe, expect, it } from 'vitest';
import { isBudgetScope, scopesFor, type ThresholdEvent, TokenBudgets } from '../../src/daemon/quotas/token-budget.js';

const NOON = Date.UTC(2025, 0, 15, 12, 0, 0);
const MIDNIGHT = Date.UTC(2025, 0, 16);
const DAILY = { limit: 1000 };

describe('TokenBudgets', () => {
  let now: number;
  let budgets: TokenBudgets;
  let events: ThresholdEvent[];

  beforeEach(() => {
    now = NOON;
    budgets = new TokenBudgets({ now: () => now });
    events = [];
    budgets.onThreshold((e) => events.push(e));
  });

  it('allows while usage is below the limit and refuses until the period resets', () => {
    expect(budgets.check('key', 'global', DAILY)).toEqual({ allowed: true, retryAfterSeconds: 0, remaining: 1000, limit: 1000 });
    expect(budgets.consume('key', 'global', 999, DAILY)).toMatchObject({ allowed: true, remaining: 1 });
    const over = budgets.consume('key', 'global', 5, DAILY);
    expect(over).toEqual({ allowed: false, retryAfterSeconds: 12 * 3600, remaining: 0, limit: 1000 });
    expect(budgets.used('key', 'global', DAILY)).toBe(1004);
    expect(budgets.check('key', 'global', DAILY).allowed).toBe(false);
  });

  it('fires each threshold exactly once per crossing per period', () => {
    budgets.consume('key', 'model:gpt-4o', 700, DAILY);
    expect(events).toEqual([]);
    budgets.consume('key', 'model:gpt-4o', 100, DAILY);
    expect(events).toEqual([
      { key: 'key', scope: 'model:gpt-4o', threshold: 0.8, used: 800, limit: 1000, period: 'day', resetsAt: MIDNIGHT },
    ]);
    budgets.consume('key', 'model:gpt-4o', 50, DAILY);
    expect(events).toHaveLength(1);
    budgets.consume('key', 'model:gpt-4o', 200, DAILY);
    budgets.consume('key', 'model:gpt-4o', 200, DAILY);
    expect(events.map((e) => [e.threshold, e.used])).toEqual([
      [0.8, 800],
      [1, 1050],
    ]);
  });

  it('fires every threshold skipped over in one consume, lowest first', () => {
    budgets.consume('key', 'global', 5000, DAILY);
    expect(events.map((e) => e.threshold)).toEqual([0.8, 1]);
  });

  it('resets and re-arms thresholds at UTC midnight', () => {
    budgets.consume('key', 'global', 900, DAILY);
    now = MIDNIGHT - 1;
    expect(budgets.check('key', 'global', DAILY).remaining).toBe(100);
    now = MIDNIGHT;
    expect(budgets.check('key', 'global', DAILY).remaining).toBe(1000);
    budgets.consume('key', 'global', 850, DAILY);
    expect(events.map((e) => e.threshold)).toEqual([0.8, 0.8]);
    expect(events[1]!.resetsAt).toBe(MIDNIGHT + 86_400_000);
  });

  it('supports monthly budgets resetting on the first of the next UTC month', () => {
    const monthly = { limit: 100, period: 'month' as const };
    budgets.consume('key', 'provider:openai', 100, monthly);
    expect(budgets.check('key', 'provider:openai', monthly).retryAfterSeconds).toBe((Date.UTC(2025, 1, 1) - NOON) / 1000);
    now = Date.UTC(2025, 0, 31, 23, 59, 59);
    expect(budgets.check('key', 'provider:openai', monthly).allowed).toBe(false);
    now = Date.UTC(2025, 1, 1);
    expect(budgets.check('key', 'provider:openai', monthly).allowed).toBe(true);
  });

  it('keeps keys and scopes apart', () => {
    budgets.consume('a', 'global', 1000, DAILY);
    expect(budgets.check('b', 'global', DAILY).allowed).toBe(true);
    expect(budgets.check('a', 'model:x', DAILY).allowed).toBe(true);
  });

  it('a limit lowered below current usage reports the crossing once', () => {
    budgets.consume('key', 'global', 500, DAILY);
    budgets.consume('key', 'global', 0, { limit: 400 });
    budgets.consume('key', 'global', 10, { limit: 400 });
    expect(events.map((e) => e.threshold)).toEqual([0.8, 1]);
  });

  it('ignores negative and non-finite token counts', () => {
    budgets.consume('key', 'global', -50, DAILY);
    budgets.consume('key', 'global', Number.NaN, DAILY);
    expect(budgets.used('key', 'global', DAILY)).toBe(0);
  });

  it('a throwing listener does not stop accounting or other listeners', () => {
    const other = new TokenBudgets({ now: () => now, thresholds: [0.5] });
    const seen: number[] = [];
    other.onThreshold(() => {
      throw new Error('webhook down');
    });
    const off = other.onThreshold((e) => seen.push(e.threshold));
    other.consume('k', 'global', 60, { limit: 100 });
    off();
    other.reset();
    other.consume('k', 'global', 60, { limit: 100 });
    expect(seen).toEqual([0.5]);
    expect(other.used('k', 'global', { limit: 100 })).toBe(60);
  });

  it('validates thresholds and bounds memory', () => {
    expect(() => new TokenBudgets({ thresholds: [0] })).toThrow(RangeError);
    const small = new TokenBudgets({ now: () => now, maxEntries: 1 });
    small.consume('a', 'global', 10, DAILY);
    small.consume('b', 'global', 10, DAILY);
    expect(small.used('a', 'global', DAILY)).toBe(0);
  });
});

describe('scopes', () => {
  it('lists the scopes a request counts against and validates scope strings', () => {
    expect(scopesFor('gpt-4o', 'openai')).toEqual(['global', 'provider:openai', 'model:gpt-4o']);
    expect(isBudgetScope('global')).toBe(true);
    expect(isBudgetScope('model:gpt-4o')).toBe(true);
    expect(isBudgetScope('provider:')).toBe(false);
    expect(isBudgetScope('team:x')).toBe(false);
  });
});
