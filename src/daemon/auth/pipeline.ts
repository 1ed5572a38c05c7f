import { timingSafeEqual } from 'node:crypto';
import type { H3Event } from 'h3';
import { parseCookies } from 'h3';
import { HEADER, SESSION_COOKIE } from '../../shared/headers.js';
import { RouterError } from '../http/errors.js';
import type { Tier } from '../http/routes.js';
import { pathAllowed, type KeyRecord } from '../keys/store.js';
import type { Services } from '../services.js';

/** Who the pipeline decided the caller is. */
export interface AuthInfo {
  via: 'none' | 'api-key' | 'session' | 'cli-token' | 'open-loopback';
  /** The API key, when the caller presented one. */
  key?: KeyRecord;
  loopback: boolean;
  remoteAddress: string;
}

/**
 * The caller's address, from the socket only. Headers such as X-Forwarded-For are never trusted here:
 * anyone can send them, and loopback status gates the most powerful routes. In-process tests inject
 * `event.context.remoteAddress` (reachable only by code running inside the daemon, never over the network).
 */
export function remoteAddressOf(event: H3Event): string {
  const injected = (event.context as { remoteAddress?: string }).remoteAddress;
  if (injected !== undefined) return injected;
  return event.req.runtime?.node?.req.socket?.remoteAddress ?? '';
}

/** Loopback: 127.0.0.0/8, ::1 and their IPv4-mapped IPv6 forms. */
export function isLoopbackAddress(addr: string): boolean {
  if (addr === '::1') return true;
  const v4 = addr.startsWith('::ffff:') ? addr.slice(7) : addr;
  return v4.startsWith('127.') && /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(v4);
}

/** The API key a client presented: Bearer, x-api-key (Anthropic SDKs) or x-goog-api-key (Gemini SDK). */
export function presentedKey(event: H3Event): string | undefined {
  const h = event.req.headers;
  const authz = h.get('authorization');
  if (authz) {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authz);
    if (m) return m[1];
  }
  return h.get('x-api-key') ?? h.get('x-goog-api-key') ?? undefined;
}

function sessionToken(event: H3Event): string | undefined {
  if (!event.req.headers.get('cookie')) return undefined;
  return parseCookies(event)[SESSION_COOKIE];
}

function safeEqual(a: string, b: string): boolean {
  const ab = Buffer.from(a);
  const bb = Buffer.from(b);
  // Length is not secret (the token has a fixed length); the content comparison is constant-time.
  return ab.length === bb.length && timingSafeEqual(ab, bb);
}

const unauthorized = (msg = 'Authentication is required: send an API key as Authorization: Bearer <key>.') =>
  new RouterError(401, msg);
const forbidden = (msg: string) => new RouterError(403, msg);

/**
 * A key with `path:` scopes may call only routes under them (spec, Authentication: client routes accept path-scoped keys).
 * The URL is read only for such keys: the proxy fast path never builds it otherwise.
 */
function checkPathScopes(key: KeyRecord, event: H3Event): void {
  if (!key.hasPathScopes) return;
  const pathname = event.url.pathname;
  if (!pathAllowed(key.scopes, pathname)) {
    throw new RouterError(403, `This API key may not call ${pathname.slice(0, 200)} (see its path: scopes).`, { code: 'path_not_allowed' });
  }
}

interface Credentials {
  key?: KeyRecord;
  keyInvalid: boolean;
  session: boolean;
  cliToken: boolean;
}

/** Reads every credential the request carries, verifying each. */
function readCredentials(event: H3Event, services: Services, loopback: boolean): Credentials {
  const cli = event.req.headers.get(HEADER.cliToken);
  if (cli !== null && !loopback) {
    // The CLI token proves "a process of this user on this machine": it means nothing from elsewhere.
    throw forbidden('The CLI token is accepted from loopback callers only.');
  }
  const presented = presentedKey(event);
  const key = presented ? services.keys.verify(presented) : undefined;
  const token = sessionToken(event);
  return {
    key: key?.isActive ? key : undefined,
    keyInvalid: presented !== undefined && !key?.isActive,
    session: token !== undefined && services.sessions.isValid(token),
    cliToken: cli !== null && safeEqual(cli, services.cliToken),
  };
}

function managementAuth(c: Credentials, services: Services, loopback: boolean, allowKey: boolean, event: H3Event): AuthInfo['via'] {
  if (c.cliToken) return 'cli-token';
  if (c.session) return 'session';
  if (c.key) {
    if (!allowKey) throw forbidden('API keys cannot open this route; use the CLI from this machine.');
    if (!c.key.scopes.includes('manage')) throw forbidden("This API key lacks the 'manage' scope.");
    checkPathScopes(c.key, event);
    return 'api-key';
  }
  if (c.keyInvalid) throw unauthorized('The API key is invalid or inactive.');
  if (loopback && !services.settings.get().requireLogin) return 'open-loopback';
  throw unauthorized('Management authentication is required: log in, use a manage-scope key, or the router CLI.');
}

/**
 * The central authorization pipeline: runs before every handler and decides from the route's tier alone.
 * Throws 401 (no or bad credential) or 403 (credential fine, caller not allowed here).
 */
export function authorize(tier: Tier, event: H3Event, services: Services): AuthInfo {
  const remoteAddress = remoteAddressOf(event);
  const loopback = isLoopbackAddress(remoteAddress);
  // Every AuthInfo has the same fields in the same order (one hidden class for code reading it per request).
  const info = (via: AuthInfo['via'], key: KeyRecord | undefined): AuthInfo => ({ via, key, loopback, remoteAddress });
  if (tier === 'public') return info('none', undefined);

  if ((tier === 'local' || tier === 'spawn') && !loopback) {
    throw forbidden('This route is available to loopback callers only.');
  }
  const c = readCredentials(event, services, loopback);

  switch (tier) {
    case 'client': {
      if (c.key) {
        if (!c.key.scopes.includes('proxy')) throw forbidden("This API key lacks the 'proxy' scope.");
        checkPathScopes(c.key, event);
        services.keys.touch(c.key);
        return info('api-key', c.key);
      }
      if (c.keyInvalid) throw unauthorized('The API key is invalid or inactive.');
      if (c.session) return info('session', undefined);
      throw unauthorized();
    }
    case 'management':
    case 'local':
      return info(managementAuth(c, services, loopback, true, event), c.key);
    case 'spawn':
      // Spawn-capable routes can start processes on this machine: no API key may open them, whatever its scope.
      return info(managementAuth(c, services, loopback, false, event), undefined);
    case 'metrics':
      // Prometheus scrapes without credentials; on loopback that can be allowed (opt-in setting).
      if (loopback && services.settings.get().metricsOpenOnLoopback) return info('open-loopback', undefined);
      return info(managementAuth(c, services, loopback, true, event), c.key);
    case 'copilot': {
      if (loopback) return info(managementAuth(c, services, loopback, true, event), c.key);
      if (c.key?.scopes.includes('manage') && services.settings.get().copilotAllowManageKey) {
        checkPathScopes(c.key, event);
        return info('api-key', c.key);
      }
      throw forbidden('This route is loopback-only unless the copilotAllowManageKey setting is on.');
    }
  }
}
