import { connectionProxy } from '../net/outbound-proxy.js';
import type { Target } from '../providers/target.js';
import type { Logger } from '../logger.js';
import type { ConnectionStore } from '../providers/connections.js';
import type { ProviderDirectory } from '../providers/directory.js';
import type { SettingsStore } from '../settings/store.js';
import { discoverProject } from './code-assist.js';
import { oauthEndpoints } from './endpoints.js';
import { canRefresh, REFRESH_AHEAD_MS, refreshConnection } from './refresh.js';

/** What renewing a target's token reads. */
type FreshDeps = { connections: ConnectionStore; log: Logger; providers: ProviderDirectory; settings: SettingsStore };

/** After a failed refresh before a request, requests use the current token this long before trying again. */
const RETRY_AFTER_FAILURE_MS = 30_000;
const failedAt = new Map<string, number>();
const discovering = new Map<string, Promise<string>>();

/** Whether a target must be renewed before use: a token close to expiry, or a Copilot connection with no Copilot token yet. */
function needsRefresh(target: Target): boolean {
  if (target.expiresAt !== undefined) return target.expiresAt - Date.now() <= REFRESH_AHEAD_MS;
  // Imported from the Copilot plugins' files: only the GitHub token, exchanged before the first request.
  return target.provider.oauth?.refresh === 'copilot-exchange' && !target.credential.refreshToken;
}

/**
 * The target to send with: an OAuth connection whose access token expires within REFRESH_AHEAD_MS is
 * renewed first (one refresh per connection however many requests wait for it; they all continue with
 * the new token). A failed refresh is logged and the request goes out with the current token; only an
 * upstream-confirmed auth failure then decides anything (resilience/attempts.ts). A Code Assist connection
 * imported without its project gets it found once. Costs a comparison or two for every other target.
 */
export async function freshTarget(services: FreshDeps, target: Target): Promise<Target> {
  if (!target.connectionId) return target;
  let next = target;
  if (needsRefresh(target)) next = await refreshed(services, target);
  if ((next.format === 'gemini-code-assist' || next.format === 'antigravity') && !next.project) next = await withProject(services, next);
  return next;
}

async function refreshed(services: FreshDeps, target: Target): Promise<Target> {
  const conn = services.connections.get(target.connectionId!);
  if (!conn || !canRefresh(target.provider, conn, services.settings)) return target;
  const failed = failedAt.get(conn.id);
  if (failed !== undefined && Date.now() - failed < RETRY_AFTER_FAILURE_MS) return target;
  try {
    const next = await refreshConnection(target.provider, conn, services);
    failedAt.delete(conn.id);
    const built = services.providers.connectionTarget(target.provider, next, target.model, target.publicModel);
    return { ...target, credential: next.credential, expiresAt: built.expiresAt, baseUrl: built.baseUrl };
  } catch (err) {
    failedAt.set(conn.id, Date.now());
    services.log.warn('token refresh before a request failed; sending with the current token', { provider: services.providers.label(conn.provider), connection: conn.name, connectionId: conn.id, error: (err as Error).message });
    return target;
  }
}

/** Finds and stores a Code Assist connection's project (loadCodeAssist/onboardUser), once per connection. */
async function withProject(services: FreshDeps, target: Target): Promise<Target> {
  const id = target.connectionId!;
  let running = discovering.get(id);
  if (!running) {
    const conn = services.connections.get(id);
    if (!conn?.credential.accessToken) return target;
    const base = oauthEndpoints(target.provider, services.settings.get()).apiBaseUrl;
    running = discoverProject(target.provider, target.baseUrl || base, conn.credential.accessToken, connectionProxy(conn))
      .then(async (projectId) => {
        const cur = services.connections.get(id);
        if (cur) await services.connections.update(id, { providerSpecificData: { ...cur.providerSpecificData, projectId } });
        return projectId;
      })
      .finally(() => discovering.delete(id));
    discovering.set(id, running);
  }
  try {
    return { ...target, project: await running };
  } catch (err) {
    services.log.warn('Code Assist project discovery failed', { connection: id, error: (err as Error).message });
    return target;
  }
}
