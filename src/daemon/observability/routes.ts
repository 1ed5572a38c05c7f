import { FastResponse } from 'srvx';
import { rawReply } from '../http/replies.js';
import { route, type RouteDef } from '../http/routes.js';

/** GET /metrics: the Prometheus text exposition of the daemon's metrics (docs/observability.md). */
export const observabilityRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/metrics',
    tier: 'metrics',
    tag: 'system',
    summary: 'Prometheus metrics (text exposition format 0.0.4)',
    reply: rawReply('text/plain'),
    handler: async ({ services }) => {
      const { text, contentType } = await services.metrics.scrape();
      return new FastResponse(text, { headers: { 'content-type': contentType, 'x-router-version': services.version } });
    },
  }),
];
