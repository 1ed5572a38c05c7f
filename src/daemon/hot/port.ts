/**
 * The hot-state port (issue 29 item 3, CONTRACT "Wave three > Cluster mode"): state every request may read
 * or change and that several daemons of one cluster must share. Two adapters implement it and run the same
 * port tests (test/hot/port.test.ts):
 * - `local` (hot/local.ts): in-process maps, the default. On one machine the request path does not go
 *   through this port at all for the limits it had before (QuotaService keeps its own in-memory counters);
 *   the local adapter holds what is new (USD budgets) and answers the port for everything else.
 * - `redis` (hot/redis.ts): a Redis 7 / Valkey server; check-and-increment is one Lua script, so a request
 *   costs at most one round trip, and cross-node events use pub/sub.
 *
 * Counter keys name a window: a sliding window of `windowMs` (relay per-minute limits) or a UTC `day` /
 * `month` (daily request limits, token limits, USD budgets in nano-dollars). Amounts are integers.
 */

/** How a counter's window is measured. */
export type HotWindow = { kind: 'sliding'; windowMs: number } | { kind: 'period'; period: 'day' | 'month' };

/**
 * One counter of an atomic check-and-add: it admits when `used + max(add, 1) <= limit` (so `add: 0` asks
 * "is anything left"); a negative `limit` skips the check (an unconditional add in the same round trip).
 * For a sliding window `used` is the two-window estimate (see quotas/rate-limit.ts).
 */
export interface CounterOp {
  key: string;
  window: HotWindow;
  limit: number;
  add: number;
}

/** Outcome of {@link HotState.counters}: all ops added, or none (the first refusing op is named). */
export interface CounterOutcome {
  allowed: boolean;
  /** Index of the op that refused; -1 when allowed. */
  refused: number;
  /** Each op's usage before this call's add. */
  before: number[];
  /** For the refusing op: ms until it would admit again (0 when allowed). */
  retryAfterMs: number;
}

/** What `health()` reports (GET /api/cluster, /metrics, `router status`). */
export interface HotHealth {
  kind: 'local' | 'redis';
  /** True for the Redis adapter (cluster-wide state), false for in-process state. */
  configured: boolean;
  healthy: boolean;
  /** Last measured round trip (PING), ms; null when unknown or local. */
  latencyMs: number | null;
  /** Daemons seen alive recently (heartbeats); 1 for the local adapter. */
  liveNodes: number;
  /** The server URL with its password masked; null for local. */
  url: string | null;
  /** When the current health state began (ISO). */
  since: string;
}

/** Bounds of a bounded store ({@link HotState.lruSet}): entries expire `ttlMs` after they were set. */
export interface LruBounds {
  ttlMs: number;
  maxEntries: number;
  /** Sum of the values' byte lengths. */
  maxBytes: number;
}

/** A cross-node message; `from` is the sending node (handlers never receive their own node's messages). */
export interface HotMessage {
  from: string;
  [field: string]: unknown;
}

export interface HotState {
  readonly kind: 'local' | 'redis';
  /** True when the state is shared with other daemons (the Redis adapter). */
  readonly shared: boolean;
  readonly nodeId: string;
  /** Atomic check-and-add over several counters: one round trip. */
  counters(ops: readonly CounterOp[]): Promise<CounterOutcome>;
  /** Adds `amount` (may be negative) to a counter without a check; resolves to the new value. */
  add(key: string, window: HotWindow, amount: number): Promise<number>;
  /** Current values of counters (a sliding window's estimate). */
  read(items: ReadonlyArray<{ key: string; window: HotWindow }>): Promise<number[]>;
  /** Sets `key` only when absent, for `ttlMs`; true when this call set it (a once-only flag). */
  setOnce(key: string, ttlMs: number): Promise<boolean>;
  /** Takes a lock for `ttlMs`; resolves to its token (needed to release it), or null when someone holds it. */
  lock(name: string, ttlMs: number): Promise<string | null>;
  /** Releases a lock only if `token` still holds it (an expired lock taken by another is left alone). */
  unlock(name: string, token: string): Promise<boolean>;
  /** Whether a lock is held now. */
  locked(name: string): Promise<boolean>;
  /** A value with a time to live. */
  get(key: string): Promise<string | null>;
  set(key: string, value: string, ttlMs: number): Promise<void>;
  del(key: string): Promise<void>;
  /** Every field of a hash whose entries expire on their own (cooldowns, open circuits). */
  hashAll(key: string): Promise<Record<string, string>>;
  hashSet(key: string, field: string, value: string, ttlMs: number): Promise<void>;
  hashDel(key: string, field: string): Promise<void>;
  /**
   * A bounded store of values in least-recently-used order (the shared response cache), named `space`.
   * `lruGet` returns a live value and marks it used, in one round trip; `lruSet` stores one (its byte length
   * counted against `maxBytes`), drops expired entries and evicts the least recently used ones until both
   * bounds hold, and resolves to how many it evicted.
   */
  lruGet(space: string, key: string): Promise<string | null>;
  lruSet(space: string, key: string, value: string, bounds: LruBounds): Promise<number>;
  /** Drops every entry of the space; resolves to how many there were. */
  lruClear(space: string): Promise<number>;
  /** Live entries and their bytes. */
  lruSize(space: string): Promise<{ entries: number; bytes: number }>;
  /** Sends a message to every other node; fire and forget. */
  publish(channel: string, message: Record<string, unknown>): void;
  /** Receives other nodes' messages on `channel`; returns the unsubscribe function. */
  subscribe(channel: string, handler: (message: HotMessage) => void): () => void;
  /** Current health (no I/O). */
  health(): HotHealth;
  /** Called with the new health whenever `healthy` changes. */
  onHealth(listener: (health: HotHealth) => void): void;
  close(): Promise<void>;
}

/** `YYYY-MM-DD` or `YYYY-MM` (UTC) of `now`: the name of a period window. */
export function periodStamp(period: 'day' | 'month', now: number): string {
  return new Date(now).toISOString().slice(0, period === 'day' ? 10 : 7);
}

/** Ms from `now` to the end of its UTC day or month. */
export function periodLeftMs(period: 'day' | 'month', now: number): number {
  const d = new Date(now);
  const end = period === 'day' ? Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() + 1) : Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1);
  return end - now;
}

/**
 * Ms until a sliding window (two fixed windows: `prev` weighs by the unelapsed part of the current one)
 * leaves room for `need` more, `elapsed` ms into the current window of `windowMs`.
 */
export function slidingWaitMs(windowMs: number, elapsed: number, prev: number, curr: number, limit: number, need = 1): number {
  const W = windowMs;
  const toNext = W - elapsed;
  const room = limit - need;
  if (room < 0) return toNext;
  if (curr <= room && prev > 0) {
    const e = Math.ceil(W - ((room - curr) * W) / prev);
    return Math.max(1, e - elapsed);
  }
  if (curr === 0) return toNext;
  const g = Math.max(0, Math.ceil(W - (room * W) / curr));
  return toNext + g;
}
