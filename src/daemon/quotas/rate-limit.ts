/**
 * Request limiter with fixed memory: requests per minute per key (API key or client IP). O(1) per request;
 * keeps at most `maxKeys` entries, evicting the least recently seen key; callers skip it entirely when no
 * limit is configured.
 */
import { type Clock, systemClock } from '../routing/clock.js';
import { LruMap } from '../routing/lru.js';

/** Outcome of a limiter check. `retryAfterSeconds` is 0 when allowed. */
export interface LimitResult {
  allowed: boolean;
  retryAfterSeconds: number;
  remaining: number;
  limit: number;
}

/** Options shared by the limiters. */
export interface LimiterOptions {
  now?: Clock;
  /** Keys tracked at once; the least recently seen is dropped beyond this. Default 100,000. */
  maxKeys?: number;
}

interface Windows {
  start: number;
  prev: number;
  curr: number;
}

/**
 * Sliding-window limiter built from two fixed windows: the estimate is
 * `prev * (unelapsed part of the current window) + curr`, which smooths the burst a plain fixed window
 * allows at its boundary while storing only two counters per key. Windows are aligned to the epoch.
 * Refused requests are not counted, so a client that backs off is not punished further.
 */
export class SlidingWindowLimiter {
  private readonly keys: LruMap<string, Windows>;
  private readonly windowMs: number;
  private readonly now: Clock;

  constructor(options: LimiterOptions & { windowMs?: number } = {}) {
    this.windowMs = options.windowMs ?? 60_000;
    if (!Number.isInteger(this.windowMs) || this.windowMs < 1) throw new RangeError('windowMs must be a positive integer');
    this.keys = new LruMap(options.maxKeys ?? 100_000);
    this.now = options.now ?? systemClock;
  }

  /** Counts one request for `key` if it fits within `limit` per window. A limit below 1 refuses all. */
  hit(key: string, limit: number): LimitResult {
    return this.evaluate(key, limit, true);
  }

  /** Same answer as {@link hit} without counting the request. */
  peek(key: string, limit: number): LimitResult {
    return this.evaluate(key, limit, false);
  }

  private evaluate(key: string, limit: number, count: boolean): LimitResult {
    const now = Math.floor(this.now());
    const w = this.windowsOf(key, now);
    const W = this.windowMs;
    const elapsed = now - w.start;
    // Everything is scaled by W so the comparison stays in exact integer arithmetic.
    const scaledEstimate = w.prev * (W - elapsed) + w.curr * W;
    const allowed = limit >= 1 && scaledEstimate + W <= limit * W;
    if (!allowed) {
      const waitMs = this.waitMs(w, elapsed, limit);
      return { allowed, retryAfterSeconds: Math.max(1, Math.ceil(waitMs / 1000)), remaining: 0, limit };
    }
    if (count) w.curr++;
    const used = scaledEstimate / W + (count ? 1 : 0);
    return { allowed, retryAfterSeconds: 0, remaining: Math.max(0, Math.floor(limit - used)), limit };
  }

  /** Milliseconds until the estimate leaves room for one more request. */
  private waitMs(w: Windows, elapsed: number, limit: number): number {
    const W = this.windowMs;
    const toNextWindow = W - elapsed;
    if (limit < 1) return toNextWindow;
    const room = limit - 1; // the estimate must drop to this
    if (w.curr <= room && w.prev > 0) {
      // Still in this window: prev * (W - e) <= (room - curr) * W.
      const e = Math.ceil(W - ((room - w.curr) * W) / w.prev);
      return Math.max(1, e - elapsed);
    }
    // Next window, where this window's count becomes `prev`: curr * (W - g) <= room * W.
    const g = Math.max(0, Math.ceil(W - (room * W) / w.curr));
    return toNextWindow + g;
  }

  private windowsOf(key: string, now: number): Windows {
    const start = now - (now % this.windowMs);
    let w = this.keys.get(key);
    if (!w) {
      w = { start, prev: 0, curr: 0 };
      this.keys.set(key, w);
    } else if (w.start !== start) {
      // Only the directly preceding window still weighs in; anything older is forgotten.
      w.prev = start - w.start === this.windowMs ? w.curr : 0;
      w.curr = 0;
      w.start = start;
    }
    return w;
  }
}
