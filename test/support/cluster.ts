/**
 * A real cluster for e2e tests (issue 29): N daemon processes (dist/daemon/entry.js, each with a fresh state
 * folder and its own node id), one real PostgreSQL 15 (a fresh database per cluster), optionally one real
 * Redis 7, all nodes given the same ROUTER_SECRET_KEY, ROUTER_DATABASE_URL and ROUTER_REDIS_URL.
 *
 *   const cluster = await startCluster({ nodes: 3, redis: true });
 *   const [a, b, c] = cluster.nodes;
 *   ...
 *   await cluster.stop();
 *
 * Run `npm run build` first (the daemons run dist/). Suites skip, saying why, when `clusterUnavailable()`.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { postgresUnavailable, startPostgres, type PostgresServer } from './postgres.js';
import { redisAvailable, startRedis, type RedisServer } from './redis.js';
import { startRouter, type RouterProcess } from './router-daemon.js';

/** Why a cluster cannot be started here (PostgreSQL or Redis missing), or undefined. */
export function clusterUnavailable(opts: { redis?: boolean } = {}): string | undefined {
  const pg = postgresUnavailable();
  if (pg) return pg;
  if (opts.redis) {
    const r = redisAvailable();
    if (!r.ok) return r.reason;
  }
  return undefined;
}

export interface ClusterNodeProcess extends RouterProcess {
  nodeId: string;
  /** Kills the process at once (SIGKILL: a crash, in-flight requests lost); its state folder is kept. */
  kill(): Promise<void>;
}

export interface ClusterUnderTest {
  pg: PostgresServer;
  redis?: RedisServer;
  /** The cluster's database URL (every node's ROUTER_DATABASE_URL). */
  databaseUrl: string;
  /** 64 hex characters: every node's ROUTER_SECRET_KEY. */
  secretKey: string;
  /** The nodes started so far, in order (`node-1`, `node-2`, ...). */
  nodes: ClusterNodeProcess[];
  /** The environment a node of this cluster is started with. */
  env(nodeId: string): Record<string, string>;
  /** Starts one more node (or restarts a stopped one: same id, same state folder when `home` is given). */
  startNode(opts?: { nodeId?: string; home?: string; env?: Record<string, string> }): Promise<ClusterNodeProcess>;
  /** Stops every node still running, then the servers, and deletes the state folders. */
  stop(): Promise<void>;
}

export interface ClusterOptions {
  /** Daemons to start (default 3). */
  nodes?: number;
  /** Start a Redis too and give its URL to every node. */
  redis?: boolean;
  /** Reuse a running PostgreSQL (a fresh database is created on it); default: start one, stopped by stop(). */
  pg?: PostgresServer;
  /** Extra environment for every node. */
  env?: Record<string, string>;
  /** The database URL's user part, e.g. 'postgres:s3cret' (trust authentication ignores the password). */
  userInfo?: string;
}

export async function startCluster(opts: ClusterOptions = {}): Promise<ClusterUnderTest> {
  const pg = opts.pg ?? (await startPostgres());
  const redis = opts.redis ? await startRedis() : undefined;
  const plainUrl = await pg.createDatabase();
  const databaseUrl = opts.userInfo ? plainUrl.replace('postgres://postgres@', `postgres://${opts.userInfo}@`) : plainUrl;
  const secretKey = randomBytes(32).toString('hex');
  const homes = new Set<string>();
  const nodes: ClusterNodeProcess[] = [];
  let counter = 0;
  const env = (nodeId: string): Record<string, string> => ({
    ROUTER_DATABASE_URL: databaseUrl,
    ROUTER_SECRET_KEY: secretKey,
    ROUTER_NODE_ID: nodeId,
    ...(redis ? { ROUTER_REDIS_URL: redis.url } : {}),
    ...opts.env,
  });
  const startNode: ClusterUnderTest['startNode'] = async (o = {}) => {
    const nodeId = o.nodeId ?? `node-${++counter}`;
    const proc = await startRouter({ home: o.home, keepHome: true, env: { ...env(nodeId), ...o.env } });
    homes.add(proc.home);
    let dead = false;
    const node: ClusterNodeProcess = {
      ...proc,
      nodeId,
      async stop() {
        if (dead) return;
        dead = true;
        await proc.stop();
      },
      async kill() {
        if (dead) return;
        dead = true;
        process.kill(proc.pid, 'SIGKILL');
        const end = Date.now() + 10_000;
        while (Date.now() < end) {
          try {
            process.kill(proc.pid, 0);
          } catch {
            return;
          }
          await new Promise((r) => setTimeout(r, 20));
        }
      },
    };
    nodes.push(node);
    return node;
  };
  const stop = async () => {
    await Promise.all(nodes.map((n) => n.stop().catch(() => undefined)));
    await redis?.stop();
    if (!opts.pg) await pg.stop();
    for (const h of homes) rmSync(h, { recursive: true, force: true });
  };
  try {
    // One node first: it migrates the database (the others would wait on the lock anyway).
    const count = opts.nodes ?? 3;
    if (count > 0) await startNode();
    await Promise.all(Array.from({ length: count - 1 }, () => startNode()));
    nodes.sort((x, y) => x.nodeId.localeCompare(y.nodeId, undefined, { numeric: true }));
  } catch (err) {
    await stop();
    throw err;
  }
  return { pg, redis, databaseUrl, secretKey, nodes, env, startNode, stop };
}
