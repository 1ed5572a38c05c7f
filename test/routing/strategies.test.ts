import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../src/daemon/routing/prng.js';
import {
  type ComboTarget,
  COMBO_STRATEGIES,
  createComboState,
  isComboStrategy,
  orderTargets,
  type StrategyContext,
} from '../../src/daemon/routing/strategies.js';

const A: ComboTarget = { id: 'a', model: 'm-a', weight: 1 };
const B: ComboTarget = { id: 'b', model: 'm-b', weight: 3 };
const C: ComboTarget = { id: 'c', model: 'm-c', weight: 6 };
const TARGETS = [A, B, C] as const;
const ids = (list: readonly ComboTarget[]) => list.map((t) => t.id).join('');

/** Counts how often each target is the primary over `draws` orderings. */
function primaryShares(strategy: string, ctx: StrategyContext, draws = 10_000): Record<string, number> {
  const counts: Record<string, number> = {};
  for (let i = 0; i < draws; i++) {
    const id = orderTargets(strategy, TARGETS, ctx)[0]!.id;
    counts[id] = (counts[id] ?? 0) + 1;
  }
  return Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, v / draws]));
}

describe('strategy names', () => {
  it('lists every strategy of the spec and validates names', () => {
    expect(COMBO_STRATEGIES).toEqual(['priority', 'weighted', 'round-robin', 'random', 'least-used', 'cost-optimized', 'latency-optimized']);
    expect(isComboStrategy('weighted')).toBe(true);
    expect(isComboStrategy('fastest')).toBe(false);
  });
});

describe('orderTargets', () => {
  it('priority keeps declared order without copying', () => {
    expect(orderTargets('priority', TARGETS)).toBe(TARGETS);
    expect(orderTargets(undefined, TARGETS)).toBe(TARGETS);
    expect(orderTargets('unknown', TARGETS)).toBe(TARGETS);
  });

  it('returns short lists as they are', () => {
    expect(orderTargets('random', [A])).toEqual([A]);
    expect(orderTargets('weighted', [])).toEqual([]);
  });

  it('round-robin rotates the primary per request and fails over cyclically', () => {
    const state = createComboState();
    const orders = Array.from({ length: 4 }, () => ids(orderTargets('round-robin', TARGETS, { state })));
    expect(orders).toEqual(['abc', 'bca', 'cab', 'abc']);
  });

  it('round-robin keeps working when the target list shrinks', () => {
    const state = { cursor: 2 };
    expect(ids(orderTargets('round-robin', [A, B], { state }))).toBe('ab');
    expect(ids(orderTargets('round-robin', [A, B], { state }))).toBe('ba');
  });

  it('round-robin without state falls back to declared order', () => {
    expect(orderTargets('round-robin', TARGETS)).toBe(TARGETS);
  });

  it('weighted puts the rest in descending weight after the drawn primary', () => {
    // random() = 0 draws the first positive weight (a); then c (6), b (3).
    expect(ids(orderTargets('weighted', TARGETS, { random: () => 0 }))).toBe('acb');
    // 0.5 * 10 = 5 falls in c's range [4, 10).
    expect(ids(orderTargets('weighted', TARGETS, { random: () => 0.5 }))).toBe('cba');
    expect(ids(orderTargets('weighted', TARGETS, { random: () => 0.15 }))).toBe('bca');
    expect(ids(orderTargets('weighted', TARGETS, { random: () => 0.9999999999 }))).toBe('cba');
  });

  it('weighted treats missing weight as 1, skips zero and negative weights, and falls back when all are zero', () => {
    const list: ComboTarget[] = [
      { id: 'z', model: 'm', weight: 0 },
      { id: 'n', model: 'm', weight: -2 },
      { id: 'd', model: 'm' },
    ];
    expect(ids(orderTargets('weighted', list, { random: () => 0 }))).toBe('dzn');
    const zeros: ComboTarget[] = [
      { id: 'x', model: 'm', weight: 0 },
      { id: 'y', model: 'm', weight: 0 },
    ];
    expect(orderTargets('weighted', zeros, { random: () => 0.7 })).toBe(zeros);
  });

  it('least-used sorts by ascending usage with declared order on ties', () => {
    const usage: Record<string, number> = { a: 5, b: 2, c: 2 };
    expect(ids(orderTargets('least-used', TARGETS, { usageCount: (id) => usage[id]! }))).toBe('bca');
    expect(orderTargets('least-used', TARGETS)).toBe(TARGETS);
  });

  it('cost-optimized sorts by ascending cost with unknown costs last', () => {
    const cost: Record<string, number | undefined> = { 'm-a': undefined, 'm-b': 3, 'm-c': 0.5 };
    expect(ids(orderTargets('cost-optimized', TARGETS, { costOf: (m) => cost[m] }))).toBe('cba');
    expect(ids(orderTargets('cost-optimized', TARGETS, { costOf: () => undefined }))).toBe('abc');
  });

  it('latency-optimized sorts by ascending latency, placing unmeasured targets at the mean', () => {
    const latency: Record<string, number | undefined> = { a: 900, b: undefined, c: 100 };
    // Mean of measured = 500, so b (unknown) sits between c (100) and a (900).
    expect(ids(orderTargets('latency-optimized', TARGETS, { latencyOf: (id) => latency[id] }))).toBe('cba');
    expect(ids(orderTargets('latency-optimized', TARGETS, { latencyOf: () => undefined }))).toBe('abc');
    expect(ids(orderTargets('latency-optimized', TARGETS, { latencyOf: (id) => (id === 'c' ? 50 : undefined) }))).toBe('abc');
  });

  it('random returns a permutation', () => {
    const order = orderTargets('random', TARGETS, { random: seededRandom(7) });
    expect([...order].sort((x, y) => x.id.localeCompare(y.id))).toEqual([A, B, C]);
  });
});

describe('distributions over 10,000 draws (seeded)', () => {
  it('weighted picks the primary in proportion to weight', () => {
    const shares = primaryShares('weighted', { random: seededRandom(42) });
    expect(shares.a).toBeCloseTo(0.1, 1);
    expect(shares.b).toBeCloseTo(0.3, 1);
    expect(shares.c).toBeCloseTo(0.6, 1);
    expect(Math.abs(shares.c! - 0.6)).toBeLessThan(0.02);
  });

  it('random picks each primary uniformly and each full order about equally often', () => {
    const random = seededRandom(1234);
    const shares = primaryShares('random', { random });
    for (const id of ['a', 'b', 'c']) expect(Math.abs(shares[id]! - 1 / 3)).toBeLessThan(0.02);
    const perms: Record<string, number> = {};
    for (let i = 0; i < 10_000; i++) {
      const key = ids(orderTargets('random', TARGETS, { random }));
      perms[key] = (perms[key] ?? 0) + 1;
    }
    expect(Object.keys(perms)).toHaveLength(6);
    for (const count of Object.values(perms)) expect(Math.abs(count / 10_000 - 1 / 6)).toBeLessThan(0.02);
  });

  it('round-robin gives every target exactly an equal share', () => {
    const shares = primaryShares('round-robin', { state: createComboState() }, 9_999);
    expect(shares).toEqual({ a: 1 / 3, b: 1 / 3, c: 1 / 3 });
  });

  it('seededRandom is deterministic and in [0, 1)', () => {
    const r1 = seededRandom(99);
    const r2 = seededRandom(99);
    for (let i = 0; i < 1000; i++) {
      const x = r1();
      expect(x).toBe(r2());
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThan(1);
    }
  });
});
