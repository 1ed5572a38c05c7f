import { connectionProxy } from '../net/outbound-proxy.js';
import { sendUpstream } from '../proxy/upstream.js';
import { extractUpstreamError, formatProviderError } from '../routing/provider-error.js';
import type { Connection, ConnectionStore } from './connections.js';
import { redactSecrets } from '../../shared/mask.js';
import type { ProviderDef } from './types.js';

/** Refresh this long before expiry, so a token never expires in the middle of a request. */
export const REFRESH_AHEAD_MS = 5 * 60_000;

/** The token endpoint for a connection: `providerSpecificData.tokenUrl` overrides the provider's. */
function tokenUrl(def: ProviderDef, c: Connection): string | undefined {
  const override = c.providerSpecificData.tokenUrl;
  return typeof override === 'string' ? override : def.oauth?.tokenUrl;
}

/** True for an OAuth connection that can be refreshed (a refresh token and a known token endpoint). */
export function canRefresh(def: ProviderDef | undefined, c: Connection): boolean {
  return Boolean(def?.oauth && c.authKind === 'oauth' && c.credential.refreshToken && tokenUrl(def, c));
}

const inFlight = new Map<string, Promise<Connection>>();

/**
 * Exchanges the refresh token for a new access token and stores it. Rotation-aware: a new refresh token in
 * the reply replaces the old one; concurrent refreshes of one connection share one call, so a rotating
 * endpoint never sees the same refresh token twice. Throws on failure; never marks anything expired.
 */
export function refreshConnection(def: ProviderDef, c: Connection, store: ConnectionStore): Promise<Connection> {
  const running = inFlight.get(c.id);
  if (running) return running;
  const p = doRefresh(def, c, store).finally(() => inFlight.delete(c.id));
  inFlight.set(c.id, p);
  return p;
}

async function doRefresh(def: ProviderDef, c: Connection, store: ConnectionStore): Promise<Connection> {
  const cfg = def.oauth!;
  const fields: Record<string, string> = { grant_type: 'refresh_token', refresh_token: c.credential.refreshToken!, client_id: cfg.clientId };
  if (cfg.scope) fields.scope = cfg.scope;
  const form = cfg.body === 'form';
  const reply = await sendUpstream({
    url: tokenUrl(def, c)!,
    headers: { 'content-type': form ? 'application/x-www-form-urlencoded' : 'application/json', accept: 'application/json' },
    body: form ? new URLSearchParams(fields).toString() : JSON.stringify(fields),
    signal: AbortSignal.timeout(20_000),
    route: { provider: def, proxy: connectionProxy(c) },
  });
  const text = await reply.text(1024 * 1024);
  const secrets = [c.credential.refreshToken, c.credential.accessToken];
  if (reply.statusCode >= 400) {
    const e = extractUpstreamError(reply.statusCode, text);
    throw new Error(redactSecrets(formatProviderError(e.code ?? reply.statusCode, e.message), secrets));
  }
  let body: { access_token?: string; refresh_token?: string; expires_in?: number };
  try {
    body = JSON.parse(text);
  } catch {
    throw new Error(formatProviderError(reply.statusCode, 'the token endpoint did not answer JSON'));
  }
  if (!body.access_token) throw new Error(formatProviderError(reply.statusCode, 'the token endpoint returned no access_token'));
  const expiresAt = typeof body.expires_in === 'number' ? new Date(Date.now() + body.expires_in * 1000).toISOString() : null;
  return store.update(c.id, {
    credential: { accessToken: body.access_token, ...(body.refresh_token ? { refreshToken: body.refresh_token } : {}) },
    expiresAt,
    lastError: null,
  })!;
}
