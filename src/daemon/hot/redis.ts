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
import { type CounterOp, type CounterOutcome, type HotHealth, type HotMessage, type HotState, type HotWindow, type LruBounds, periodLeftMs, periodStamp, slidingWaitMs } from './port.js';

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

/*
 * Bounded stores (the shared response cache). A space `S` is, under the prefix: `lru:S:e:<key>` the values
 * (expiring by themselves, PX), `lru:S:idx` the keys by last use (sorted set), `lru:S:exp` the keys by
 * expiry (sorted set), `lru:S:size` each key's bytes (hash), `lru:S:bytes` their sum and `lru:S:seq` the use counter (the
 * order of use, exact where many uses share a millisecond). Scripts derive a value's key from ARGV (one
 * Redis server, not Redis Cluster). KEYS: idx, exp, size, bytes, seq.
 */
const LRU_DROP = `
local function drop(m)
  local b = redis.call('HGET', KEYS[3], m)
  if b then redis.call('DECRBY', KEYS[4], b) end
  redis.call('HDEL', KEYS[3], m)
  redis.call('ZREM', KEYS[1], m)
  redis.call('ZREM', KEYS[2], m)
  redis.call('UNLINK', ARGV[1] .. m)
end
local function sweep(now)
  local gone = redis.call('ZRANGEBYSCORE', KEYS[2], '-inf', now, 'LIMIT', 0, 1000)
  for _, m in ipairs(gone) do drop(m) end
end
`;

/** ARGV: value prefix, key. The live value, marked used. */
const LRU_GET_LUA = `
local v = redis.call('GET', ARGV[1] .. ARGV[2])
if v then redis.call('ZADD', KEYS[1], 'XX', redis.call('INCR', KEYS[5]), ARGV[2]) end
return v
`;

/** ARGV: value prefix, key, value, bytes, ttlMs, now, maxEntries, maxBytes. Returns the evicted count. */
const LRU_SET_LUA = `${LRU_DROP}
local key, now = ARGV[2], tonumber(ARGV[6])
drop(key)
redis.call('SET', ARGV[1] .. key, ARGV[3], 'PX', ARGV[5])
redis.call('ZADD', KEYS[1], redis.call('INCR', KEYS[5]), key)
redis.call('ZADD', KEYS[2], now + tonumber(ARGV[5]), key)
redis.call('HSET', KEYS[3], key, ARGV[4])
redis.call('INCRBY', KEYS[4], ARGV[4])
sweep(now)
local evicted = 0
while redis.call('ZCARD', KEYS[1]) > tonumber(ARGV[7]) or tonumber(redis.call('GET', KEYS[4]) or '0') > tonumber(ARGV[8]) do
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0)
  if #oldest == 0 then break end
  drop(oldest[1])
  evicted = evicted + 1
end
return evicted
`;

/** ARGV: value prefix, now, clear (1: drop everything). Returns {entries, bytes} (before a clear). */
const LRU_SIZE_LUA = `${LRU_DROP}
sweep(tonumber(ARGV[2]))
local n = redis.call('ZCARD', KEYS[1])
local bytes = tonumber(redis.call('GET', KEYS[4]) or '0')
if ARGV[3] == '1' then
  for _, m in ipairs(redis.call('ZRANGE', KEYS[1], 0, -1)) do redis.call('UNLINK', ARGV[1] .. m) end
  redis.call('UNLINK', KEYS[1], KEYS[2], KEYS[3], KEYS[4], KEYS[5])
end
return {n, bytes}
`;

/** A node missing heartbeats this long no longer counts as live. */
export const NODE_TTL_MS = 10_000;
const HEARTBEAT_MS = 1_000;

type Scripted = Redis & {
  hotCounters(numKeys: number, ...args: Array<string | number>): Promise<string[]>;
  hotAdd(key: string, amount: number, ttlMs: number): Promise<number>;
  hotUnlock(key: string, token: string): Promise<number>;
  hotHset(key: string, field: string, value: string, ttlMs: number): Promise<number>;
  hotLruGet(...args: Array<string | number>): Promise<string | null>;
  hotLruSet(...args: Array<string | number>): Promise<number>;
  hotLruSize(...args: Array<string | number>): Promise<[number, number]>;
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
    this.client.defineCommand('hotLruGet', { numberOfKeys: 5, lua: LRU_GET_LUA });
    this.client.defineCommand('hotLruSet', { numberOfKeys: 5, lua: LRU_SET_LUA });
    this.client.defineCommand('hotLruSize', { numberOfKeys: 5, lua: LRU_SIZE_LUA });
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

  async lruGet(space: string, key: string): Promise<string | null> {
    return this.run(this.client.hotLruGet(...this.lruKeys(space), key));
  }

  async lruSet(space: string, key: string, value: string, bounds: LruBounds): Promise<number> {
    const ttl = Math.max(1, Math.round(bounds.ttlMs));
    const args = [key, value, Buffer.byteLength(value), ttl, Date.now(), bounds.maxEntries, bounds.maxBytes];
    return Number(await this.run(this.client.hotLruSet(...this.lruKeys(space), ...args)));
  }

  async lruClear(space: string): Promise<number> {
    return Number((await this.run(this.client.hotLruSize(...this.lruKeys(space), Date.now(), 1)))[0]);
  }

  async lruSize(space: string): Promise<{ entries: number; bytes: number }> {
    const [entries, bytes] = await this.run(this.client.hotLruSize(...this.lruKeys(space), Date.now(), 0));
    return { entries: Number(entries), bytes: Number(bytes) };
  }

  /** KEYS (idx, exp, size, bytes, seq) and the values' key prefix: the scripts' keys and first arg. */
  private lruKeys(space: string): string[] {
    const base = `${this.prefix}lru:${space}:`;
    return [`${base}idx`, `${base}exp`, `${base}size`, `${base}bytes`, `${base}seq`, `${base}e:`];
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
