/**
 * Cluster mode's hot state through two real daemon processes sharing one real Redis (issue 29 item 3):
 * each daemon has its own state folder (the same keys and connection, copied from one seeded folder: the
 * durable store is not shared here), the limits live in Redis. Shows: a daily limit N admits exactly N
 * across both; a cooldown learned on one is honoured by the other within 1 s; a USD budget is never
 * overshot under concurrent load on both; Redis killed mid-traffic leaves requests served on each node's
 * share, and the cluster-wide limit is back when Redis is.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { type RedisServer, redisAvailable, startRedis } from '../support/redis.js';
import { type RouterProcess, startRouter } from '../support/router-daemon.js';

const available = redisAvailable();
if (!available.ok) console.warn(`skipping the cluster hot-state tests: ${available.reason}`);

async function until<T>(probe: () => Promise<T | undefined | false>, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

async function chat(r: RouterProcess, key: string, model = 'openai/gpt-4o', extra: Record<string, unknown> = {}) {
  const res = await fetch(`${r.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }], ...extra }),
  });
  return { status: res.status, json: (await res.json()) as any };
}

async function metric(r: RouterProcess, name: string): Promise<string | undefined> {
  const res = await fetch(`${r.url}/metrics`, { headers: { 'x-router-cli-token': r.cliToken } });
  const text = await res.text();
  return text.split('\n').find((l) => l.startsWith(name));
}

describe.skipIf(!available.ok)('cluster hot state: two daemons, one Redis', () => {
  let redis: RedisServer;
  let mock: MockUpstream;
  let a: RouterProcess;
  let b: RouterProcess;
  const homes: string[] = [];
  const keys: Record<string, { key: string; id: string }> = {};

  beforeAll(async () => {
    redis = await startRedis();
    mock = await startMockUpstream();
    // One seeded state folder, copied: both daemons know the same keys and the same connection.
    const seed = await startRouter({ keepHome: true });
    await seed.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
    const make = async (name: string, body: Record<string, unknown>) => {
      const r = await seed.manage('POST', '/api/keys', { name, ...body });
      expect(r.status, JSON.stringify(r.json)).toBe(201);
      keys[name] = { key: r.json.key, id: r.json.id };
    };
    await make('daily', { dailyRequestLimit: 10 });
    await make('budget', { budget: { period: 'day', usd: 0.005 } });
    await make('outage', { dailyRequestLimit: 40 });
    await make('plain', {});
    await seed.stop();
    const homeB = mkdtempSync(join(tmpdir(), 'router-e2e-b-'));
    cpSync(seed.home, homeB, { recursive: true });
    homes.push(seed.home, homeB);
    // The copied folder holds A's node id: B is named on its own.
    [a, b] = await Promise.all([
      startRouter({ home: seed.home, env: { ROUTER_REDIS_URL: redis.url, ROUTER_NODE_ID: 'node-a' } }),
      startRouter({ home: homeB, env: { ROUTER_REDIS_URL: redis.url, ROUTER_NODE_ID: 'node-b' } }),
    ]);
    await until(async () => (await metric(a, 'router_cluster_live_nodes'))?.endsWith(' 2'), 10_000, 'both nodes live');
  }, 90_000);

  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await mock?.close();
    await redis?.stop();
    for (const h of homes) rmSync(h, { recursive: true, force: true });
  });

  it('a daily limit of 10 admits exactly 10 requests across both daemons (sent concurrently)', async () => {
    const { key, id } = keys.daily!;
    const results = await Promise.all(Array.from({ length: 24 }, (_, i) => chat(i % 2 ? a : b, key)));
    const ok = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(10);
    expect(refused).toHaveLength(14);
    expect(refused[0]!.json.error).toMatchObject({ type: 'rate_limit_error', code: 'daily_request_limit', limit: 10 });
    // Both nodes report the cluster's count.
    for (const r of [a, b]) expect((await r.manage('GET', `/api/quotas/${id}`)).json.requests).toMatchObject({ used: 10, limit: 10, remaining: 0 });
  });

  it('a cooldown learned on one daemon is honoured by the other within 1 s', async () => {
    let served = 0;
    const off = mock.handle((req) => (req.model === 'gpt-4o-mini' && served++ === 0 ? { type: 'status', status: 429, headers: { 'retry-after': '120' } } : undefined));
    try {
      const first = await chat(a, keys.plain!.key, 'openai/gpt-4o-mini');
      const learnedAt = Date.now();
      expect(first.status).not.toBe(200);
      await until(
        async () => ((await b.manage('GET', '/api/resilience')).json.cooldowns as Array<{ model: string }>).some((c) => c.model === 'gpt-4o-mini' || c.model === '*'),
        1_000,
        'the cooldown on the other daemon',
      );
      expect(Date.now() - learnedAt).toBeLessThan(1_000);
      const before = mock.requests.length;
      const second = await chat(b, keys.plain!.key, 'openai/gpt-4o-mini');
      expect(second.status).not.toBe(200);
      expect(mock.requests.length).toBe(before); // refused by the cooldown: the upstream never saw it
    } finally {
      off();
      await a.manage('POST', '/api/resilience/reset', {});
      await b.manage('POST', '/api/resilience/reset', {});
    }
  });

  it('a USD budget is never overshot under concurrent load on both daemons; reservations reconcile to the real cost', async () => {
    const { key, id } = keys.budget!;
    // Slow replies keep many reservations in flight at once.
    const off = mock.handle(() => ({ type: 'delay', ms: 150 }));
    let served = 0;
    let refused = 0;
    try {
      // Waves of 16 concurrent requests (8 per node) until a whole wave is refused: the budget is used up.
      for (let wave = 0, servedInWave = 1; wave < 20 && servedInWave > 0; wave++) {
        const results = await Promise.all(Array.from({ length: 16 }, (_, i) => chat(i % 2 ? a : b, key, 'openai/gpt-4o', { max_tokens: 20 })));
        servedInWave = results.filter((r) => r.status === 200).length;
        for (const r of results) {
          if (r.status === 200) served++;
          else {
            expect(r.status).toBe(429);
            expect(r.json.error).toMatchObject({ type: 'rate_limit_error', code: 'budget_exceeded', limit: 0.005 });
            refused++;
          }
        }
      }
    } finally {
      off();
    }
    expect(served).toBeGreaterThan(0);
    expect(refused).toBeGreaterThan(0);
    // Every reservation settled: what the budget counter holds is what the usage rows of both nodes cost.
    const costOf = async (r: RouterProcess) => {
      const page = await r.manage('GET', `/api/logs?key=${id}&limit=500`);
      expect(page.status, JSON.stringify(page.json)).toBe(200);
      const rows = page.json.logs as Array<{ costUsd: number | null; status: number }>;
      return rows.filter((x) => x.status === 200).reduce((s, x) => s + (x.costUsd ?? 0), 0);
    };
    const snap = await until(
      async () => {
        const s = (await a.manage('GET', `/api/quotas/${id}`)).json;
        const spent = (await costOf(a)) + (await costOf(b));
        return Math.abs(s.budget.usedUsd - spent) < 1e-5 && { s, spent };
      },
      5_000,
      'the reservations to reconcile',
    );
    // Never over: each reservation (gpt-4o at $2.50/$10 per million: 25 input tokens and 20 output, about
    // $0.00026) is above the call's real cost. And used up: the last refusals came with less than one
    // reservation left.
    expect(snap.spent).toBeLessThanOrEqual(0.005);
    expect(snap.spent).toBeGreaterThan(0.005 - 0.0003);
    expect(snap.s.budget).toMatchObject({ period: 'day', usd: 0.005 });
  });

  it('Redis killed mid-traffic: requests still served on each node\'s share; the cluster-wide limit is back with Redis', async () => {
    const { key } = keys.outage!;
    // 10 of 40 counted in Redis, alternating nodes: A last saw 9 used, B 10.
    for (let i = 0; i < 10; i++) expect((await chat(i % 2 ? b : a, key)).status).toBe(200);
    await redis.kill();
    await until(async () => (await metric(a, 'router_hot_state_up'))?.endsWith(' 0') && (await metric(b, 'router_hot_state_up'))?.endsWith(' 0'), 5_000, 'both nodes to notice');
    const down = (await a.manage('GET', '/api/cluster')).json;
    expect(down.redis).toMatchObject({ configured: true, healthy: false, url: redis.url });
    // Each node admits its share of what was left: floor((40 - seen) / 2 live nodes) = 15.
    const served = async (r: RouterProcess) => {
      let n = 0;
      for (let i = 0; i < 20; i++) {
        const res = await chat(r, key);
        if (res.status === 200) n++;
        else expect(res.json.error.code).toBe('daily_request_limit');
      }
      return n;
    };
    expect(await served(a)).toBe(15);
    expect(await served(b)).toBe(15);
    // Other keys keep working meanwhile (plain key: no limits).
    expect((await chat(a, keys.plain!.key)).status).toBe(200);

    await redis.start();
    await until(async () => (await metric(a, 'router_hot_state_up'))?.endsWith(' 1') && (await metric(b, 'router_hot_state_up'))?.endsWith(' 1'), 15_000, 'recovery');
    expect((await b.manage('GET', '/api/cluster')).json.redis).toMatchObject({ configured: true, healthy: true });
    // The restarted Redis (no persistence) lost the 10 counted before; each node added its 15: 30 of 40.
    // From here the limit is cluster-wide again: 10 more in total, across both.
    const after = await Promise.all(Array.from({ length: 16 }, (_, i) => chat(i % 2 ? a : b, key)));
    expect(after.filter((r) => r.status === 200)).toHaveLength(10);
  }, 60_000);
});
