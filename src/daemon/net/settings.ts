import { z } from 'zod';
import { proxyUrlProblem } from './outbound-proxy.js';

/** A proxy URL: http://, https:// or socks5:// (socks5h:// and socks:// too), credentials allowed. */
export const proxyUrlSchema = z
  .string()
  .max(2000)
  .refine((u) => proxyUrlProblem(u) === null, { message: 'expected an http://, https:// or socks5:// proxy URL' });

/** The `outboundProxy` setting (CONTRACT; docs/operations.md "Outbound proxy"). */
export const outboundProxySettingsSchema = z
  .object({
    /** Proxy for every outbound call; '' = none (the environment's HTTPS_PROXY / HTTP_PROXY then apply). */
    url: z.union([z.literal(''), proxyUrlSchema]).default(''),
    /** NO_PROXY-style exclusions for the proxies set here: hosts, .domains, IPs, CIDR ranges, host:port, `*`. */
    noProxy: z.array(z.string().trim().min(1).max(255)).max(200).default([]),
    /** Per provider id: its own proxy URL, or null for a direct connection whatever `url` says. */
    perProvider: z.record(z.string().min(1).max(200), proxyUrlSchema.nullable()).default({}),
  })
  .strict();
