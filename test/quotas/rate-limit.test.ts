import { beforeEach, describe, expect, it } from 'vitest';
import { SlidingWindowLimiter } from '../../src/daemon/quotas/rate-limit.js';

// A window-aligned start (multiple of 60 s) so window boundaries are easy to reason about.
const T = Date.UTC(2025, 0, 15, 12, 0, 0);

describe('SlidingWindowLimiter', () => {
  let now: number;
  let limiter: SlidingWindowLimiter;

  beforeEach(() => {
    now = T;
    limiter = new SlidingWindowLimiter({ now: () => now, windowMs: 60_000 });
  });

  it('allows the Nth request and refuses the N+1th with the exact Retry-After', () => {
    const results = Array.from({ length: 5 }, () => limiter.hit('key', 5));
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, true, true]);
    expect(results.map((r) => r.remaining)).toEqual([4, 3, 2, 1, 0]);
    // Next window starts with prev = 5, which decays to 4 (room for one) 12 s into it: 60 + 12 = 72 s.
    expect(limiter.hit('key', 5)).toEqual({ allowed: false, retryAfterSeconds: 72, remaining: 0, limit: 5 });
  });

  it('the Retry-After is exact to the millisecond', () => {
    for (let i = 0; i < 5; i++) limiter.hit('key', 5);
    now = T + 71_999;
    expect(limiter.hit('key', 5)).toMatchObject({ allowed: false, retryAfterSeconds: 1 });
    now = T + 72_000;
    expect(limiter.hit('key', 5)).toMatchObject({ allowed: true });
    expect(limiter.hit('key', 5)).toMatchObject({ allowed: false });
  });

  it('computes the wait inside the current window when the previous one is decaying', () => {
    for (let i = 0; i < 4; i++) limiter.hit('key', 5);
    now = T + 60_000;
    expect(limiter.hit('key', 5).allowed).toBe(true); // 4 * 1.0 + 0 leaves room for one
    expect(limiter.hit('key', 5)).toEqual({ allowed: false, retryAfterSeconds: 15, remaining: 0, limit: 5 });
    now = T + 74_999;
    expect(limiter.hit('key', 5).allowed).toBe(false);
    now = T + 75_000;
    expect(limiter.hit('key', 5).allowed).toBe(true);
  });

  it('limit 60/min: the 61st request at once waits 61 s', () => {
    for (let i = 0; i < 60; i++) expect(limiter.hit('ip', 60).allowed).toBe(true);
    expect(limiter.hit('ip', 60).retryAfterSeconds).toBe(61);
  });

  it('refused requests are not counted', () => {
    for (let i = 0; i < 5; i++) limiter.hit('key', 5);
    for (let i = 0; i < 50; i++) limiter.hit('key', 5);
    now = T + 72_000;
    expect(limiter.hit('key', 5).allowed).toBe(true);
  });

  it('rolls over: a window two or more periods back is forgotten entirely', () => {
    for (let i = 0; i < 5; i++) limiter.hit('key', 5);
    now = T + 120_000;
    const results = Array.from({ length: 5 }, () => limiter.hit('key', 5).allowed);
    expect(results).toEqual([true, true, true, true, true]);
    expect(limiter.hit('key', 5).allowed).toBe(false);
  });

  it('smooths the boundary burst a fixed window would allow', () => {
    now = T + 59_000;
    for (let i = 0; i < 5; i++) limiter.hit('key', 5);
    now = T + 60_000; // a fixed window would allow 5 more here
    expect(limiter.hit('key', 5).allowed).toBe(false);
  });

  it('peek answers without counting', () => {
    expect(limiter.peek('key', 2)).toEqual({ allowed: true, retryAfterSeconds: 0, remaining: 2, limit: 2 });
    limiter.hit('key', 2);
    limiter.hit('key', 2);
    expect(limiter.peek('key', 2)).toMatchObject({ allowed: false, remaining: 0 });
  });

  it('keeps keys independent and accepts a different limit per key', () => {
    limiter.hit('a', 1);
    expect(limiter.hit('a', 1).allowed).toBe(false);
    expect(limiter.hit('b', 1).allowed).toBe(true);
    expect(limiter.hit('c', 100).remaining).toBe(99);
  });

  it('a limit below 1 refuses everything until the next window', () => {
    now = T + 45_000;
    expect(limiter.hit('key', 0)).toEqual({ allowed: false, retryAfterSeconds: 15, remaining: 0, limit: 0 });
  });

  it('bounds memory: the least recently seen key is evicted (and starts fresh)', () => {
    const small = new SlidingWindowLimiter({ now: () => now, maxKeys: 2 });
    small.hit('a', 1);
    small.hit('b', 1);
    small.hit('c', 1);
    expect(small.hit('a', 1).allowed).toBe(true);
    expect(() => new SlidingWindowLimiter({ windowMs: 0 })).toThrow(RangeError);
  });
});
