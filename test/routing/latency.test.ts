import { describe, expect, it } from 'vitest';
import { LatencyTracker } from '../../src/daemon/routing/latency.js';
import { LruMap } from '../../src/daemon/routing/lru.js';

describe('LatencyTracker', () => {
  it('seeds the EWMA with the first sample, then moves by alpha', () => {
    const t = new LatencyTracker({ alpha: 0.5 });
    expect(t.ewma('k')).toBeUndefined();
    t.record('k', 100);
    expect(t.ewma('k')).toBe(100);
    t.record('k', 200);
    expect(t.ewma('k')).toBe(150);
    t.record('k', 50);
    expect(t.ewma('k')).toBe(100);
  });

  it('ignores negative and non-finite samples', () => {
    const t = new LatencyTracker();
    t.record('k', -1);
    t.record('k', Number.NaN);
    t.record('k', Number.POSITIVE_INFINITY);
    expect(t.ewma('k')).toBeUndefined();
    expect(t.stats('k')).toBeUndefined();
  });

  it('reports nearest-rank percentiles over the samples so far', () => {
    const t = new LatencyTracker({ windowSize: 200 });
    for (let ms = 1; ms <= 100; ms++) t.record('k', ms);
    expect(t.stats('k')).toMatchObject({ count: 100, p50: 50, p95: 95, p99: 99 });
    const one = new LatencyTracker();
    one.record('x', 42);
    expect(one.stats('x')).toEqual({ count: 1, ewma: 42, p50: 42, p95: 42, p99: 42 });
  });

  it('keeps only the most recent windowSize samples for percentiles', () => {
    const t = new LatencyTracker({ windowSize: 4 });
    for (const ms of [1000, 1000, 1000, 1000, 10, 20, 30, 40]) t.record('k', ms);
    expect(t.stats('k')).toMatchObject({ count: 4, p50: 20, p99: 40 });
  });

  it('bounds the number of keys, dropping the least recently recorded', () => {
    const t = new LatencyTracker({ maxKeys: 2 });
    t.record('a', 1);
    t.record('b', 1);
    t.record('a', 1);
    t.record('c', 1);
    expect(t.keys()).toEqual(['a', 'c']);
    t.forget('a');
    expect(t.ewma('a')).toBeUndefined();
  });

  it('validates options', () => {
    expect(() => new LatencyTracker({ alpha: 0 })).toThrow(RangeError);
    expect(() => new LatencyTracker({ alpha: 1.5 })).toThrow(RangeError);
    expect(() => new LatencyTracker({ windowSize: 0 })).toThrow(RangeError);
  });
});

describe('LruMap', () => {
  it('evicts the least recently used entry; get refreshes, peek does not', () => {
    const m = new LruMap<string, number>(2);
    m.set('a', 1);
    m.set('b', 2);
    m.get('a');
    m.set('c', 3);
    expect([...m.entries()].map(([k]) => k)).toEqual(['a', 'c']);
    m.peek('a');
    m.set('d', 4);
    expect([...m.entries()].map(([k]) => k)).toEqual(['c', 'd']);
    m.set('c', 30);
    expect(m.size).toBe(2);
    expect(m.peek('c')).toBe(30);
    expect(() => new LruMap(0)).toThrow(RangeError);
  });
});
