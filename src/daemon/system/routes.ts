import { FastResponse } from 'srvx';
import { z } from 'zod';
import { route, json, type RouteDef } from '../http/routes.js';
import { buildOpenApi } from '../http/openapi.js';
import { SHUTDOWN_GRACE_MS, type HealthReply, type RestartReply, type ShutdownReply, type StatusReply } from '../../shared/wire.js';
import { hostFacts } from './host.js';
import { clusterView } from '../cluster/routes.js';

const healthReply = z.object({ status: z.literal('ok'), version: z.string() }) satisfies z.ZodType<HealthReply>;

/** The OpenAPI document: its parts at the top level (each operation is described by the spec itself). */
const openApiReply = z.object({
  openapi: z.literal('3.1.0'),
  info: z.object({ title: z.string(), version: z.string(), description: z.string() }),
  servers: z.array(z.object({ url: z.string() })),
  paths: z.record(z.string(), z.record(z.string(), z.record(z.string(), z.unknown()))),
  components: z.object({ schemas: z.record(z.string(), z.unknown()), securitySchemes: z.record(z.string(), z.record(z.string(), z.unknown())) }),
});

const statusReply = z.object({
  running: z.boolean(),
  pid: z.number().nullable(),
  url: z.string().nullable(),
  version: z.string().nullable(),
  uptimeSeconds: z.number().nullable(),
  home: z.string().nullable(),
  mode: z.enum(['single', 'cluster']).optional(),
  nodeId: z.string().optional(),
  host: z
    .object({
      node: z.string(),
      platform: z.string(),
      arch: z.string(),
      database: z.object({ path: z.string(), sizeBytes: z.number() }),
      dataFolder: z.string(),
      uptimeSeconds: z.number(),
      listening: z.array(z.object({ host: z.string(), port: z.number(), url: z.string() })),
    })
    .optional(),
}) satisfies z.ZodType<StatusReply>;

const restartReply = z.object({ ok: z.literal(true), pid: z.number(), restarting: z.literal(true) }) satisfies z.ZodType<RestartReply>;
const shutdownReply = z.object({
  ok: z.literal(true),
  pid: z.number(),
  inFlight: z.number(),
  openStreams: z.number(),
  graceMs: z.number(),
}) satisfies z.ZodType<ShutdownReply>;

let openApiCache: { routes: readonly RouteDef[]; doc: string } | undefined;

/** Health, the OpenAPI document, daemon status and shutdown. */
export const systemRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/health',
    tier: 'public',
    tag: 'system',
    summary: 'Liveness check',
    reply: healthReply,
    handler: ({ services }): HealthReply => ({ status: 'ok', version: services.version }),
  }),
  route({
    method: 'GET',
    path: '/api/openapi.json',
    tier: 'public',
    tag: 'system',
    summary: 'The OpenAPI 3.1.0 description of every route',
    reply: openApiReply,
    handler: ({ services }) => {
      if (openApiCache?.routes !== services.routeTable) {
        openApiCache = { routes: services.routeTable, doc: JSON.stringify(buildOpenApi(services.routeTable, services.version)) };
      }
      return new FastResponse(openApiCache.doc, { headers: { 'content-type': 'application/json; charset=utf-8', 'x-router-version': services.version } });
    },
  }),
  route({
    method: 'GET',
    path: '/api/system/status',
    tier: 'management',
    tag: 'system',
    summary: 'Daemon status: pid, URL, version, uptime, state folder, and host facts (Node, platform, database, listening addresses)',
    reply: statusReply,
    handler: ({ services }): StatusReply => ({
      running: true,
      pid: process.pid,
      url: services.listen.url,
      version: services.version,
      uptimeSeconds: Math.floor((Date.now() - services.startedAt) / 1000),
      home: services.paths.home,
      mode: clusterView(services).mode,
      nodeId: services.nodeId,
      host: hostFacts(services),
    }),
  }),
  route({
    method: 'POST',
    path: '/api/system/restart',
    tier: 'local',
    tag: 'system',
    summary: 'Restart: answer, stop gracefully, then start a new daemon process on the same address and state folder',
    status: 202,
    reply: restartReply,
    handler: ({ services }) => {
      services.requestRestart('restart route');
      const reply: RestartReply = { ok: true, pid: process.pid, restarting: true };
      return json(202, reply);
    },
  }),
  route({
    method: 'POST',
    path: '/api/system/shutdown',
    tier: 'local',
    tag: 'system',
    summary: 'Graceful shutdown: stop accepting, finish in-flight requests, close the database',
    status: 202,
    reply: shutdownReply,
    handler: ({ services }) => {
      // Answer first, then shut down, so the caller sees the acknowledgement.
      setTimeout(() => services.requestShutdown('shutdown route'), 20);
      const reply: ShutdownReply = {
        ok: true,
        pid: process.pid,
        inFlight: services.usage.inflight.count,
        openStreams: services.usage.inflight.openStreams(),
        graceMs: SHUTDOWN_GRACE_MS,
      };
      return json(202, reply);
    },
  }),
];
