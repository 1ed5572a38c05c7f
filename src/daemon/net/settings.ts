import { z } from 'zod';
import { proxyUrlProblem } from './outbound-proxy.js';
import { about } from '../settings/definitions.js';
import type { SettingsSection } from '../settings/registry.js';

/** A proxy URL: http://, https:// or socks5:// (socks5h:// and socks:// too), credentials allowed. */
export const proxyUrlSchema = z
  .string()
  .max(2000)
  .refine((u) => proxyUrlProblem(u) === null, { message: 'expected an http://, https:// or socks5:// proxy URL' });

/** The `outboundProxy` setting (CONTRACT; docs/operations.md "Outbound proxy"). */
export const outboundProxySettingsSchema = z
  .object({
    url: z.union([z.literal(''), proxyUrlSchema]).default('').describe("Proxy for every outbound call; '' = none (the environment's HTTPS_PROXY / HTTP_PROXY then apply)."),
    noProxy: z.array(z.string().trim().min(1).max(255)).max(200).default([]).describe('NO_PROXY-style exclusions for the proxies set here: hosts, .domains, IPs, CIDR ranges, host:port, `*`.'),
    perProvider: z.record(z.string().min(1).max(200), proxyUrlSchema.nullable()).default({}).describe('Per provider id: its own proxy URL, or null for a direct connection whatever `url` says.'),
  })
  .strict();

export type OutboundProxySettings = z.infer<typeof outboundProxySettingsSchema>;

/** What replies show in place of a proxy URL's password. */
const PASSWORD_MASK = '****';

/** A proxy URL as replies show it: the password (if any) replaced by `****`, the rest as written. */
export function maskProxyUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return url;
  }
  if (!parsed.password) return url;
  parsed.password = PASSWORD_MASK;
  return parsed.href.endsWith('/') && !url.endsWith('/') ? parsed.href.slice(0, -1) : parsed.href;
}

/** The setting as replies show it: every proxy URL's password masked. */
export function maskOutboundProxy(s: OutboundProxySettings): OutboundProxySettings {
  const perProvider: OutboundProxySettings['perProvider'] = {};
  for (const [id, url] of Object.entries(s.perProvider)) perProvider[id] = url === null ? null : maskProxyUrl(url);
  return { ...s, url: s.url ? maskProxyUrl(s.url) : '', perProvider };
}

/**
 * A PATCH that sends back what GET showed keeps the stored passwords: a URL equal to the masked form of the
 * stored one (same place in the setting) means "unchanged". Any other URL is taken as written.
 */
export function unmaskOutboundProxy(next: OutboundProxySettings, stored: OutboundProxySettings): OutboundProxySettings {
  const keep = (url: string, old: string | null | undefined): string => (old && url !== old && url === maskProxyUrl(old) ? old : url);
  const perProvider: OutboundProxySettings['perProvider'] = {};
  for (const [id, url] of Object.entries(next.perProvider)) perProvider[id] = url === null ? null : keep(url, stored.perProvider[id]);
  return { ...next, url: keep(next.url, stored.url), perProvider };
}

/** The `outboundProxy` settings section: stored sealed whole (a URL may carry a password), shown masked. */
export const outboundProxySettings: SettingsSection<OutboundProxySettings> = {
  key: 'outboundProxy',
  schema: outboundProxySettingsSchema
    .prefault({})
    .meta(about({ group: 'network', description: 'Outbound proxy for upstream, OAuth token and webhook calls: url (http://, https:// or socks5://), noProxy exclusions, perProvider overrides (docs/operations.md).' })),
  mask: maskOutboundProxy,
  // A password shown masked means the stored one.
  unmask: unmaskOutboundProxy,
  sealed: 'whole',
};

declare module '../settings/registry.js' {
  interface FeatureSettings {
    outboundProxy: OutboundProxySettings;
  }
}
