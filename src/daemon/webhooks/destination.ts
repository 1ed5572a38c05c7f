import { lookup as dnsLookup } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import ipaddr from 'ipaddr.js';

/**
 * The public-destination check (SSRF guard) for webhooks of kinds custom, slack and discord.
 *
 * Two layers:
 * 1. `checkDestinationUrl` (create, update, test, and again before every delivery): scheme, embedded
 *    credentials, local-style names, and IP literals. WHATWG URL parsing already turns the odd IPv4 forms
 *    (`2130706433`, `0x7f.1`, `017700000001`, `127.1`) into dotted decimal, so the literal check sees the
 *    address the socket would use.
 * 2. `vettedLookup` (delivery): the DNS resolver of the delivery agent. It resolves every address of the
 *    name, refuses the connection when any of them is not public, and hands the socket exactly the
 *    addresses it checked, so a name cannot re-bind to a private address between check and connect.
 */

/** Thrown (or passed to a lookup callback) when a destination is not public. */
export class DestinationError extends Error {
  override name = 'DestinationError';
  readonly code = 'ERR_WEBHOOK_DESTINATION_BLOCKED';
}

// Names that resolve on the local machine or network rather than on the public DNS.
const LOCAL_SUFFIXES = ['.localhost', '.local', '.internal', '.localdomain', '.lan', '.home', '.home.arpa', '.intranet', '.corp', '.private', '.arpa'];

/** Why a literal address is not public, or null when it is public unicast. */
export function blockedAddressReason(address: string): string | null {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.parse(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  } catch {
    return 'not an IP address';
  }
  if (parsed.kind() === 'ipv6') {
    const v6 = parsed as ipaddr.IPv6;
    // An IPv4-mapped address reaches the embedded IPv4 host: judge that host.
    if (v6.isIPv4MappedAddress()) return blockedAddressReason(v6.toIPv4Address().toString());
    // Deprecated IPv4-compatible form (::a.b.c.d): ipaddr.js files it under unicast, stacks may route it to
    // the embedded IPv4 address, and nothing public uses it.
    if (v6.parts.slice(0, 6).every((p) => p === 0)) return 'IPv4-compatible IPv6';
  }
  // Allow-list, not deny-list: every special range ipaddr.js knows (loopback, private, linkLocal,
  // carrierGradeNat, uniqueLocal, unspecified, multicast, broadcast, reserved, rfc6052 NAT64, 6to4,
  // teredo...) is refused; only plain unicast passes.
  const range = parsed.range();
  return range === 'unicast' ? null : range;
}

/** Strips IPv6 brackets and trailing dots, lowercases. */
function normalizeHost(hostname: string): string {
  return hostname.replace(/^\[|\]$/g, '').replace(/\.+$/, '').toLowerCase();
}

/** Why a host name is local-style, or null. Only for names, not IP literals. */
export function blockedNameReason(hostname: string): string | null {
  const host = normalizeHost(hostname);
  if (host === '') return 'empty host';
  if (host === 'localhost') return 'localhost';
  for (const suffix of LOCAL_SUFFIXES) if (host.endsWith(suffix)) return `local name (*${suffix})`;
  // A single-label name is completed with the local search domains: always a local host.
  if (!host.includes('.')) return 'single-label host name';
  return null;
}

/** Parses and checks a destination URL without DNS; returns the URL or throws `DestinationError`. */
export function checkDestinationUrl(raw: string): URL {
  const url = parseHttpUrl(raw);
  if (url.username || url.password) throw new DestinationError('URLs with embedded credentials are not allowed');
  const host = normalizeHost(url.hostname);
  if (ipaddr.isValid(host)) {
    const reason = blockedAddressReason(host);
    if (reason) throw new DestinationError(`destination address ${host} is not public (${reason})`);
    return url;
  }
  const reason = blockedNameReason(host);
  if (reason) throw new DestinationError(`destination host ${host} is not public (${reason})`);
  return url;
}

/** Parses an http(s) URL; anything else throws `DestinationError`. Applied even when private destinations are allowed. */
export function parseHttpUrl(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new DestinationError('not a valid URL');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new DestinationError(`scheme ${url.protocol.replace(/:$/, '')} is not allowed (use http or https)`);
  }
  return url;
}

/** Resolves a host name to every address (injectable so tests can map public-looking names to loopback). */
export type Resolver = (hostname: string) => Promise<LookupAddress[]>;

/** The system resolver (getaddrinfo: honors /etc/hosts like every other program on the machine). */
export const systemResolver: Resolver = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

/** Resolves a name and checks every address; returns them when all are public, else throws `DestinationError`. */
export async function resolvePublic(hostname: string, resolve: Resolver = systemResolver): Promise<LookupAddress[]> {
  const host = normalizeHost(hostname);
  if (ipaddr.isValid(host)) {
    const reason = blockedAddressReason(host);
    if (reason) throw new DestinationError(`destination address ${host} is not public (${reason})`);
    return [{ address: host, family: host.includes(':') ? 6 : 4 }];
  }
  const addresses = await resolve(host);
  if (addresses.length === 0) throw new DestinationError(`destination host ${host} has no address`);
  for (const a of addresses) {
    const reason = blockedAddressReason(a.address);
    // All or nothing: a name with one private address among public ones is an attack, not a mistake.
    if (reason) throw new DestinationError(`destination host ${host} resolves to ${a.address}, which is not public (${reason})`);
  }
  return addresses;
}

type LookupCallback = (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `net.connect` lookup function for the delivery agent. With `vet` true it only ever hands the socket
 * addresses that `resolvePublic` checked; with `vet` false it resolves plainly (private destinations allowed).
 */
export function vettedLookup(resolve: Resolver, vet: () => boolean) {
  return (hostname: string, options: LookupOptions, callback: LookupCallback): void => {
    const task = vet() ? resolvePublic(hostname, resolve) : resolve(normalizeHost(hostname));
    task.then(
      (addresses) => {
        const wanted = options.family === 4 || options.family === 6 ? addresses.filter((a) => a.family === options.family) : addresses;
        if (wanted.length === 0) return callback(Object.assign(new Error(`no IPv${options.family} address for ${hostname}`), { code: 'ENOTFOUND' }), []);
        if (options.all) callback(null, wanted);
        else callback(null, wanted[0]!.address, wanted[0]!.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, options.all ? [] : '', 0),
    );
  };
}
