import { route, type RouteDef } from '../http/routes.js';
import type { OAuthProviderInfo } from '../../shared/oauth.js';
import { oauthProvidersReply } from './replies.js';
import { OAUTH_PROVIDER_IDS } from './settings.js';

/**
 * Which login each OAuth provider offers, read from its provider definition (the same `oauth` config the
 * flows run on), so a client (the dashboard) offers the right one without a copy of that knowledge.
 */
export const oauthCatalogRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/oauth/providers',
    tier: 'management',
    tag: 'oauth',
    summary: 'The OAuth providers and their logins: {providers: [{id, name, login: browser|device|null, paste, retired}]} (import-token works for all)',
    reply: oauthProvidersReply,
    handler: ({ services }) => ({
      providers: OAUTH_PROVIDER_IDS.flatMap((id): OAuthProviderInfo[] => {
        const def = services.providers.provider(id);
        const cfg = def?.oauth;
        if (!def || !cfg) return [];
        const login = cfg.retired ? null : cfg.redirect && cfg.authorizeUrl ? 'browser' : cfg.deviceAuthorizationUrl ? 'device' : null;
        return [{ id, name: def.name, login, paste: !cfg.retired && Boolean(cfg.pasteRedirectUri), retired: Boolean(cfg.retired) }];
      }),
    }),
  }),
];
