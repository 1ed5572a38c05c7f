/**
 * The load balancer example of docs/cluster.md (docs/examples/cluster/haproxy.cfg), run for real: HAProxy
 * in front of three real router nodes on one PostgreSQL and one Redis. API calls are spread over the nodes,
 * a browser's cookie pins it to one, the live WebSocket and a streamed reply pass through unbuffered.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { freePort, REPO_ROOT } from '../support/cli.js';
import { clusterUnavailable, startCluster, type ClusterUnderTest } from '../support/cluster.js';
import { until } from '../support/hot-cluster.js';

const EXAMPLE = join(REPO_ROOT, 'docs', 'examples', 'cluster', 'haproxy.cfg');
const HAPROXY = process.env.HAPROXY_BIN ?? 'haproxy';
const haproxyMissing = spawnSync(HAPROXY, ['-v']).status === 0 ? undefined : 'haproxy not found (Debian package haproxy)';
const missing = haproxyMissing ?? clusterUnavailable({ redis: true });

describe.skipIf(missing)(`the HAProxy example in front of three nodes${missing ? ` (skipped: ${missing})` : ''}`, () => {
  let cluster: ClusterUnderTest;
  let mock: MockUpstream;
  let lb: ChildProcess;
  let lbUrl = '';
  let manageKey = '';

  const viaLb = (path: string, init: RequestInit = {}) =>
    fetch(`${lbUrl}${path}`, { ...init, headers: { authorization: `Bearer ${manageKey}`, 'content-type': 'application/json', ...(init.headers as Record<string, string>) } });

  beforeAll(async () => {
    mock = await startMockUpstream();
    mock.handle((req) => (req.model === 'gpt-4o-mini' ? { type: 'slow-stream', intervalMs: 250, then: { type: 'text', chunks: 6 } } : undefined));
    cluster = await startCluster({ nodes: 3, redis: true });
    for (const n of cluster.nodes) await n.addConnection({ provider: 'openai', apiKey: 'sk-up', providerSpecificData: { baseUrl: mock.openaiBase } });
    const made = await cluster.nodes[0]!.manage('POST', '/api/keys', { name: 'ops', scopes: ['manage', 'proxy'] });
    expect(made.status).toBe(201);
    manageKey = made.json.key;
    // The example as shipped, with this machine's addresses in place of 10.0.0.1x and *:8080.
    const port = await freePort();
    let cfg = readFileSync(EXAMPLE, 'utf8').replace('bind *:8080', `bind 127.0.0.1:${port}`);
    cluster.nodes.forEach((n, i) => {
      cfg = cfg.replace(`10.0.0.1${i + 1}:20128`, `127.0.0.1:${n.port}`);
    });
    const file = join(cluster.nodes[0]!.home, 'haproxy.cfg');
    writeFileSync(file, cfg);
    lb = spawn(HAPROXY, ['-f', file, '-db'], { stdio: 'ignore' });
    lbUrl = `http://127.0.0.1:${port}`;
    await until(async () => (await fetch(`${lbUrl}/api/health`).catch(() => undefined))?.status === 200, 10_000, 'haproxy');
    for (const n of cluster.nodes) await until(async () => (await fetch(`${n.url}/api/keys`, { headers: { authorization: `Bearer ${manageKey}` } })).status === 200, 2_000, 'the key on every node');
  }, 180_000);

  afterAll(async () => {
    lb?.kill('SIGTERM');
    await cluster?.stop();
    await mock?.close();
  });

  it('the shipped file passes haproxy -c', () => {
    const r = spawnSync(HAPROXY, ['-c', '-f', EXAMPLE], { encoding: 'utf8' });
    expect(r.status, r.stderr + r.stdout).toBe(0);
    expect(`${r.stdout}${r.stderr}`).not.toContain('WARNING');
  });

  it('spreads API calls over the three nodes; a cookie pins a browser to one', async () => {
    const seen = new Set<string>();
    await until(
      async () => {
        const r = await viaLb('/api/cluster');
        seen.add(((await r.json()) as { nodeId: string }).nodeId);
        return seen.size === 3;
      },
      15_000,
      'all three nodes behind the balancer',
    );
    const first = await viaLb('/api/cluster');
    const cookie = first.headers.get('set-cookie')?.split(';')[0];
    expect(cookie).toMatch(/^ROUTER_NODE=r[123]$/);
    const pinned = ((await first.json()) as { nodeId: string }).nodeId;
    for (let i = 0; i < 6; i++) {
      const r = await viaLb('/api/cluster', { headers: { cookie: cookie! } });
      expect(((await r.json()) as { nodeId: string }).nodeId).toBe(pinned);
    }
  }, 30_000);

  it('the live WebSocket opens through the balancer and shows requests of every node', async () => {
    const ws = new WebSocket(`${lbUrl.replace('http', 'ws')}/api/live`, { headers: { authorization: `Bearer ${manageKey}` } });
    const frames: any[] = [];
    ws.on('message', (d) => frames.push(JSON.parse(String(d))));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    try {
      await until(() => frames.some((f) => f.type === 'status'), 3_000, 'a status frame');
      await new Promise((r) => setTimeout(r, 300));
      for (const n of cluster.nodes) {
        const r = await fetch(`${n.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${manageKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
        });
        expect(r.status).toBe(200);
      }
      await until(() => new Set(frames.filter((f) => f.type === 'request').map((f) => f.nodeId)).size === 3, 2_000, 'request frames of all three nodes');
    } finally {
      ws.close();
    }
  }, 30_000);

  it('a streamed reply passes through as it comes (not buffered)', async () => {
    const started = Date.now();
    const res = await viaLb('/v1/chat/completions', { method: 'POST', body: JSON.stringify({ model: 'openai/gpt-4o-mini', stream: true, messages: [{ role: 'user', content: 'hi' }] }) });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const arrivals: number[] = [];
    let text = '';
    const decoder = new TextDecoder();
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      const part = decoder.decode(chunk, { stream: true });
      if (part.includes('data:')) arrivals.push(Date.now() - started);
      text += part;
    }
    expect(text).toContain('[DONE]');
    // Six chunks 250 ms apart: the first arrives long before the last.
    expect(arrivals.length).toBeGreaterThan(2);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThan(800);
  }, 30_000);
});
