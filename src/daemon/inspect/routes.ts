import { RouterError } from '../http/errors.js';
import { route, type RouteDef } from '../http/routes.js';

/** The traffic inspector's detail route: loopback only (spec, Authentication: the traffic inspector is a local-only route). */
export const inspectRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/logs/traces/:traceId',
    tier: 'local',
    tag: 'inspect',
    summary: 'Headers and bodies of one captured request, client and upstream side by side (setting captureTraffic)',
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
