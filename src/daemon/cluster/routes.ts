import { performance } from 'node:perf_hooks';
import type { ClusterReply } from '../../shared/cluster.js';
import { route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';

/** The embedded database answers a trivial query: healthy, and how long it took. */
function sqliteHealth(services: Services): ClusterReply['database'] {
  const start = performance.now();
  try {
    services.db.prepare('SELECT 1').get();
    return { kind: 'sqlite', healthy: true, latencyMs: Math.round((performance.now() - start) * 1000) / 1000 };
  } catch {
    return { kind: 'sqlite', healthy: false, latencyMs: null };
  }
}

/** This daemon's place in a cluster; on one machine, itself alone on its SQLite file. */
export function clusterView(services: Services): ClusterReply {
  return {
    mode: 'single',
    nodeId: services.nodeId,
    nodes: [{ nodeId: services.nodeId, url: services.listen.url, version: services.version, lastSeenAt: new Date().toISOString(), healthy: true }],
    database: sqliteHealth(services),
    redis: redisView(services),
  };
}

/** The hot state's health as the reply shows it (no I/O: the Redis adapter's heartbeat keeps it current). */
function redisView(services: Services): ClusterReply['redis'] {
  const h = services.hot.health();
  if (!h.configured) return { configured: false, healthy: false, latencyMs: null };
  return { configured: true, healthy: h.healthy, latencyMs: h.latencyMs, ...(h.url ? { url: h.url } : {}) };
}

export const clusterRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/cluster',
    tier: 'management',
    tag: 'system',
    summary: 'Cluster mode: this node, the nodes sharing its state, database and Redis health (passwords masked)',
    handler: ({ services }): ClusterReply => clusterView(services),
  }),
];
