/**
 * The Redis hot-state adapter (Redis 7 / Valkey 8, through ioredis). Check-and-add over several counters
 * is one Lua script (atomic on the server, one round trip); locks are `SET NX PX` released by a
 * compare-and-delete script; cross-node events are pub/sub on a second connection.
 *
 * Failure handling: commands are never queued while disconnected (they fail at once and the caller falls
 * back to its per-node share) and time out after `commandTimeoutMs`. A heartbeat every second measures the
 * round trip, keeps this node in the `nodes` sorted set and counts the live nodes; it flips `healthy` both
 * ways, so recovery needs nothing from the operator.
 */
import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { maskConnectionUrl, maskUrlsIn } from '../../shared/mask-url.js';
import type { Logger } from '../logger.js';
import { type CounterOp, type CounterOutcome, type HotHealth, type HotMessage, type HotState, type HotWindow, periodLeftMs, periodStamp, slidingWaitMs } from './port.js';

/** Check every op, then add every op's amount, or add nothing; returns the refusing op (1-based, 0: none) and raw values. */
const COUNTERS_LUA = `
local n = #KEYS / 2
local raw = {}
local refused = 0
for i = 1, n do
  local b = (i - 1) * 5
  local limit = tonumber(ARGV[b + 1])
  local add = tonumber(ARGV[b + 2])
  local w = tonumber(ARGV[b + 3])
  local curr = redis.call('GET', KEYS[2 * i - 1]) or '0'
  local prev = '0'
  local used = tonumber(curr)
  if w > 0 then
    prev = redis.call('GET', KEYS[2 * i]) or '0'
    used = tonumber(prev) * (w - tonumber(ARGV[b + 4])) / w + used
  end
  raw[2 * i - 1] = curr
  raw[2 * i] = prev
  if refused == 0 and limit >= 0 and used + math.max(add, 1) > limit then refused = i end
end
if refused == 0 then
  for i = 1, n do
    local b = (i - 1) * 5
    if tonumber(ARGV[b + 2]) ~= 0 then
      redis.call('INCRBY', KEYS[2 * i - 1], ARGV[b + 2])
      redis.call('PEXPIRE', KEYS[2 * i - 1], ARGV[b + 5])
    end
  end
end
table.insert(raw, 1, tostring(refused))
return raw
`;

const ADD_LUA = `
local v = redis.call('INCRBY', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return v
`;

const UNLOCK_LUA = `
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0
`;

/** HSET and keep the hash at least as long as this field needs. */
const HSET_LUA = `
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
if redis.call('PTTL', KEYS[1]) < tonumber(ARGV[3]) then redis.call('PEXPIRE', KEYS[1], ARGV[3]) end
return 1
`;

/** A node missing heartbeats this long no longer counts as live. */
export const NODE_TTL_MS = 10_000;
const HEARTBEAT_MS = 1_000;

type Scripted = Redis & {
  hotCounters(numKeys: number, ...args: Array<string | number>): Promise<string[]>;
  hotAdd(key: string, amount: number, ttlMs: number): Promise<number>;
  hotUnlock(key: string, token: string): Promise<number>;
  hotHset(key: string, field: string, value: string, ttlMs: number): Promise<number>;
};

export interface RedisHotOptions {
  url: string;
  nodeId: string;
  log?: Logger;
  /** Bound on one command (ms); a slower server counts as down for that request. Default 1,000. */
  commandTimeoutMs?: number;
  /** Key prefix, so one server can hold several clusters (tests). Default `router:`. */
  prefix?: string;
}

export class RedisHotState implements HotState {
  readonly kind = 'redis' as const;
  readonly shared = true;
  readonly nodeId: string;
  private readonly client: Scripted;
  private readonly sub: Redis;
  private readonly prefix: string;
  private readonly url: string;
  private readonly log?: Logger;
  private readonly handlers = new Map<string, Set<(m: HotMessage) => void>>();
  private readonly healthListeners: Array<(h: HotHealth) => void> = [];
  private healthy = false;
  private latencyMs: number | null = null;
  private liveNodes = 1;
  private since = new Date().toISOString();
  private readonly timer: NodeJS.Timeout;
  private closed = false;

  constructor(options: RedisHotOptions) {
    this.nodeId = options.nodeId;
    this.prefix = options.prefix ?? 'router:';
    this.url = maskConnectionUrl(options.url);
    this.log = options.log;
    const common = {
      connectTimeout: 2_000,
      // Reconnect forever, quickly: the heartbeat reports the state, the request path never waits for it.
      retryStrategy: (times: number) => Math.min(100 * times, 1_000),
      lazyConnect: false,
    };
    this.client = new Redis(options.url, {
      ...common,
      commandTimeout: options.commandTimeoutMs ?? 1_000,
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
    }) as Scripted;
    this.client.defineCommand('hotCounters', { lua: COUNTERS_LUA });
    this.client.defineCommand('hotAdd', { numberOfKeys: 1, lua: ADD_LUA });
    this.client.defineCommand('hotUnlock', { numberOfKeys: 1, lua: UNLOCK_LUA });
    this.client.defineCommand('hotHset', { numberOfKeys: 1, lua: HSET_LUA });
    this.client.on('error', () => this.setHealthy(false));
    this.client.on('close', () => this.setHealthy(false));
    this.client.on('ready', () => void this.heartbeat());
    this.sub = new Redis(options.url, { ...common, autoResubscribe: true });
    this.sub.on('error', () => {});
    this.sub.on('message', (channel: string, payload: string) => this.deliver(channel, payload));
    this.timer = setInterval(() => void this.heartbeat(), HEARTBEAT_MS);
    this.timer.unref();
  }

  async counters(ops: readonly CounterOp[]): Promise<CounterOutcome> {
    const now = Date.now();
    const keys: string[] = [];
    const args: Array<string | number> = [];
    for (const op of ops) {
      const k = this.counterKeys(op.key, op.window, now);
      keys.push(k.curr, k.prev);
      args.push(op.limit, Math.round(op.add), k.windowMs, k.elapsed, k.ttlMs);
    }
    const raw = await this.run(this.client.hotCounters(keys.length, ...keys, ...args));
    const refused = Number(raw[0]) - 1;
    const before: number[] = [];
    for (let i = 0; i < ops.length; i++) {
      const curr = Number(raw[2 * i + 1]);
      const prev = Number(raw[2 * i + 2]);
      const w = ops[i]!.window;
      before.push(w.kind === 'sliding' ? (prev * (w.windowMs - (now % w.windowMs))) / w.windowMs + curr : curr);
    }
    if (refused < 0) return { allowed: true, refused: -1, before, retryAfterMs: 0 };
    const op = ops[refused]!;
    const retryAfterMs =
      op.window.kind === 'period'
        ? periodLeftMs(op.window.period, now)
        : slidingWaitMs(op.window.windowMs, now % op.window.windowMs, Number(raw[2 * refused + 2]), Number(raw[2 * refused + 1]), op.limit, Math.max(op.add, 1));
    return { allowed: false, refused, before, retryAfterMs };
  }

  async add(key: string, window: HotWindow, amount: number): Promise<number> {
    const k = this.counterKeys(key, window, Date.now());
    return Number(await this.run(this.client.hotAdd(k.curr, Math.round(amount), k.ttlMs)));
  }

  async read(items: ReadonlyArray<{ key: string; window: HotWindow }>): Promise<number[]> {
    if (items.length === 0) return [];
    const now = Date.now();
    const keys = items.flatMap((i) => {
      const k = this.counterKeys(i.key, i.window, now);
      return [k.curr, k.prev];
    });
    const raw = await this.run(this.client.mget(...keys));
    return items.map((item, i) => {
      const curr = Number(raw[2 * i] ?? 0);
      const w = item.window;
      return w.kind === 'sliding' ? (Number(raw[2 * i + 1] ?? 0) * (w.windowMs - (now % w.windowMs))) / w.windowMs + curr : curr;
    });
  }

  async setOnce(key: string, ttlMs: number): Promise<boolean> {
    return (await this.run(this.client.set(this.prefix + key, '1', 'PX', ttlMs, 'NX'))) === 'OK';
  }

  async lock(name: string, ttlMs: number): Promise<string | null> {
    const token = randomUUID();
    const ok = await this.run(this.client.set(`${this.prefix}lock:${name}`, token, 'PX', ttlMs, 'NX'));
    return ok === 'OK' ? token : null;
  }

  async unlock(name: string, token: string): Promise<boolean> {
    return (await this.run(this.client.hotUnlock(`${this.prefix}lock:${name}`, token))) === 1;
  }

  async locked(name: string): Promise<boolean> {
    return (await this.run(this.client.exists(`${this.prefix}lock:${name}`))) === 1;
  }

  async get(key: string): Promise<string | null> {
    return this.run(this.client.get(this.prefix + key));
  }

  async set(key: string, value: string, ttlMs: number): Promise<void> {
    await this.run(this.client.set(this.prefix + key, value, 'PX', Math.max(1, Math.round(ttlMs))));
  }

  async del(key: string): Promise<void> {
    await this.run(this.client.del(this.prefix + key));
  }

  async hashAll(key: string): Promise<Record<string, string>> {
    const all = await this.run(this.client.hgetall(this.prefix + key));
    const now = Date.now();
    const out: Record<string, string> = {};
    for (const [field, stored] of Object.entries(all)) {
      const bar = stored.indexOf('|');
      if (Number(stored.slice(0, bar)) > now) out[field] = stored.slice(bar + 1);
    }
    return out;
  }

  async hashSet(key: string, field: string, value: string, ttlMs: number): Promise<void> {
    const ttl = Math.max(1, Math.round(ttlMs));
    await this.run(this.client.hotHset(this.prefix + key, field, `${Date.now() + ttl}|${value}`, ttl));
  }

  async hashDel(key: string, field: string): Promise<void> {
    await this.run(this.client.hdel(this.prefix + key, field));
  }

  publish(channel: string, message: Record<string, unknown>): void {
    if (!this.healthy) return;
    this.client.publish(this.prefix + channel, JSON.stringify({ ...message, from: this.nodeId })).catch(() => this.setHealthy(false));
  }

  subscribe(channel: string, handler: (message: HotMessage) => void): () => void {
    const name = this.prefix + channel;
    let set = this.handlers.get(name);
    if (!set) {
      this.handlers.set(name, (set = new Set()));
      this.sub.subscribe(name).catch((err) => this.log?.warn('redis subscribe failed; retried on reconnect', { channel, error: maskUrlsIn(String(err)) }));
    }
    set.add(handler);
    return () => set.delete(handler);
  }

  health(): HotHealth {
    return { kind: 'redis', configured: true, healthy: this.healthy, latencyMs: this.latencyMs, liveNodes: this.liveNodes, url: this.url, since: this.since };
  }

  onHealth(listener: (health: HotHealth) => void): void {
    this.healthListeners.push(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.timer);
    try {
      if (this.healthy) await this.client.zrem(`${this.prefix}nodes`, this.nodeId);
    } catch {
      // leaving anyway: the entry ages out
    }
    this.client.disconnect();
    this.sub.disconnect();
  }

  /** One pipelined heartbeat: PING-equivalent round trip, own entry refreshed, stale ones dropped, live count. */
  private async heartbeat(): Promise<void> {
    if (this.closed) return;
    const t0 = performance.now();
    const now = Date.now();
    const nodes = `${this.prefix}nodes`;
    try {
      const res = await this.client
        .multi()
        .zadd(nodes, now, this.nodeId)
        .zremrangebyscore(nodes, '-inf', now - NODE_TTL_MS)
        .zcard(nodes)
        .exec();
      this.latencyMs = Math.round((performance.now() - t0) * 100) / 100;
      const count = Number(res?.[2]?.[1] ?? 1);
      this.liveNodes = Math.max(1, count);
      this.setHealthy(true);
    } catch {
      this.setHealthy(false);
    }
  }

  /** Awaits a command; a failure marks the server down (the heartbeat brings it back). */
  private async run<T>(p: Promise<T>): Promise<T> {
    try {
      return await p;
    } catch (err) {
      this.setHealthy(false);
      throw new Error(`redis unavailable: ${maskUrlsIn((err as Error).message)}`);
    }
  }

  private setHealthy(healthy: boolean): void {
    if (this.healthy === healthy || this.closed) return;
    this.healthy = healthy;
    this.since = new Date().toISOString();
    if (healthy) this.log?.info('redis reachable: hot state is shared again', { url: this.url, liveNodes: this.liveNodes });
    else this.log?.warn('redis unreachable: limits fall back to this node\'s share until it is back', { url: this.url, liveNodes: this.liveNodes });
    const h = this.health();
    for (const l of this.healthListeners) {
      try {
        l(h);
      } catch {
        // a listener's failure is its own
      }
    }
  }

  private deliver(channel: string, payload: string): void {
    const set = this.handlers.get(channel);
    if (!set || set.size === 0) return;
    let msg: HotMessage;
    try {
      msg = JSON.parse(payload) as HotMessage;
    } catch {
      return;
    }
    if (msg.from === this.nodeId) return;
    for (const h of set) {
      try {
        h(msg);
      } catch (err) {
        this.log?.warn('hot event handler failed', { channel, error: String(err) });
      }
    }
  }

  private counterKeys(key: string, window: HotWindow, now: number): { curr: string; prev: string; windowMs: number; elapsed: number; ttlMs: number } {
    const base = `${this.prefix}c:${key}:`;
    if (window.kind === 'period') {
      const curr = base + periodStamp(window.period, now);
      return { curr, prev: curr, windowMs: 0, elapsed: 0, ttlMs: periodLeftMs(window.period, now) + 3_600_000 };
    }
    const W = window.windowMs;
    const start = now - (now % W);
    return { curr: base + start, prev: base + (start - W), windowMs: W, elapsed: now - start, ttlMs: 2 * W + 1_000 };
  }
}
