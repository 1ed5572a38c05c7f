import type { Settings } from '../settings/store.js';
import type { OAuthConfig, ProviderDef } from '../providers/types.js';
import type { OAuthEndpointOverride } from './settings.js';

/** The endpoints one provider's OAuth steps use now: the `oauthEndpoints` setting's, else the built-in ones. */
export interface OAuthEndpoints {
  authorizeUrl?: string;
  tokenUrl?: string;
  deviceAuthorizationUrl?: string;
  apiBaseUrl: string;
}

/** A provider's override entry of the `oauthEndpoints` setting, if any. */
export function endpointOverride(settings: Settings | undefined, providerId: string): OAuthEndpointOverride | undefined {
  return (settings?.oauthEndpoints as Record<string, OAuthEndpointOverride> | undefined)?.[providerId];
}

/** Resolves a provider's endpoints; a connection's own `tokenUrl` (providerSpecificData) wins for refresh. */
export function oauthEndpoints(def: ProviderDef, settings: Settings | undefined, connectionData?: Record<string, unknown>): OAuthEndpoints {
  const o = endpointOverride(settings, def.id) ?? {};
  const cfg: Partial<OAuthConfig> = def.oauth ?? {};
  const own = connectionData?.tokenUrl;
  return {
    authorizeUrl: o.authorizeUrl ?? cfg.authorizeUrl,
    tokenUrl: typeof own === 'string' ? own : (o.tokenUrl ?? (cfg.tokenUrl || undefined)),
    deviceAuthorizationUrl: o.deviceAuthorizationUrl ?? cfg.deviceAuthorizationUrl,
    apiBaseUrl: o.apiBaseUrl ?? def.baseUrl,
  };
}
