import { z } from 'zod';
import { route, type RouteDef } from '../http/routes.js';
import { probeTarget, type ProxyProbeResult } from './probe.js';
import { proxyUrlSchema } from './settings.js';

const probeBody = z
  .object({
    /** The proxy to try; without it, the configured one (settings, then the environment) for `target`. */
    url: proxyUrlSchema.optional(),
    /** The URL to reach. */
    target: z.string().max(2000).url().refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL'),
  })
  .strict();

const probeReply = z.object({
  ok: z.boolean(),
  status: z.number().optional(),
  latencyMs: z.number().optional(),
  error: z.string().optional(),
  via: z.string(),
}) satisfies z.ZodType<ProxyProbeResult>;

/** Outbound proxy routes. */
export const netRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/settings/proxy/test',
    tier: 'management',
    tag: 'settings',
    summary: 'Whether a URL is reachable through the outbound proxy (status, latency, error in words)',
    body: probeBody,
    reply: probeReply,
    handler: ({ body }) => probeTarget(body.target, body.url),
  }),
];
