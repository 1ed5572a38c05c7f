/**
 * N real daemons sharing one real Redis (the hot state), each on its own copy of one seeded state folder:
 * the same keys, connections and webhooks (ids and sealed secrets included), named node-a, node-b, ...
 * Enough for what travels through Redis (limits, live feed, webhook claims) without the shared PostgreSQL.
 */
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RedisServer, startRedis } from './redis.js';
import { type RouterProcess, startRouter } from './router-daemon.js';

export interface HotCluster {
  redis: RedisServer;
  nodes: RouterProcess[];
  stop(): Promise<void>;
}

export async function until<T>(probe: () => Promise<T | undefined | false> | T | undefined | false, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Seeds one state folder with `seed` (on a running daemon), copies it `n` times and starts the nodes on Redis. */
export async function startHotCluster(n: number, seed: (r: RouterProcess) => Promise<void>, env: Record<string, string> = {}): Promise<HotCluster> {
  const redis = await startRedis();
  const first = await startRouter({ keepHome: true, env });
  await seed(first);
  await first.stop();
  const homes = [first.home];
  for (let i = 1; i < n; i++) {
    const home = mkdtempSync(join(tmpdir(), 'router-e2e-node-'));
    cpSync(first.home, home, { recursive: true });
    homes.push(home);
  }
  const nodes = await Promise.all(
    homes.map((home, i) => startRouter({ home, env: { ...env, ROUTER_REDIS_URL: redis.url, ROUTER_NODE_ID: `node-${String.fromCharCode(97 + i)}` } })),
  );
  const metric = async (r: RouterProcess) => {
    const text = await (await fetch(`${r.url}/metrics`, { headers: { 'x-router-cli-token': r.cliToken } })).text();
    return text.split('\n').find((l) => l.startsWith('router_cluster_live_nodes'));
  };
  await until(async () => (await metric(nodes[0]!))?.endsWith(` ${n}`), 10_000, `${n} nodes live`);
  return {
    redis,
    nodes,
    async stop() {
      await Promise.all(nodes.map((r) => r.stop()));
      await redis.stop();
      for (const h of homes) rmSync(h, { recursive: true, force: true });
    },
  };
}
