/**
 * The hot-state port (src/daemon/hot/port.ts), one suite run against both adapters: the in-process one and
 * Redis on a real redis-server started here. Two Redis adapters on one server stand for two nodes.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LocalHotState } from '../../src/daemon/hot/local.js';
import type { HotMessage, HotState, HotWindow } from '../../src/daemon/hot/port.js';
import { RedisHotState } from '../../src/daemon/hot/redis.js';
import { type RedisServer, redisAvailable, startRedis } from '../support/redis.js';

const available = redisAvailable();
if (!available.ok) console.warn(`skipping the Redis adapter's port tests: ${available.reason}`);

const DAY: HotWindow = { kind: 'period', period: 'day' };
const MINUTE: HotWindow = { kind: 'sliding', windowMs: 60_000 };

async function until(check: () => boolean | Promise<boolean>, ms = 3_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}

interface Pair {
  a: HotState;
  /** A second node on the same state (the same object for the local adapter). */
  b: HotState;
}

function portSuite(name: string, make: () => Promise<Pair>) {
  describe(`hot-state port: ${name}`, () => {
    let a: HotState;
    let b: HotState;
    beforeAll(async () => {
      ({ a, b } = await make());
    });
    afterAll(async () => {
      await a?.close();
      if (b !== a) await b?.close();
    });
    const k = () => `t-${randomUUID()}`;

    it('check-and-add admits exactly up to the limit, across nodes', async () => {
      const key = k();
      const results = await Promise.all(Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).counters([{ key, window: DAY, limit: 7, add: 1 }])));
      expect(results.filter((r) => r.allowed)).toHaveLength(7);
      const refused = results.find((r) => !r.allowed)!;
      expect(refused.refused).toBe(0);
      expect(refused.retryAfterMs).toBeGreaterThan(0);
      expect(await a.read([{ key, window: DAY }])).toEqual([7]);
    });

    it('several counters are all-or-nothing: a refusal by one adds to none', async () => {
      const k1 = k();
      const k2 = k();
      await a.counters([{ key: k2, window: DAY, limit: -1, add: 5 }]);
      const r = await b.counters([
        { key: k1, window: DAY, limit: 10, add: 1 },
        { key: k2, window: DAY, limit: 5, add: 0 },
      ]);
      expect(r).toMatchObject({ allowed: false, refused: 1 });
      expect(r.before).toEqual([0, 5]);
      expect(await a.read([{ key: k1, window: DAY }, { key: k2, window: DAY }])).toEqual([0, 5]);
    });

    it('amounts reserve and reconcile: add takes negative amounts (budget settle)', async () => {
      const key = k();
      const limit = 1_000_000_000_000; // $1,000 in nano-dollars: big integers stay exact
      expect((await a.counters([{ key, window: { kind: 'period', period: 'month' }, limit, add: 600_000_000_000 }])).allowed).toBe(true);
      expect((await b.counters([{ key, window: { kind: 'period', period: 'month' }, limit, add: 600_000_000_000 }])).allowed).toBe(false);
      expect(await b.add(key, { kind: 'period', period: 'month' }, -599_999_999_999)).toBe(1);
      expect((await b.counters([{ key, window: { kind: 'period', period: 'month' }, limit, add: 600_000_000_000 }])).allowed).toBe(true);
    });

    it('a sliding window refuses past its limit with a retry time within the window', async () => {
      const key = k();
      for (let i = 0; i < 3; i++) expect((await (i % 2 ? a : b).counters([{ key, window: MINUTE, limit: 3, add: 1 }])).allowed).toBe(true);
      const r = await a.counters([{ key, window: MINUTE, limit: 3, add: 1 }]);
      expect(r.allowed).toBe(false);
      expect(r.retryAfterMs).toBeGreaterThan(0);
      expect(r.retryAfterMs).toBeLessThanOrEqual(120_000);
    });

    it('a lock has one holder; only its token releases it (rotation-safe refresh)', async () => {
      const name = k();
      const [t1, t2] = await Promise.all([a.lock(name, 5_000), b.lock(name, 5_000)]);
      expect([t1, t2].filter(Boolean)).toHaveLength(1);
      const holder = (t1 ?? t2)!;
      expect(await a.locked(name)).toBe(true);
      expect(await b.unlock(name, 'not-the-token')).toBe(false);
      expect(await b.locked(name)).toBe(true);
      expect(await (t1 ? a : b).unlock(name, holder)).toBe(true);
      expect(await a.locked(name)).toBe(false);
    });

    it('a lock expires on its own (a holder that died)', async () => {
      const name = k();
      expect(await a.lock(name, 100)).not.toBeNull();
      await until(async () => !(await b.locked(name)));
      expect(await b.lock(name, 100)).not.toBeNull();
    });

    it('setOnce sets once; values and hash fields expire', async () => {
      const key = k();
      expect(await a.setOnce(key, 5_000)).toBe(true);
      expect(await b.setOnce(key, 5_000)).toBe(false);
      await a.set(`${key}:v`, 'hello', 150);
      expect(await b.get(`${key}:v`)).toBe('hello');
      await a.hashSet(`${key}:h`, 'short', 'x', 150);
      await a.hashSet(`${key}:h`, 'long', 'y', 60_000);
      expect(await b.hashAll(`${key}:h`)).toEqual({ short: 'x', long: 'y' });
      await until(async () => (await b.get(`${key}:v`)) === null);
      await until(async () => Object.keys(await b.hashAll(`${key}:h`)).length === 1);
      await b.hashDel(`${key}:h`, 'long');
      expect(await a.hashAll(`${key}:h`)).toEqual({});
      await a.set(`${key}:w`, 'v', 60_000);
      await b.del(`${key}:w`);
      expect(await a.get(`${key}:w`)).toBeNull();
    });

    it('a bounded store is shared, evicts the least recently used to its bounds, expires, and clears', async () => {
      const space = k();
      const bounds = { ttlMs: 60_000, maxEntries: 3, maxBytes: 1_000 };
      for (const key of ['k1', 'k2', 'k3']) expect(await a.lruSet(space, key, `value of ${key}`, bounds)).toBe(0);
      expect(await b.lruGet(space, 'k2')).toBe('value of k2');
      expect(await b.lruGet(space, 'k1')).toBe('value of k1'); // k3 is now the least recently used
      expect(await b.lruSet(space, 'k4', 'value of k4', bounds)).toBe(1);
      expect(await a.lruGet(space, 'k3')).toBeNull();
      expect(await a.lruSize(space)).toEqual({ entries: 3, bytes: 33 });
      // Replacing a value counts its bytes once; the byte bound evicts too.
      await a.lruSet(space, 'k4', 'x'.repeat(500), bounds);
      expect(await a.lruSize(space)).toEqual({ entries: 3, bytes: 522 });
      // 4 entries, 1,122 bytes: the count bound alone would evict k2; the byte bound evicts k1 and k4 too.
      expect(await b.lruSet(space, 'k5', 'y'.repeat(600), bounds)).toBe(3);
      expect(await b.lruSize(space)).toEqual({ entries: 1, bytes: 600 });
      await a.lruSet(space, 'short', 'gone soon', { ...bounds, ttlMs: 150 });
      await until(async () => (await b.lruGet(space, 'short')) === null);
      expect(await b.lruSize(space)).toEqual({ entries: 1, bytes: 600 });
      expect(await b.lruClear(space)).toBe(1);
      expect(await a.lruGet(space, 'k5')).toBeNull();
      expect(await a.lruSize(space)).toEqual({ entries: 0, bytes: 0 });
    });

    it('health says what the adapter is', () => {
      const h = a.health();
      expect(h.kind).toBe(a.kind);
      expect(h.configured).toBe(a.shared);
      expect(h.healthy).toBe(true);
      expect(h.liveNodes).toBeGreaterThanOrEqual(1);
    });
  });
}

portSuite('local', async () => {
  const a = new LocalHotState('n1');
  return { a, b: a };
});

describe.skipIf(!available.ok)('redis', () => {
  let server: RedisServer;
  const prefix = `t${Date.now()}:`;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  const node = async (id: string) => {
    const s = new RedisHotState({ url: server.url, nodeId: id, prefix });
    await until(() => s.health().healthy, 5_000);
    return s;
  };

  portSuite('redis', async () => ({ a: await node('n1'), b: await node('n2') }));

  describe('redis only', () => {
    it('pub/sub reaches the other nodes, never the sender; liveNodes counts heartbeats', async () => {
      const a = await node('p1');
      const b = await node('p2');
      const got: HotMessage[] = [];
      const own: HotMessage[] = [];
      b.subscribe('events', (m) => got.push(m));
      a.subscribe('events', (m) => own.push(m));
      await new Promise((r) => setTimeout(r, 100));
      a.publish('events', { type: 'cooldown', connectionId: 'c1' });
      await until(() => got.length === 1);
      expect(got[0]).toMatchObject({ type: 'cooldown', connectionId: 'c1', from: 'p1' });
      expect(own).toEqual([]);
      await until(() => a.health().liveNodes >= 2);
      await a.close();
      await b.close();
    });

    it('a dead server: commands fail fast, health says so, and it comes back by itself', async () => {
      const a = await node('f1');
      const seen: boolean[] = [];
      a.onHealth((h) => seen.push(h.healthy));
      await server.kill();
      const t0 = Date.now();
      await expect(a.counters([{ key: 'x', window: DAY, limit: 5, add: 1 }])).rejects.toThrow(/redis unavailable/);
      expect(Date.now() - t0).toBeLessThan(1_500);
      await until(() => !a.health().healthy);
      await server.start();
      await until(() => a.health().healthy, 10_000);
      expect(seen).toEqual([false, true]);
      expect((await a.counters([{ key: 'x', window: DAY, limit: 5, add: 1 }])).allowed).toBe(true);
      expect(a.health().url).toBe(`${server.url}`);
      await a.close();
    });

    it('passwords never show in health', () => {
      const s = new RedisHotState({ url: 'redis://user:s3cret@127.0.0.1:1', nodeId: 'm' });
      expect(s.health().url).toBe('redis://user:****@127.0.0.1:1');
      void s.close();
    });
  });
});
