import { isIP } from 'node:net';
import type { H3Event } from 'h3';
import { isLoopbackAddress } from '../auth/pipeline.js';
import type { Services } from '../services.js';
import { RouterError } from './errors.js';

/*
 * The browser guard: what a web page open on this machine could otherwise make router do. A browser sends
 * requests to 127.0.0.1 for any page, with the cookies of that site; router never answers a CORS preflight,
 * so a page may only send "simple" requests (GET, HEAD, POST with a form or text/plain body) and read
 * nothing back, unless it tricks the browser into thinking router *is* the page's origin (DNS rebinding).
 * Three checks close that, for every route before its tier is looked at (http/app.ts `wrap`):
 * - Host: only loopback names and addresses, the listen host and the allowedOrigins hosts. A rebinding
 *   page reaches router under its own domain name, so its requests carry that name as Host.
 * - Origin (Sec-Fetch-Site when a browser sends no Origin): a state-changing request from another origin
 *   (another port of 127.0.0.1 is one) is refused whatever credentials it carries. GET routes flagged
 *   `sideEffects` (OAuth logins and their listeners, the memory round trip, an export) count as state-changing.
 * - Content-Type: a POST must say application/json, which a page cannot send cross-origin without a
 *   preflight. PUT, PATCH and DELETE always need a preflight, so their bodies are checked by readJsonBody.
 *   Upload routes (database import) name the other types they take (`bodyTypes`); those are honoured only
 *   when they are not CORS-safelisted (a form or text/plain never passes), so they are as safe as JSON.
 * Clients that are not browsers send no Origin and no Sec-Fetch-Site, and keep working.
 */

/** True when `host` (no port, IPv6 without brackets) is a loopback name or address. */
export function isLoopbackHost(host: string): boolean {
  const h = host.replace(/^\[|\]$/g, '').toLowerCase();
  // RFC 6761: *.localhost always resolves to loopback (browsers hard-code it), so it cannot be rebound.
  return h === 'localhost' || h.endsWith('.localhost') || isLoopbackAddress(h);
}

/** The normalized origin (`scheme://host[:port]`) of a URL-like string, or undefined when it is not one. */
export function normalizeOrigin(value: string): string | undefined {
  try {
    const u = new URL(value);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return undefined;
    return u.origin;
  } catch {
    return undefined;
  }
}

/** Origins a browser may act from: router's own loopback origins on its port, plus the allowedOrigins setting. */
export function allowedOrigins(port: number, configured: readonly string[]): Set<string> {
  const out = new Set([`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::1]:${port}`]);
  for (const o of configured) {
    const n = normalizeOrigin(o);
    if (n) out.add(n);
  }
  return out;
}

/** The host name of a Host header value: port and IPv6 brackets removed, lower case; undefined if malformed. */
export function hostNameOf(host: string): string | undefined {
  if (host.startsWith('[')) {
    const end = host.indexOf(']');
    if (end === -1 || (end + 1 < host.length && host[end + 1] !== ':')) return undefined;
    return host.slice(1, end).toLowerCase();
  }
  const colon = host.indexOf(':');
  if (colon !== host.lastIndexOf(':')) return undefined;
  return (colon === -1 ? host : host.slice(0, colon)).toLowerCase();
}

/** What the guard accepts, worked out once per listen address and settings snapshot. */
interface Policy {
  listen: Services['listen'];
  allowed: readonly string[];
  /** Host header values taken without parsing: the loopback names with the listen port, the listen host's. */
  exactHosts: Set<string>;
  /** Host names accepted besides loopback ones: the listen host and the hosts of allowedOrigins. */
  names: Set<string>;
  /** Listening on every address (0.0.0.0, ::): any IP literal names this machine, and cannot be rebound. */
  anyAddress: boolean;
  origins: Set<string>;
}

const policies = new WeakMap<Services, Policy>();

function policyFor(services: Services): Policy {
  const listen = services.listen;
  const allowed = services.settings.get().allowedOrigins;
  const cached = policies.get(services);
  if (cached && cached.listen === listen && cached.allowed === allowed) return cached;
  const listenName = listen.host.replace(/^\[|\]$/g, '').toLowerCase();
  const origins = allowedOrigins(listen.port, allowed);
  const names = new Set([listenName]);
  for (const o of origins) names.add(hostNameOf(new URL(o).host) ?? '');
  const hostWithPort = listenName.includes(':') ? `[${listenName}]:${listen.port}` : `${listenName}:${listen.port}`;
  const policy: Policy = {
    listen,
    allowed,
    exactHosts: new Set([`127.0.0.1:${listen.port}`, `localhost:${listen.port}`, `[::1]:${listen.port}`, hostWithPort]),
    names,
    anyAddress: listenName === '0.0.0.0' || listenName === '::' || listenName === '',
    origins,
  };
  policies.set(services, policy);
  return policy;
}

/** The DNS-rebinding rule: may a request carrying this Host header be served? */
export function hostAllowed(host: string, services: Services): boolean {
  const policy = policyFor(services);
  if (policy.exactHosts.has(host)) return true;
  const name = hostNameOf(host);
  if (name === undefined || name === '') return false;
  return isLoopbackHost(name) || policy.names.has(name) || (policy.anyAddress && isIP(name) !== 0);
}

/** True when a Content-Type value's media type essence is application/json (parameters allowed). */
export function isJsonMediaType(value: string | null | undefined): boolean {
  if (!value) return false;
  if (value === 'application/json') return true;
  const semi = value.indexOf(';');
  return (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase() === 'application/json';
}

/** Media types a page may send cross-origin without a preflight (the Fetch standard's CORS-safelisted ones). */
const SAFELISTED_TYPES: ReadonlySet<string> = new Set(['application/x-www-form-urlencoded', 'multipart/form-data', 'text/plain']);

/** The essence of a Content-Type value (`type/subtype`, lower case, no parameters). */
export function mediaTypeEssence(value: string | null | undefined): string {
  if (!value) return '';
  const semi = value.indexOf(';');
  return (semi === -1 ? value : value.slice(0, semi)).trim().toLowerCase();
}

/**
 * True when a POST's Content-Type is one the route declared for uploads and a page cannot forge. The one
 * safelisted type a route may declare is multipart/form-data (the OpenAI image-edit and audio uploads),
 * honoured only with a credential header (Authorization, x-api-key, x-goog-api-key): an HTML form can send
 * multipart cross-site but never set a header, so a page can still not spend a dashboard session's cookie.
 */
function uploadTypeAllowed(value: string | null, bodyTypes: readonly string[] | undefined, headers: Headers): boolean {
  if (!bodyTypes || value === null) return false;
  const essence = mediaTypeEssence(value);
  if (!bodyTypes.includes(essence)) return false;
  if (essence === 'multipart/form-data') return headers.has('authorization') || headers.has('x-api-key') || headers.has('x-goog-api-key');
  return !SAFELISTED_TYPES.has(essence);
}

const forbidden = (message: string) => new RouterError(403, message);

/**
 * Runs before every route's authorization (see the comment at the top of this file). On the proxy hot
 * path it costs a few header reads, a set lookup and a string compare.
 */
export function guardRequest(event: H3Event, services: Services, bodyTypes?: readonly string[], bodylessWithKey?: boolean, sideEffects?: boolean): void {
  const headers = event.req.headers;
  // Every browser sends Host (HTTP/1.1 requires it); a request without one is no page's, so nothing to check.
  const host = headers.get('host');
  if (host !== null && !hostAllowed(host, services)) {
    throw forbidden(
      `Host '${host.slice(0, 100)}' is not allowed: router answers to loopback names and addresses and to its listen host ` +
        '(a guard against DNS rebinding); add an origin with that host to the allowedOrigins setting to use another name.',
    );
  }
  const method = event.req.method;
  // A GET with side effects (a route's `sideEffects` flag: OAuth logins, listeners) is checked like a POST.
  if (method === 'OPTIONS' || ((method === 'GET' || method === 'HEAD') && !sideEffects)) return;
  const origin = headers.get('origin');
  if (origin !== null) {
    // `Origin: null` (sandboxed frames, file: pages, redirects) is never router's own page: refused too.
    if (!policyFor(services).origins.has(origin) && origin !== `http://${host}`) {
      throw forbidden(`Requests from the web page at ${origin.slice(0, 100)} are refused: router accepts changes only from its own origin and the allowedOrigins setting.`);
    }
  } else {
    // A browser that sends no Origin still says where the request comes from.
    const site = headers.get('sec-fetch-site');
    if (site === 'cross-site' || site === 'same-site') throw forbidden('Requests from another web site are refused.');
  }
  if (
    method === 'POST' &&
    !isJsonMediaType(headers.get('content-type')) &&
    !uploadTypeAllowed(headers.get('content-type'), bodyTypes, headers) &&
    // A page can send a body-less POST cross-origin, but never with an Authorization or x-api-key header
    // (those need a preflight): routes that opt in take one from such callers (OpenAI's batch cancel).
    !(bodylessWithKey && headers.get('content-type') === null && (headers.has('authorization') || headers.has('x-api-key')))
  ) {
    throw new RouterError(
      415,
      bodyTypes
        ? `Content-Type must be ${bodyTypes.join(' or ')}.`
        : 'Content-Type must be application/json (also for a POST without a body).',
    );
  }
}
