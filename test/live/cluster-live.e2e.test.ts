/**
 * The live feed across a cluster (issue 29 item 4): a dashboard connected to any node sees the requests of
 * every node within 2 s. Three real daemons on one real Redis; the WebSockets are real clients (ws).
 */
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { type HotCluster, startHotCluster, until } from '../support/hot-cluster.js';
import { redisAvailable } from '../support/redis.js';
import { chatAs, type RouterProcess } from '../support/router-daemon.js';

const available = redisAvailable();

interface Watcher {
  frames: Array<Record<string, any>>;
  close(): void;
}

async function watch(r: RouterProcess): Promise<Watcher> {
  const ws = new WebSocket(`ws://127.0.0.1:${r.port}/api/live`, { headers: { 'x-router-cli-token': r.cliToken } });
  const frames: Array<Record<string, any>> = [];
  ws.on('message', (data) => frames.push(JSON.parse(String(data))));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('error', reject);
  });
  return { frames, close: () => ws.close() };
}

const requestsFor = (w: Watcher, model: string) => w.frames.filter((f) => f.type === 'request' && f.requestedModel === model);

describe.skipIf(!available.ok)(`live feed across three daemons on one Redis${available.ok ? '' : ` (skipped: ${available.reason})`}`, () => {
  let mock: MockUpstream;
  let cluster: HotCluster;
  let key = '';
  let a: RouterProcess;
  let b: RouterProcess;
  let c: RouterProcess;

  beforeAll(async () => {
    mock = await startMockUpstream();
    cluster = await startHotCluster(3, async (r) => {
      await r.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
      key = await r.createKey();
    });
    [a, b, c] = cluster.nodes as [RouterProcess, RouterProcess, RouterProcess];
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await mock?.close();
  });

  it("a request through node A shows on node B's and node C's /api/live within 2 s, once, named by node", async () => {
    const onB = await watch(b);
    const onC = await watch(c);
    try {
      // The watchers' announcements reach A (pub/sub) before the request is sent.
      await new Promise((r) => setTimeout(r, 300));
      const sent = Date.now();
      expect((await chatAs(a.url, key, 'openai/gpt-4o')).status).toBe(200);
      await until(() => requestsFor(onB, 'openai/gpt-4o').length > 0 && requestsFor(onC, 'openai/gpt-4o').length > 0, 2_000, 'the frame on B and C');
      expect(Date.now() - sent).toBeLessThan(2_000);
      const frame = requestsFor(onB, 'openai/gpt-4o')[0]!;
      expect(frame).toMatchObject({ type: 'request', nodeId: 'node-a', status: 200, provider: 'openai', model: 'gpt-4o' });
      expect(typeof frame.traceId).toBe('string');
      // B's own requests are shown once (not echoed back through Redis); C's reach B too.
      expect((await chatAs(b.url, key, 'openai/gpt-4o-mini')).status).toBe(200);
      expect((await chatAs(c.url, key, 'openai/gpt-4.1')).status).toBe(200);
      await until(() => requestsFor(onB, 'openai/gpt-4.1').length > 0 && requestsFor(onB, 'openai/gpt-4o-mini').length > 0, 2_000, "C's frame on B");
      await new Promise((r) => setTimeout(r, 500));
      expect(requestsFor(onB, 'openai/gpt-4o')).toHaveLength(1);
      expect(requestsFor(onB, 'openai/gpt-4o-mini')).toHaveLength(1);
      expect(requestsFor(onB, 'openai/gpt-4o-mini')[0]!.nodeId).toBe('node-b');
      expect(requestsFor(onB, 'openai/gpt-4.1')[0]!.nodeId).toBe('node-c');
      // Status frames stay each node's own.
      expect(onB.frames.find((f) => f.type === 'status')).toBeDefined();
    } finally {
      onB.close();
      onC.close();
    }
  });

  it('publishes nothing while no node has a live client', async () => {
    const spy = new Redis(cluster.redis.url);
    const seen: string[] = [];
    try {
      await spy.subscribe('router:live');
      spy.on('message', (_channel, payload: string) => seen.push(payload));
      // The last watch announcement (closed clients above) expires after 5 s.
      await new Promise((r) => setTimeout(r, 5_500));
      seen.length = 0;
      for (const r of [a, b, c]) expect((await chatAs(r.url, key, 'openai/gpt-4o')).status).toBe(200);
      await new Promise((r) => setTimeout(r, 500));
      expect(seen).toEqual([]);
      // A client connecting anywhere turns the relay on again.
      const onA = await watch(a);
      try {
        await until(() => seen.some((p) => JSON.parse(p).kind === 'watch'), 2_000, 'the watch announcement');
        expect((await chatAs(c.url, key, 'openai/gpt-4o')).status).toBe(200);
        await until(() => requestsFor(onA, 'openai/gpt-4o').length > 0, 2_000, "C's frame on A");
      } finally {
        onA.close();
      }
    } finally {
      spy.disconnect();
    }
  }, 20_000);
});
