import { performance } from 'node:perf_hooks';
import type { ClusterReply } from '../../shared/cluster.js';
import { z } from 'zod';
import { isoTime } from '../http/replies.js';
import { route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import type { SharedDatabase } from './database.js';
import { localModuleNames, sharedModuleNames } from './shared-modules.js';

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

/** The shared database's health (cluster mode): no I/O, the periodic probe keeps it current. */
function sharedHealth(shared: SharedDatabase): ClusterReply['database'] {
  const h = shared.health();
  return { kind: 'postgres', healthy: h.healthy, latencyMs: h.latencyMs, url: shared.url, sharedModules: sharedModuleNames(), localModules: localModuleNames() };
}

/** This daemon's place in a cluster; on one machine, itself alone on its SQLite file. */
export function clusterView(services: Services): ClusterReply {
  const shared = services.sharedDatabase;
  return {
    mode: shared ? 'cluster' : 'single',
    nodeId: services.nodeId,
    nodes: [{ nodeId: services.nodeId, url: services.listen.url, version: services.version, lastSeenAt: new Date().toISOString(), healthy: true }],
    database: shared ? sharedHealth(shared) : sqliteHealth(services),
    redis: redisView(services),
  };
}

/** The hot state's health as the reply shows it (no I/O: the Redis adapter's heartbeat keeps it current). */
function redisView(services: Services): ClusterReply['redis'] {
  const h = services.hot.health();
  if (!h.configured) return { configured: false, healthy: false, latencyMs: null };
  return { configured: true, healthy: h.healthy, latencyMs: h.latencyMs, ...(h.url ? { url: h.url } : {}) };
}

const clusterReply = z.object({
  mode: z.enum(['single', 'cluster']),
  nodeId: z.string(),
  nodes: z.array(z.object({ nodeId: z.string(), url: z.string(), version: z.string(), lastSeenAt: isoTime, healthy: z.boolean() })),
  database: z.object({
    kind: z.enum(['sqlite', 'postgres']),
    healthy: z.boolean(),
    latencyMs: z.number().nullable(),
    url: z.string().optional(),
    sharedModules: z.array(z.string()).optional(),
    localModules: z.array(z.string()).optional(),
  }),
  redis: z.object({ configured: z.boolean(), healthy: z.boolean(), latencyMs: z.number().nullable(), url: z.string().optional() }),
}) satisfies z.ZodType<ClusterReply>;

export const clusterRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/cluster',
    tier: 'management',
    tag: 'system',
    summary: 'Cluster mode: this node, the nodes sharing its state, database and Redis health (passwords masked)',
    reply: clusterReply,
    handler: ({ services }): ClusterReply => clusterView(services),
  }),
];
