/**
 * Pricing, cache key modes and sync nonces in cluster mode: two real daemons on one real PostgreSQL 15
 * (docs/storage.md "Modules on the seam"). A price set on node A prices the rows node B records; a key's
 * cache mode set on A is B's within a second; a signed sync request answered by A is refused as a replay by
 * B. On the old code each of these lived in each node's own SQLite file.
 */
import { createHmac, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { clusterUnavailable, startCluster, type ClusterNodeProcess, type ClusterUnderTest } from '../support/cluster.js';

const missing = clusterUnavailable();
const SECRET = 'a-sync-secret-shared-by-the-cluster';

async function until<T>(fn: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** A signed sync request, as a router signs it (X-Cloud-Sync-Auth before the body, X-Cloud-Sig over it). */
function signedRequest(action: string) {
  const hmac = (text: string) => createHmac('sha256', SECRET).update(text).digest('hex');
  const nonce = randomBytes(16).toString('hex');
  const sent = Date.now();
  const body = JSON.stringify({ action, sentAt: new Date(sent).toISOString(), nonce });
  const length = Buffer.byteLength(body);
  return {
    body,
    headers: {
      'content-type': 'application/json',
      'x-cloud-sig': `sha256=${hmac(body)}`,
      'x-cloud-sync-auth': `nonce=${nonce};sent=${sent};length=${length};sha256=${hmac(`router-sync-request/2\n${nonce}\n${sent}\n${length}`)}`,
    },
  };
}

describe.skipIf(missing)(`pricing, cache key modes and sync nonces are shared${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let cluster: ClusterUnderTest;
  let mock: MockUpstream;
  let key: { id: string; key: string };

  /** One chat through `node`; returns the row it recorded, read from `node`'s log once it is there. */
  async function rowOf(node: ClusterNodeProcess): Promise<{ tokensIn: number; tokensOut: number; costUsd: number | null; priceVersion: string | null }> {
    const res = await fetch(`${node.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(res.status).toBe(200);
    await res.arrayBuffer();
    const trace = res.headers.get('x-router-trace-id');
    return until(async () => {
      const logs = (await node.manage('GET', '/api/logs?limit=50')).json.logs as Array<{ traceId: string } & Awaited<ReturnType<typeof rowOf>>>;
      return logs.find((l) => l.traceId === trace);
    }, 5_000);
  }

  beforeAll(async () => {
    mock = await startMockUpstream();
    cluster = await startCluster({ nodes: 2 });
    const [a, b] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess];
    key = (await a.manage('POST', '/api/keys', { name: 'caller', scopes: ['proxy'] })).json;
    await a.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
    // B serves with the key and the connection A stored (shared), once their notices arrived.
    await until(async () => {
      const res = await fetch(`${b.url}/v1/models`, { headers: { authorization: `Bearer ${key.key}` } });
      await res.arrayBuffer();
      return res.status === 200 ? true : undefined;
    }, 5_000);
    await until(async () => ((await rowOf(b)).costUsd !== undefined ? true : undefined), 5_000);
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    await mock?.close();
  }, 60_000);

  it("a price set on node A prices the rows node B records next (within 2 s, the row read back included); removed on B, A's rows are back at the shipped price", async () => {
    const [a, b] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess];
    const before = await rowOf(b);
    expect(before.priceVersion).toMatch(/^router@/);
    const put = await a.manage('PUT', '/api/pricing/openai/gpt-4o', { input: 1000, output: 2000 });
    expect(put.status).toBe(200);
    const setAt = Date.now();
    const after = await until(async () => {
      const row = await rowOf(b);
      return row.priceVersion === 'override' ? row : undefined;
    }, 3_000);
    expect(Date.now() - setAt).toBeLessThan(2_000);
    expect(after.costUsd).toBeCloseTo((after.tokensIn * 1000 + after.tokensOut * 2000) / 1_000_000, 9);
    expect((await b.manage('GET', '/api/pricing/openai/gpt-4o')).json).toMatchObject({ input: 1000, output: 2000, source: 'override' });

    expect((await b.manage('DELETE', '/api/pricing/openai/gpt-4o')).status).toBe(200);
    const back = await until(async () => {
      const row = await rowOf(a);
      return row.priceVersion?.startsWith('router@') ? row : undefined;
    }, 3_000);
    expect(back.costUsd).toBeLessThan(after.costUsd!);
  });

  it("a key's cache mode set on node A is node B's within 1 s", async () => {
    const [a, b] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess];
    expect((await b.manage('GET', `/api/cache/keys/${key.id}`)).json.mode).toBe('request');
    expect((await a.manage('PUT', `/api/cache/keys/${key.id}`, { mode: 'always' })).status).toBe(200);
    const start = Date.now();
    await until(async () => ((await b.manage('GET', `/api/cache/keys/${key.id}`)).json.mode === 'always' ? true : undefined), 2_000);
    expect(Date.now() - start).toBeLessThan(1_000);
  });

  it('a signed sync request answered by node A is refused as a replay by node B', async () => {
    const [a, b] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess];
    expect((await a.manage('PATCH', '/api/settings', { cloudSync: { url: 'https://sync.example.com/api/sync/cloud/remote', secret: SECRET, enabled: true } })).status).toBe(200);
    await until(async () => ((await b.manage('GET', '/api/settings')).json.cloudSync?.enabled === true ? true : undefined), 2_000);
    const req = signedRequest('status');
    const post = (node: ClusterNodeProcess) => fetch(`${node.url}/api/sync/cloud/remote`, { method: 'POST', headers: req.headers, body: req.body });
    const first = await post(a);
    expect(first.status, await first.clone().text()).toBe(200);
    const replay = await post(b);
    expect(replay.status).toBe(409);
    expect((await replay.json()).error.code).toBe('sync_replayed');
  });
});
