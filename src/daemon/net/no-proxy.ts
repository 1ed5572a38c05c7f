import ipaddr from 'ipaddr.js';

/**
 * `NO_PROXY`-style exclusions, as curl and most tools read them: a list of entries separated by commas or
 * spaces, each one of
 * - `*`: every host (no proxy at all);
 * - a host name, optionally with a leading `.` or `*.`: that host and every subdomain of it
 *   (`example.com` matches `example.com` and `api.example.com`);
 * - an IP address or a CIDR range (`10.0.0.0/8`, `::1`);
 * - any of these followed by `:port`: only that port.
 * Matching is case-insensitive; anything unparsable never matches.
 */
export type NoProxyMatcher = (host: string, port: number) => boolean;

interface Entry {
  port?: number;
  any?: true;
  suffix?: string;
  range?: [ipaddr.IPv4 | ipaddr.IPv6, number];
}

function parseEntry(raw: string): Entry | undefined {
  let text = raw.trim().toLowerCase();
  if (!text) return undefined;
  if (text === '*') return { any: true };
  let port: number | undefined;
  // host:port, [v6]:port; a bare IPv6 address has more than one colon and no port.
  const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(text) ?? (text.split(':').length === 2 ? /^([^:]+):(\d+)$/.exec(text) : null);
  if (m) {
    text = m[1]!;
    if (m[2]) port = Number(m[2]);
  }
  if (text.includes('/')) {
    try {
      return { port, range: ipaddr.parseCIDR(text) };
    } catch {
      return undefined;
    }
  }
  if (ipaddr.isValid(text)) {
    const addr = ipaddr.parse(text);
    return { port, range: [addr, addr.kind() === 'ipv4' ? 32 : 128] };
  }
  return { port, suffix: text.replace(/^\*?\.+/, '') };
}

/** Builds a matcher from a list of entries (each may itself hold several, comma- or space-separated). */
export function noProxyMatcher(list: readonly string[]): NoProxyMatcher {
  const entries = list.flatMap((s) => s.split(/[\s,]+/)).map(parseEntry).filter((e): e is Entry => e !== undefined);
  if (entries.length === 0) return () => false;
  return (rawHost, port) => {
    const host = rawHost.replace(/^\[|\]$/g, '').replace(/\.+$/, '').toLowerCase();
    let addr: ipaddr.IPv4 | ipaddr.IPv6 | undefined;
    if (ipaddr.isValid(host)) {
      addr = ipaddr.parse(host);
      if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
    }
    for (const e of entries) {
      if (e.port !== undefined && e.port !== port) continue;
      if (e.any) return true;
      if (e.suffix !== undefined && (host === e.suffix || host.endsWith(`.${e.suffix}`))) return true;
      if (e.range && addr && addr.kind() === e.range[0].kind() && addr.match(e.range)) return true;
    }
    return false;
  };
}

/** True for this machine's own names and addresses (`localhost`, 127.0.0.0/8, ::1). */
export function isLoopbackHost(rawHost: string): boolean {
  const host = rawHost.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost')) return true;
  if (!ipaddr.isValid(host)) return false;
  let addr = ipaddr.parse(host);
  if (addr.kind() === 'ipv6' && (addr as ipaddr.IPv6).isIPv4MappedAddress()) addr = (addr as ipaddr.IPv6).toIPv4Address();
  return addr.range() === 'loopback';
}
