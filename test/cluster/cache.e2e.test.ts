/**
 * The response cache shared in Redis (issue 29 item 3), on two real daemons sharing one real PostgreSQL 15
 * and one Redis 7, with a mock upstream:
 * - a reply cached by node A is served by node B without an upstream call (same keys as one machine);
 * - per-key cache modes are shared: a mode set on one node is in effect on the other within 1 s;
 * - Redis holds sealed values only (no prompt or reply text), bounded by the cache settings;
 * - a purge on one node empties the cluster's cache;
 * - Redis down: requests are served, each node falls back to its own cache (never an error); Redis back:
 *   shared again by itself.
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { clusterUnavailable, startCluster, type ClusterNodeProcess, type ClusterUnderTest } from '../support/cluster.js';

const missing = clusterUnavailable({ redis: true });

async function chat(node: ClusterNodeProcess, key: string, content: string, headers: Record<string, string> = {}): Promise<{ status: number; cache: string | null; text: string }> {
  const res = await fetch(`${node.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content }] }),
  });
  return { status: res.status, cache: res.headers.get('x-router-cache'), text: await res.text() };
}

async function until(probe: () => Promise<boolean>, ms: number, what: string): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(missing)(`response cache shared in Redis${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let cluster: ClusterUnderTest;
  let mock: MockUpstream;
  let redis: Redis;
  let key: string;
  let keyId: string;
  let a: ClusterNodeProcess;
  let b: ClusterNodeProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    cluster = await startCluster({ nodes: 2, redis: true });
    [a, b] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess];
    // Provider connections are node-local still (cluster/shared-modules.ts): each node gets the mock.
    for (const n of cluster.nodes) await n.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
    const created = (await a.manage('POST', '/api/keys', { name: 'cached', scopes: ['proxy'] })).json;
    key = created.key;
    keyId = created.id;
    await until(async () => (await chat(b, key, 'warm-up', { 'x-router-cache': 'bypass' })).status === 200, 5_000, 'the key on node B');
    redis = new Redis(cluster.redis!.url, { lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => 200 });
    redis.on('error', () => {});
    await redis.connect();
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    await cluster?.stop();
    await mock?.close();
  }, 60_000);

  it('a key mode set on one node is in effect on the other within 1 s; a reply cached by A is served by B', async () => {
    const put = await b.manage('PUT', `/api/cache/keys/${keyId}`, { mode: 'always' });
    expect(put.status).toBe(200);
    const started = Date.now();
    await until(async () => (await a.manage('GET', `/api/cache/keys/${keyId}`)).json.mode === 'always', 1_000, 'the mode on node A');
    expect(Date.now() - started).toBeLessThan(1_000);

    mock.reset();
    const first = await chat(a, key, 'shared cache: first question');
    expect(first).toMatchObject({ status: 200, cache: 'miss' });
    expect(mock.requests).toHaveLength(1);
    // The store goes to Redis after the reply: B serves it without calling the upstream.
    await until(async () => (await b.manage('GET', '/api/cache')).json.entries >= 1, 5_000, 'the entry in Redis');
    const second = await chat(b, key, 'shared cache: first question');
    expect(second).toMatchObject({ status: 200, cache: 'hit' });
    expect(JSON.parse(second.text).choices[0].message.content).toBe(JSON.parse(first.text).choices[0].message.content);
    expect(mock.requests).toHaveLength(1);
    // A different request is not a hit; B's own store is served back to A.
    expect(await chat(b, key, 'shared cache: second question')).toMatchObject({ status: 200, cache: 'miss' });
    await until(async () => (await a.manage('GET', '/api/cache')).json.entries >= 2, 5_000, 'the second entry in Redis');
    expect(await chat(a, key, 'shared cache: second question')).toMatchObject({ status: 200, cache: 'hit' });
    expect(mock.requests).toHaveLength(2);
    const status = (await a.manage('GET', '/api/cache')).json;
    expect(status).toMatchObject({ entries: 2, hits: 1 });
  });

  it('Redis holds sealed values only: no prompt or reply text, and the entries are bounded by the settings', async () => {
    const keys = await redis.keys('*lru:cache:e:*');
    expect(keys.length).toBeGreaterThanOrEqual(2);
    const reply = JSON.parse((await chat(a, key, 'shared cache: first question')).text).choices[0].message.content as string;
    for (const k of keys) {
      const value = (await redis.get(k)) ?? '';
      expect(value).toMatch(/^v1\./);
      expect(value).not.toContain('shared cache');
      expect(value).not.toContain(reply);
      expect(await redis.pttl(k)).toBeGreaterThan(0);
    }
    // maxEntries 2 (a shared setting): a third reply evicts the least recently used one, cluster-wide.
    expect((await a.manage('PATCH', '/api/cache', { maxEntries: 2 })).status).toBe(200);
    await until(async () => (await b.manage('GET', '/api/cache')).json.maxEntries === 2, 1_000, 'the setting on node B');
    await chat(b, key, 'shared cache: third question');
    await until(async () => (await redis.keys('*lru:cache:e:*')).length === 2, 5_000, 'the eviction in Redis');
    expect((await a.manage('GET', '/api/cache')).json.entries).toBe(2);
    expect((await a.manage('PATCH', '/api/cache', { maxEntries: 10_000 })).status).toBe(200);
  });

  it('a purge on one node empties the cluster cache; mode off on one node stops caching on the other', async () => {
    const purged = await b.manage('DELETE', '/api/cache');
    expect(purged).toMatchObject({ status: 200, json: { purged: 2 } });
    mock.reset();
    expect(await chat(a, key, 'shared cache: third question')).toMatchObject({ status: 200, cache: 'miss' });
    expect(mock.requests).toHaveLength(1);

    expect((await a.manage('PUT', `/api/cache/keys/${keyId}`, { mode: 'off' })).status).toBe(200);
    await until(async () => (await b.manage('GET', `/api/cache/keys/${keyId}`)).json.mode === 'off', 1_000, 'mode off on node B');
    mock.reset();
    for (let i = 0; i < 2; i++) expect((await chat(b, key, 'shared cache: off')).cache).toBeNull();
    expect(mock.requests).toHaveLength(2);
    expect((await a.manage('PUT', `/api/cache/keys/${keyId}`, { mode: 'always' })).status).toBe(200);
    await until(async () => (await b.manage('GET', `/api/cache/keys/${keyId}`)).json.mode === 'always', 1_000, 'mode always on node B');
  });

  it('Redis down: every request is served, each node from its own cache; Redis back: shared again', async () => {
    expect(await chat(a, key, 'shared cache: before the outage')).toMatchObject({ status: 200, cache: 'miss' });
    await until(async () => (await b.manage('GET', '/api/cache')).json.entries >= 1, 5_000, 'the entry in Redis');
    await cluster.redis!.kill();
    await until(async () => (await a.manage('GET', '/api/cluster')).json.redis.healthy === false, 5_000, 'Redis reported down');
    mock.reset();
    // A stored it, so its own cache answers; B never held it: a miss served by the upstream, no error.
    expect(await chat(a, key, 'shared cache: before the outage')).toMatchObject({ status: 200, cache: 'hit' });
    expect(await chat(b, key, 'shared cache: before the outage')).toMatchObject({ status: 200, cache: 'miss' });
    expect(await chat(b, key, 'shared cache: before the outage')).toMatchObject({ status: 200, cache: 'hit' });
    expect(mock.requests).toHaveLength(1);
    const purge = await a.manage('DELETE', '/api/cache');
    expect(purge.status).toBe(503);
    expect(purge.json.error.code).toBe('hot_state_unavailable');

    await cluster.redis!.start();
    for (const n of [a, b]) await until(async () => (await n.manage('GET', '/api/cluster')).json.redis.healthy === true, 10_000, 'Redis healthy again');
    // Redis ran without persistence: it came back empty. A stores again, B is served from Redis.
    mock.reset();
    expect(await chat(a, key, 'shared cache: after the outage')).toMatchObject({ status: 200, cache: 'miss' });
    await until(async () => (await b.manage('GET', '/api/cache')).json.entries >= 1, 5_000, 'the entry in Redis again');
    expect(await chat(b, key, 'shared cache: after the outage')).toMatchObject({ status: 200, cache: 'hit' });
    expect(mock.requests).toHaveLength(1);
  }, 60_000);
});
