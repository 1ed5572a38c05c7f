import type { EventBus } from '../events/bus.js';
import type { HotState } from '../hot/port.js';
import { connectionProxy } from '../net/outbound-proxy.js';
import type { Connection, ConnectionStore } from '../providers/connections.js';
import { redactSecrets } from '../../shared/mask.js';
import type { ProviderDef } from '../providers/types.js';
import { extractUpstreamError, formatProviderError } from '../routing/provider-error.js';
import type { SettingsStore } from '../settings/store.js';
import { exchangeCopilotToken } from './copilot.js';
import { oauthEndpoints } from './endpoints.js';
import { tokenCall } from './http.js';
import { resourceBase } from '../providers/qwen/index.js';

export { resourceBase };

/** Refresh this long before expiry, so a token never expires in the middle of a request. */
export const REFRESH_AHEAD_MS = 5 * 60_000;

/** What a refresh needs: the connection store, and optionally the settings (endpoint overrides) and events. */
export interface RefreshDeps {
  connections: ConnectionStore;
  settings?: SettingsStore;
  events?: EventBus;
  /** Cluster mode: one refresh per connection across every node (a lock in the hot state). */
  hot?: HotState;
}

/** True for an OAuth connection that can be renewed: a refresh token (or GitHub token) and a token endpoint. */
export function canRefresh(def: ProviderDef | undefined, c: Connection, settings?: SettingsStore): boolean {
  if (!def?.oauth || def.oauth.retired || c.authKind !== 'oauth') return false;
  if (def.oauth.refresh === 'copilot-exchange') return Boolean(githubToken(c));
  if (!c.credential.refreshToken) return false;
  return Boolean(oauthEndpoints(def, settings?.get(), c.providerSpecificData).tokenUrl);
}

const inFlight = new Map<string, Promise<Connection>>();

/**
 * Renews a connection's access token and stores it (encrypted, like every credential). Rotation-aware: a
 * new refresh token in the reply replaces the old one; concurrent refreshes of one connection share one
 * call, so a rotating endpoint never sees the same refresh token twice. Throws on failure; never marks
 * anything expired (that is the reactive path's decision, resilience/attempts.ts).
 */
export function refreshConnection(def: ProviderDef, c: Connection, deps: RefreshDeps): Promise<Connection> {
  const running = inFlight.get(c.id);
  if (running) return running;
  const p = (deps.hot?.shared ? clusterRefresh(def, c, deps, deps.hot) : renew(def, c, deps)).finally(() => inFlight.delete(c.id));
  inFlight.set(c.id, p);
  return p;
}

/** Longest a refresh may hold its cluster lock (a node that died mid-refresh frees it after this). */
export const REFRESH_LOCK_MS = 30_000;

/**
 * The refresh of a cluster: the node that takes the connection's lock refreshes; the others wait for the
 * lock to go and use what it stored (a rotating endpoint never sees one refresh token twice). The holder
 * first reads the connection from storage: another node may have renewed it a moment ago and its notice
 * not arrived yet, and refreshing with the snapshot's (rotated) refresh token would be refused. When the
 * lock cannot be asked for (Redis unreachable) this node refreshes on its own.
 */
async function clusterRefresh(def: ProviderDef, c: Connection, deps: RefreshDeps, hot: HotState): Promise<Connection> {
  const name = `refresh:${c.id}`;
  let token: string | null;
  try {
    token = await hot.lock(name, REFRESH_LOCK_MS);
  } catch {
    return renew(def, c, deps);
  }
  if (token) {
    try {
      return await renew(def, c, deps);
    } finally {
      await hot.unlock(name, token).catch(() => false);
    }
  }
  const deadline = Date.now() + REFRESH_LOCK_MS;
  while (Date.now() < deadline && (await hot.locked(name).catch(() => false))) await new Promise((r) => setTimeout(r, 100));
  // What the holder stored (read from storage: its notice may still be on the way).
  return (await deps.connections.fresh(c.id)) ?? c;
}

/**
 * Refreshes `c` unless storage already holds other tokens than the ones `c` was read with (renewed
 * elsewhere meanwhile, or changed by a login): those are used as they are.
 */
async function renew(def: ProviderDef, c: Connection, deps: RefreshDeps): Promise<Connection> {
  const stored = await deps.connections.fresh(c.id);
  if (!stored) throw new Error('the connection was removed');
  const { accessToken, refreshToken } = stored.credential;
  if (accessToken !== c.credential.accessToken || refreshToken !== c.credential.refreshToken) return stored;
  return doRefresh(def, stored, deps);
}

interface Renewed {
  accessToken: string;
  refreshToken?: string;
  expiresAt: string | null;
  data?: Record<string, unknown>;
}

async function doRefresh(def: ProviderDef, c: Connection, deps: RefreshDeps): Promise<Connection> {
  // A refresh that raced another path (a login, an import) uses the credential stored now.
  const current = deps.connections.get(c.id) ?? c;
  const renewed = def.oauth!.refresh === 'copilot-exchange' ? await copilotRenew(def, current, deps) : await grantRenew(def, current, deps);
  const rotated = renewed.refreshToken !== undefined && renewed.refreshToken !== current.credential.refreshToken;
  const next = await deps.connections.update(c.id, {
    credential: { accessToken: renewed.accessToken, ...(renewed.refreshToken ? { refreshToken: renewed.refreshToken } : {}) },
    expiresAt: renewed.expiresAt,
    lastError: null,
    providerSpecificData: { ...current.providerSpecificData, ...renewed.data, lastRefreshedAt: new Date().toISOString() },
  });
  if (!next) throw new Error('the connection was removed while its token was being renewed');
  deps.events?.emit(
    'connection.refreshed',
    { connection_id: c.id, provider: c.provider, name: c.name, expires_at: renewed.expiresAt, rotated },
    renewed.expiresAt ? `connection.refreshed:${c.id}:${renewed.expiresAt}` : undefined,
  );
  return next;
}

/** The refresh-token grant (RFC 6749 section 6) at the provider's token endpoint. */
async function grantRenew(def: ProviderDef, c: Connection, deps: RefreshDeps): Promise<Renewed> {
  const cfg = def.oauth!;
  const fields: Record<string, string> = { grant_type: 'refresh_token', refresh_token: c.credential.refreshToken!, client_id: cfg.clientId };
  if (cfg.clientSecret) fields.client_secret = cfg.clientSecret;
  if (cfg.scope) fields.scope = cfg.scope;
  const url = oauthEndpoints(def, deps.settings?.get(), c.providerSpecificData).tokenUrl!;
  const reply = await tokenCall(def, url, fields, cfg.body, connectionProxy(c));
  const secrets = [c.credential.refreshToken, c.credential.accessToken];
  if (reply.status >= 400) {
    const e = extractUpstreamError(reply.status, reply.text);
    throw new Error(redactSecrets(formatProviderError(e.code ?? reply.status, e.message), secrets));
  }
  const body = reply.json;
  if (!body) throw new Error(formatProviderError(reply.status, 'the token endpoint did not answer JSON'));
  if (typeof body.access_token !== 'string') throw new Error(formatProviderError(reply.status, 'the token endpoint returned no access_token'));
  const expiresAt = typeof body.expires_in === 'number' ? new Date(Date.now() + body.expires_in * 1000).toISOString() : null;
  return {
    accessToken: body.access_token,
    ...(typeof body.refresh_token === 'string' ? { refreshToken: body.refresh_token } : {}),
    expiresAt,
    ...(typeof body.resource_url === 'string' ? { data: { baseUrl: resourceBase(body.resource_url) } } : {}),
  };
}

/**
 * The GitHub token of a Copilot connection: kept as the refresh token; a connection imported from the
 * Copilot plugins' own files holds it as its only token (no Copilot token yet).
 */
export function githubToken(c: Connection): string | undefined {
  return c.credential.refreshToken ?? (c.expiresAt === null ? c.credential.accessToken : undefined);
}

/** GitHub Copilot: a new short-lived Copilot token from the stored GitHub token. */
async function copilotRenew(def: ProviderDef, c: Connection, deps: RefreshDeps): Promise<Renewed> {
  const api = deps.settings?.get().oauthEndpoints['github-copilot']?.apiBaseUrl;
  const github = githubToken(c)!;
  const t = await exchangeCopilotToken(def, github, api, connectionProxy(c));
  return { accessToken: t.token, refreshToken: github, expiresAt: t.expiresAt, ...(t.apiBase ? { data: { baseUrl: t.apiBase } } : {}) };
}
