import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { route, type RouteDef } from '../http/routes.js';

const idParam = z.string().uuid();

/** Management view of a key's quota counters and limits. */
export const quotaRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/quotas/:keyId',
    tier: 'management',
    tag: 'keys',
    summary: "An API key's current quota counters and limits (daily requests, token limits, relay per-minute)",
    handler: ({ services, params }) => {
      const id = params.keyId ?? '';
      const snap = idParam.safeParse(id).success ? services.quotas.snapshot(id) : undefined;
      if (!snap) throw new RouterError(404, 'API key not found.');
      return snap;
    },
  }),
];
