import { FastResponse } from 'srvx';
import { route, json, type RouteDef } from '../http/routes.js';
import { buildOpenApi } from '../http/openapi.js';
import { SHUTDOWN_GRACE_MS, type HealthReply, type RestartReply, type ShutdownReply, type StatusReply } from '../../shared/wire.js';
import { hostFacts } from './host.js';
import { clusterView } from '../cluster/routes.js';

let openApiCache: { routes: readonly RouteDef[]; doc: string } | undefined;

/** Health, the OpenAPI document, daemon status and shutdown. */
export const systemRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/health',
    tier: 'public',
    tag: 'system',
    summary: 'Liveness check',
    handler: ({ services }): HealthReply => ({ status: 'ok', version: services.version }),
  }),
  route({
    method: 'GET',
    path: '/api/openapi.json',
    tier: 'public',
    tag: 'system',
    summary: 'The OpenAPI 3.1.0 description of every route',
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
