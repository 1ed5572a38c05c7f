import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { isoTime } from '../http/replies.js';
import { route, type RouteDef } from '../http/routes.js';
import { tokenLimit } from '../keys/routes.js';
import type { QuotaSnapshot } from './index.js';

const quotaReply = z.object({
  keyId: z.string(),
  now: isoTime,
  requests: z.object({
    period: z.literal('day'),
    used: z.number(),
    limit: z.number(),
    source: z.enum(['key', 'default']),
    remaining: z.number().nullable(),
    resetsAt: isoTime,
  }),
  tokens: z.array(tokenLimit.extend({ used: z.number(), remaining: z.number().nullable(), resetsAt: isoTime })),
  relay: z.object({ perKeyPerMinute: z.number(), remaining: z.number().nullable() }),
  budget: z
    .object({ period: z.enum(['day', 'month']), usd: z.number(), usedUsd: z.number(), remainingUsd: z.number(), resetsAt: isoTime })
    .nullable(),
}) satisfies z.ZodType<QuotaSnapshot>;

const idParam = z.string().uuid();

/** Management view of a key's quota counters and limits. */
export const quotaRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/quotas/:keyId',
    tier: 'management',
    tag: 'keys',
    summary: "An API key's current quota counters and limits (daily requests, token limits, relay per-minute, USD budget)",
    reply: quotaReply,
    handler: async ({ services, params }) => {
      const id = params.keyId ?? '';
      const snap = idParam.safeParse(id).success ? await services.quotas.current(id) : undefined;
      if (!snap) throw new RouterError(404, 'API key not found.');
      return snap;
    },
  }),
];
