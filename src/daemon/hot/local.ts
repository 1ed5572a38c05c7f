/**
 * The local hot-state adapter: in-process maps, nothing shared, nothing written. Every operation is O(ops)
 * and synchronous underneath (the `*Sync` methods), so callers on one machine can use it on the request
 * path without a promise; the async port methods wrap them for code written against the port.
 */
import { randomUUID } from 'node:crypto';
import { type Clock, systemClock } from '../routing/clock.js';
import { LruMap } from '../routing/lru.js';
import { type CounterOp, type CounterOutcome, type HotHealth, type HotMessage, type HotState, type HotWindow, type LruBounds, periodStamp, slidingWaitMs, periodLeftMs } from './port.js';

interface Counter {
  /** Period stamp, or the start of the current sliding window. */
  mark: string | number;
  prev: number;
  curr: number;
}

interface Expiring {
  value: string;
  until: number;
}

/** One bounded store: a Map in least-recently-used order (oldest first) and the sum of its values' bytes. */
interface LruSpace {
  entries: Map<string, Expiring & { bytes: number }>;
  bytes: number;
}

export class LocalHotState implements HotState {
  readonly kind = 'local' as const;
  readonly shared = false;
  private readonly counterMap: LruMap<string, Counter>;
  private readonly values = new Map<string, Expiring>();
  private readonly hashes = new Map<string, Map<string, Expiring>>();
  private readonly channels = new Map<string, Set<(m: HotMessage) => void>>();
  private readonly spaces = new Map<string, LruSpace>();
  private readonly now: Clock;
  private readonly started = new Date().toISOString();

  constructor(
    readonly nodeId = 'local',
    options: { now?: Clock; maxCounters?: number } = {},
  ) {
    this.now = options.now ?? systemClock;
    this.counterMap = new LruMap(options.maxCounters ?? 100_000);
  }

  /** The synchronous check-and-add behind {@link counters}. */
  countersSync(ops: readonly CounterOp[]): CounterOutcome {
    const now = this.now();
    const before: number[] = [];
    for (let i = 0; i < ops.length; i++) {
      const op = ops[i]!;
      const c = this.counterOf(op.key, op.window, now);
      const used = this.estimate(c, op.window, now);
      before.push(used);
      if (op.limit >= 0 && used + Math.max(op.add, 1) > op.limit) {
        return { allowed: false, refused: i, before, retryAfterMs: this.waitMs(c, op, now) };
      }
    }
    for (const op of ops) if (op.add !== 0) this.counterOf(op.key, op.window, now).curr += op.add;
    return { allowed: true, refused: -1, before, retryAfterMs: 0 };
  }

  addSync(key: string, window: HotWindow, amount: number): number {
    const now = this.now();
    const c = this.counterOf(key, window, now);
    c.curr += amount;
    return this.estimate(c, window, now);
  }

  readSync(key: string, window: HotWindow): number {
    const now = this.now();
    const c = this.counterMap.peek(key);
    if (!c) return 0;
    return this.estimate(this.counterOf(key, window, now), window, now);
  }

  counters(ops: readonly CounterOp[]): Promise<CounterOutcome> {
    return Promise.resolve(this.countersSync(ops));
  }

  add(key: string, window: HotWindow, amount: number): Promise<number> {
    return Promise.resolve(this.addSync(key, window, amount));
  }

  read(items: ReadonlyArray<{ key: string; window: HotWindow }>): Promise<number[]> {
    return Promise.resolve(items.map((i) => this.readSync(i.key, i.window)));
  }

  async setOnce(key: string, ttlMs: number): Promise<boolean> {
    if (this.live(key) !== null) return false;
    this.values.set(key, { value: '1', until: this.now() + ttlMs });
    return true;
  }

  async lock(name: string, ttlMs: number): Promise<string | null> {
    const key = `lock:${name}`;
    if (this.live(key) !== null) return null;
    const token = randomUUID();
    this.values.set(key, { value: token, until: this.now() + ttlMs });
    return token;
  }

  async unlock(name: string, token: string): Promise<boolean> {
    const key = `lock:${name}`;
    if (this.live(key) !== token) return false;
    this.values.delete(key);
    return true;
  }

  async locked(name: string): Promise<boolean> {
    return this.live(`lock:${name}`) !== null;
  }

  async get(key: string): Promise<string | null> {
    return this.live(key);
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    this.values.set(key, { value, until: this.now() + ttlMs });
  }

  async del(key: string): Promise<void> {
    this.values.delete(key);
  }

  async hashAll(key: string): Promise<Record<string, string>> {
    const out: Record<string, string> = {};
    const h = this.hashes.get(key);
    if (!h) return out;
    const now = this.now();
    for (const [field, e] of h) {
      if (e.until > now) out[field] = e.value;
      else h.delete(field);
    }
    return out;
  }

  async hashSet(key: string, field: string, value: string, ttlMs: number): Promise<void> {
    let h = this.hashes.get(key);
    if (!h) this.hashes.set(key, (h = new Map()));
    h.set(field, { value, until: this.now() + ttlMs });
  }

  async hashDel(key: string, field: string): Promise<void> {
    this.hashes.get(key)?.delete(field);
  }

  async lruGet(space: string, key: string): Promise<string | null> {
    const s = this.spaces.get(space);
    const e = s?.entries.get(key);
    if (!s || !e) return null;
    if (e.until <= this.now()) {
      this.lruDrop(s, key);
      return null;
    }
    s.entries.delete(key);
    s.entries.set(key, e);
    return e.value;
  }

  async lruSet(space: string, key: string, value: string, bounds: LruBounds): Promise<number> {
    let s = this.spaces.get(space);
    if (!s) this.spaces.set(space, (s = { entries: new Map(), bytes: 0 }));
    this.lruDrop(s, key);
    const now = this.now();
    const bytes = Buffer.byteLength(value);
    s.entries.set(key, { value, until: now + bounds.ttlMs, bytes });
    s.bytes += bytes;
    for (const [k, e] of s.entries) if (e.until <= now) this.lruDrop(s, k);
    let evicted = 0;
    for (const k of s.entries.keys()) {
      if (s.entries.size <= bounds.maxEntries && s.bytes <= bounds.maxBytes) break;
      this.lruDrop(s, k);
      evicted++;
    }
    return evicted;
  }

  async lruClear(space: string): Promise<number> {
    const n = (await this.lruSize(space)).entries;
    this.spaces.delete(space);
    return n;
  }

  async lruSize(space: string): Promise<{ entries: number; bytes: number }> {
    const s = this.spaces.get(space);
    if (!s) return { entries: 0, bytes: 0 };
    const now = this.now();
    for (const [k, e] of s.entries) if (e.until <= now) this.lruDrop(s, k);
    return { entries: s.entries.size, bytes: s.bytes };
  }

  private lruDrop(s: LruSpace, key: string): void {
    const e = s.entries.get(key);
    if (!e) return;
    s.entries.delete(key);
    s.bytes -= e.bytes;
  }

  /** One process is one node: there is nobody else to tell. */
  publish(_channel: string, _message: Record<string, unknown>): void {}

  subscribe(channel: string, handler: (message: HotMessage) => void): () => void {
    let set = this.channels.get(channel);
    if (!set) this.channels.set(channel, (set = new Set()));
    set.add(handler);
    return () => set.delete(handler);
  }

  health(): HotHealth {
    return { kind: 'local', configured: false, healthy: true, latencyMs: null, liveNodes: 1, url: null, since: this.started };
  }

  onHealth(_listener: (health: HotHealth) => void): void {}

  async close(): Promise<void> {}

  private live(key: string): string | null {
    const e = this.values.get(key);
    if (!e) return null;
    if (e.until > this.now()) return e.value;
    this.values.delete(key);
    return null;
  }

  private counterOf(key: string, window: HotWindow, now: number): Counter {
    const mark = window.kind === 'period' ? periodStamp(window.period, now) : now - (now % window.windowMs);
    let c = this.counterMap.get(key);
    if (!c) {
      c = { mark, prev: 0, curr: 0 };
      this.counterMap.set(key, c);
    } else if (c.mark !== mark) {
      // Sliding: only the directly preceding window still weighs in. Period: a new period starts at 0.
      c.prev = window.kind === 'sliding' && (mark as number) - (c.mark as number) === window.windowMs ? c.curr : 0;
      c.curr = 0;
      c.mark = mark;
    }
    return c;
  }

  private estimate(c: Counter, window: HotWindow, now: number): number {
    if (window.kind === 'period') return c.curr;
    const elapsed = now - (c.mark as number);
    return (c.prev * (window.windowMs - elapsed)) / window.windowMs + c.curr;
  }

  private waitMs(c: Counter, op: CounterOp, now: number): number {
    if (op.window.kind === 'period') return periodLeftMs(op.window.period, now);
    return slidingWaitMs(op.window.windowMs, now - (c.mark as number), c.prev, c.curr, op.limit, Math.max(op.add, 1));
  }
}
