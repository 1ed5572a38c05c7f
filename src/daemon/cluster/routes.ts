import { performance } from 'node:perf_hooks';
import type { ClusterNode, ClusterReply } from '../../shared/cluster.js';
import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { isoTime, NO_CONTENT } from '../http/replies.js';
import { noContent, route, type RouteDef } from '../http/routes.js';
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

/** This node as the list shows it: alive by definition (it answers). */
function self(services: Services): ClusterNode {
  return { nodeId: services.nodeId, url: services.listen.url, version: services.version, lastSeenAt: new Date().toISOString(), healthy: true };
}

/**
 * Every node of the cluster (the registry, cluster/registry.ts), this one first and always healthy; on one
 * machine, this node alone.
 */
async function nodesView(services: Services): Promise<ClusterNode[]> {
  const me = self(services);
  if (!services.clusterNodes) return [me];
  const others = (await services.clusterNodes.nodes()).filter((n) => n.nodeId !== me.nodeId);
  return [me, ...others];
}

/** This daemon's place in a cluster; on one machine, itself alone on its SQLite file. */
export function clusterView(services: Services): ClusterReply {
  const shared = services.sharedDatabase;
  return {
    mode: shared ? 'cluster' : 'single',
    nodeId: services.nodeId,
    nodes: [self(services)],
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
    handler: async ({ services }): Promise<ClusterReply> => ({ ...clusterView(services), nodes: await nodesView(services) }),
  }),
  route({
    method: 'DELETE',
    path: '/api/cluster/nodes/:id',
    tier: 'management',
    tag: 'system',
    summary: 'Remove a node that is gone from the cluster list (a node still alive is refused: stop it first)',
    status: 204,
    reply: NO_CONTENT,
    handler: async ({ services, params }) => {
      const id = params.id ?? '';
      if (!services.clusterNodes) throw new RouterError(404, 'This router is not in cluster mode: it has no node list to remove from.');
      const node = (await services.clusterNodes.nodes()).find((n) => n.nodeId === id);
      if (!node) throw new RouterError(404, `No node '${id.slice(0, 80)}' is listed.`);
      if (id === services.nodeId || node.healthy) {
        throw new RouterError(409, `Node '${id}' is alive (seen ${node.lastSeenAt}); stop it first, then remove it once it is listed unhealthy.`, { code: 'node_alive' });
      }
      await services.clusterNodes.remove(id);
      return noContent();
    },
  }),
];
