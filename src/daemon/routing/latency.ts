/**
 * Per-key latency tracking. Routing reads an exponentially weighted moving average (cheap, reacts to
 * change, forgets old slowness); telemetry reads percentiles over a fixed ring of recent samples.
 * Recording is O(1) and memory per key is fixed.
 */
import { LruMap } from './lru.js';

/** Percentiles over the recent window, in ms. */
export interface LatencyStats {
  count: number;
  ewma: number;
  p50: number;
  p95: number;
  p99: number;
}

/** Tunables for {@link LatencyTracker}. */
export interface LatencyOptions {
  /** EWMA weight of a new sample, in (0, 1]. Default 0.2: roughly the last ten samples matter. */
  alpha?: number;
  /** Samples kept per key for percentiles. Default 128. */
  windowSize?: number;
  /** Keys kept; the least recently recorded is dropped beyond it. Default 10,000. */
  maxKeys?: number;
}

interface Series {
  ewma: number;
  ring: Float64Array;
  next: number;
  filled: number;
}

/** Latency tracker keyed by target, connection or provider id. */
export class LatencyTracker {
  private readonly series: LruMap<string, Series>;
  private readonly alpha: number;
  private readonly windowSize: number;

  constructor(options: LatencyOptions = {}) {
    this.alpha = options.alpha ?? 0.2;
    this.windowSize = options.windowSize ?? 128;
    if (!(this.alpha > 0 && this.alpha <= 1)) throw new RangeError('alpha must be in (0, 1]');
    if (!Number.isInteger(this.windowSize) || this.windowSize < 1) throw new RangeError('windowSize must be a positive integer');
    this.series = new LruMap(options.maxKeys ?? 10_000);
  }

  /** Adds a sample in ms; negative or non-finite samples are ignored. O(1). */
  record(key: string, ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    let s = this.series.get(key);
    if (!s) {
      // The first sample seeds the average; starting from 0 would make a new key look fast.
      s = { ewma: ms, ring: new Float64Array(this.windowSize), next: 0, filled: 0 };
      this.series.set(key, s);
    } else {
      s.ewma += this.alpha * (ms - s.ewma);
    }
    s.ring[s.next] = ms;
    s.next = (s.next + 1) % this.windowSize;
    if (s.filled < this.windowSize) s.filled++;
  }

  /** The moving average used for routing, or `undefined` when the key has no samples. O(1). */
  ewma(key: string): number | undefined {
    return this.series.peek(key)?.ewma;
  }

  /** Percentiles (nearest-rank) over the recent window; sorts a copy, so meant for telemetry only. */
  stats(key: string): LatencyStats | undefined {
    const s = this.series.peek(key);
    if (!s) return undefined;
    const sorted = s.ring.slice(0, s.filled).sort();
    return { count: s.filled, ewma: s.ewma, p50: rank(sorted, 0.5), p95: rank(sorted, 0.95), p99: rank(sorted, 0.99) };
  }

  /** Keys currently tracked. */
  keys(): string[] {
    return [...this.series.entries()].map(([key]) => key);
  }

  /** Drops one key's samples (e.g. a deleted connection). */
  forget(key: string): void {
    this.series.delete(key);
  }
}

/** Nearest-rank percentile of an ascending array: the smallest sample with at least p of samples <= it. */
function rank(sorted: Float64Array, p: number): number {
  const index = Math.max(0, Math.ceil(p * sorted.length) - 1);
  return sorted[index]!;
}
