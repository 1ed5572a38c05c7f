/**
 * Webhooks in a cluster (issue 29 item 4: "each webhook event is delivered once, by one node"): three real
 * daemons on one real Redis, one receiver. An event several nodes emit for the same happening (a shared
 * circuit recovering on every node) is delivered once; events of one node's own requests are delivered
 * once each, by that node.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { type HotCluster, startHotCluster, until } from '../support/hot-cluster.js';
import { redisAvailable } from '../support/redis.js';
import { chatAs, type RouterProcess } from '../support/router-daemon.js';

const available = redisAvailable();

interface Received {
  event: string;
  timestamp: string;
  data: Record<string, any>;
}

describe.skipIf(!available.ok)(`webhooks across three daemons on one Redis${available.ok ? '' : ` (skipped: ${available.reason})`}`, () => {
  let mock: MockUpstream;
  let cluster: HotCluster;
  let receiver: Server;
  const received: Received[] = [];
  let key = '';
  let nodes: RouterProcess[] = [];
  let failing = false;
  let slow = false;

  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let body = '';
      req.on('data', (c) => (body += c));
      req.on('end', () => {
        received.push(JSON.parse(body));
        res.writeHead(204).end();
      });
    });
    await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
    const hookUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
    mock = await startMockUpstream();
    mock.handle((req) => {
      if (req.model !== 'gpt-4o-mini') return undefined;
      if (failing) return { type: 'status', status: 500, message: 'upstream broke' };
      // While recovering, each probe stays in flight long enough for every node's probe to start.
      return slow ? { type: 'delay', ms: 400 } : undefined;
    });
    cluster = await startHotCluster(3, async (r) => {
      expect((await r.manage('PATCH', '/api/settings', { allowPrivateWebhookDestinations: true, breakerFailureThreshold: 2, breakerCooldownMs: 1_500 })).status).toBe(200);
      await r.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
      key = await r.createKey();
      const hook = await r.manage('POST', '/api/webhooks', { url: hookUrl, events: ['provider.recovered', 'request.completed'] });
      expect(hook.status, JSON.stringify(hook.json)).toBe(201);
    });
    nodes = cluster.nodes;
  }, 120_000);

  afterAll(async () => {
    await cluster?.stop();
    await mock?.close();
    await new Promise((r) => receiver?.close(r));
  });

  it('a circuit recovering on all three nodes is announced once', async () => {
    const [a, b, c] = nodes as [RouterProcess, RouterProcess, RouterProcess];
    failing = true;
    for (let i = 0; i < 3; i++) await chatAs(a.url, key, 'openai/gpt-4o-mini');
    // The open circuit reaches the other nodes (pub/sub), with the streak's start.
    for (const r of [b, c]) {
      await until(async () => ((await r.manage('GET', '/api/resilience')).json.breakers as any[]).some((x) => x.state === 'open'), 2_000, 'the open circuit on every node');
    }
    failing = false;
    slow = true;
    await new Promise((r) => setTimeout(r, 1_700)); // the circuit's cooldown passes on every node
    const replies = await Promise.all([a, b, c].map((r) => chatAs(r.url, key, 'openai/gpt-4o-mini')));
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200]);
    slow = false;
    await until(() => received.some((e) => e.event === 'provider.recovered'), 5_000, 'the recovery event');
    await new Promise((r) => setTimeout(r, 1_500)); // time for any duplicate to arrive
    const recovered = received.filter((e) => e.event === 'provider.recovered');
    expect(recovered, JSON.stringify(recovered)).toHaveLength(1);
    expect(recovered[0]!.data).toMatchObject({ provider: 'openai', circuit_state: 'closed', previous_state: 'half_open' });
    expect(recovered[0]).not.toHaveProperty('once');
  }, 30_000);

  it("each request's own event is delivered once, by the node that served it", async () => {
    received.length = 0;
    const replies = await Promise.all(Array.from({ length: 30 }, (_, i) => chatAs(nodes[i % 3]!.url, key, 'openai/gpt-4o')));
    expect(replies.every((r) => r.status === 200)).toBe(true);
    const completed = () => received.filter((e) => e.event === 'request.completed' && e.data.model === 'openai/gpt-4o');
    await until(() => completed().length >= 30, 10_000, '30 request.completed deliveries');
    await new Promise((r) => setTimeout(r, 1_000));
    expect(completed()).toHaveLength(30);
    expect(new Set(completed().map((e) => e.data.trace_id)).size).toBe(30);
  }, 30_000);
});
