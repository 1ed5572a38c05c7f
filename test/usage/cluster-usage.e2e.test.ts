/**
 * Usage rows in cluster mode, through real daemons on one real PostgreSQL 15 (issue 29 items 4 and 5):
 * a request served by any node is in the request log and analytics of every node within 2 s; while the
 * database is stopped, proxied requests are still served and their rows wait in the node's on-disk queue
 * (state folder), arriving once each when the database is back, also across a restart of the node.
 * Run `npm run build` first (the daemons run dist/).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { clusterUnavailable, startCluster, type ClusterNodeProcess, type ClusterUnderTest } from '../support/cluster.js';
import { chatAs } from '../support/router-daemon.js';

const missing = clusterUnavailable();
const QUEUE = 'usage-queue.jsonl';

/** Rows in a node's on-disk queue (complete lines only: the node may be appending). */
function queued(node: ClusterNodeProcess): number {
  const file = join(node.home, QUEUE);
  if (!existsSync(file)) return 0;
  const text = readFileSync(file, 'utf8');
  return text
    .slice(0, text.lastIndexOf('\n') + 1)
    .split('\n')
    .filter(Boolean)
    .reduce((n, line) => n + (JSON.parse(line) as { rows: unknown[] }).rows.length, 0);
}

/** Trace ids in a node's request log (every page). */
async function loggedTraces(node: ClusterNodeProcess): Promise<string[]> {
  const out: string[] = [];
  let cursor: string | null = null;
  do {
    const page: { status: number; json: any } = await node.manage('GET', `/api/logs?limit=200${cursor ? `&cursor=${cursor}` : ''}`);
    if (page.status !== 200) throw new Error(`GET /api/logs: ${page.status}`);
    out.push(...page.json.logs.map((e: { traceId: string }) => e.traceId));
    cursor = page.json.nextCursor;
  } while (cursor);
  return out;
}

async function until<T>(fn: () => Promise<T | undefined>, ms: number): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`condition not met within ${ms} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe.skipIf(missing)(`usage in cluster mode${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let cluster: ClusterUnderTest;
  let mock: MockUpstream;
  let key: string;

  /** Sends `n` chat requests through `node`; each must be served; returns their trace ids. */
  async function send(node: ClusterNodeProcess, n: number): Promise<string[]> {
    const traces: string[] = [];
    for (let i = 0; i < n; i++) {
      const res = await fetch(`${node.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: `hi ${i}` }] }),
      });
      expect(res.status).toBe(200);
      await res.arrayBuffer();
      traces.push(res.headers.get('x-router-trace-id') ?? '');
    }
    return traces;
  }

  beforeAll(async () => {
    mock = await startMockUpstream();
    cluster = await startCluster({ nodes: 1 });
    key = await cluster.nodes[0]!.createKey();
    // The second node starts after the key exists (it loads the shared keys at start).
    await cluster.startNode();
    // Connections are still node-local (docs/storage.md): each node gets its own.
    for (const node of cluster.nodes) await node.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
    expect((await chatAs(cluster.nodes[1]!.url, key, 'openai/gpt-4o')).status).toBe(200);
  }, 180_000);

  afterAll(async () => {
    await cluster?.stop();
    await mock?.close();
  }, 60_000);

  it('a request served by either node is in both nodes\' request log and analytics within 2 s', async () => {
    const [a, b] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess];
    // The warm-up request through B (beforeAll) is logged first.
    const base = await until(async () => {
      const n = (await loggedTraces(a)).length;
      return n >= 1 ? n : undefined;
    }, 5_000);
    const traces = [...(await send(a, 3)), ...(await send(b, 3))];
    expect(traces.every((t) => t.length > 0)).toBe(true);
    for (const node of [a, b]) {
      const seen = await until(async () => {
        const logged = await loggedTraces(node);
        return traces.every((t) => logged.includes(t)) ? logged : undefined;
      }, 5_000);
      expect(seen.length).toBe(base + 6);
      const summary = (await node.manage('GET', '/api/usage/summary')).json;
      expect(summary.requests).toBe(base + 6);
    }
    // The lag itself: one more request through A, seen on B's log within 2 s of its reply.
    const [one] = await send(a, 1);
    const replied = Date.now();
    await until(async () => ((await loggedTraces(b)).includes(one!) ? true : undefined), 2_000);
    expect(Date.now() - replied).toBeLessThan(2_000);
  }, 60_000);

  it('PostgreSQL stopped: requests are served, rows wait on disk, and arrive once each when it is back, across a node restart', async () => {
    const [a, b] = cluster.nodes as [ClusterNodeProcess, ClusterNodeProcess];
    const before = await loggedTraces(b);
    // down() is a crash and the test server commits asynchronously (synchronous_commit=off): a checkpoint
    // first, so it does not forget commits it acknowledged.
    const client = new pg.Client({ connectionString: cluster.databaseUrl });
    await client.connect();
    await client.query('CHECKPOINT');
    await client.end();
    await cluster.pg.down();
    let during: string[];
    let stopped: string[];
    try {
      during = await send(a, 8);
      await until(async () => (queued(a) >= 8 ? true : undefined), 15_000);
      // B is stopped with its rows still queued: they are stored when it starts again.
      stopped = await send(b, 4);
      await until(async () => (queued(b) >= 4 ? true : undefined), 15_000);
      await b.stop();
      expect(queued(b)).toBe(4);
    } finally {
      await cluster.pg.up();
    }
    const after = await send(a, 3);
    const restarted = await cluster.startNode({ nodeId: b.nodeId, home: b.home });
    const all = [...before, ...during, ...stopped, ...after];
    const logged = await until(async () => {
      const t = await loggedTraces(restarted);
      return all.every((x) => t.includes(x)) ? t : undefined;
    }, 30_000);
    // Once each: no trace twice, nothing else.
    expect(logged.length).toBe(all.length);
    expect(new Set(logged).size).toBe(all.length);
    await until(async () => (queued(a) === 0 && queued(restarted) === 0 ? true : undefined), 10_000);
  }, 180_000);
});
