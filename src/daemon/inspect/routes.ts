import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { isoTime } from '../http/replies.js';
import { route, type RouteDef } from '../http/routes.js';
import type { TraceDetail } from './capture.js';

export const exchangeSide = z.object({ headers: z.record(z.string(), z.string()), body: z.string().nullable(), truncated: z.boolean().optional() });

const traceReply = z.object({
  traceId: z.string(),
  at: isoTime,
  client: z.object({ request: exchangeSide, response: exchangeSide }),
  upstream: z.object({ url: z.string().optional(), request: exchangeSide, response: exchangeSide }),
  notes: z.record(z.string(), z.unknown()).optional(),
}) satisfies z.ZodType<TraceDetail>;

/** The traffic inspector's detail route: loopback only (spec, Authentication: the traffic inspector is a local-only route). */
export const inspectRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/logs/traces/:traceId',
    tier: 'local',
    tag: 'inspect',
    summary: 'Headers and bodies of one captured request, client and upstream side by side (setting captureTraffic)',
    reply: traceReply,
    handler: ({ services, params }) => {
      const detail = services.capture.get(params.traceId ?? '');
      if (detail) return detail;
      throw new RouterError(
        404,
        services.settings.get().captureTraffic
          ? 'This request was not captured (only the last 200 are kept).'
          : 'Traffic capture is off: set captureTraffic to true (router settings set captureTraffic true).',
      );
    },
  }),
];
