import { z } from 'zod';
import { badRequest, RouterError, publicReason } from '../http/errors.js';
import { json, route, type RouteDef } from '../http/routes.js';
import { publicConnection, type Connection } from '../providers/connections.js';
import type { ProviderDef } from '../providers/types.js';
import type { Services } from '../services.js';
import type { OAuthConnectionReply, OAuthPollReply } from '../../shared/oauth.js';
import { saveLogin } from './accounts.js';
import type { PollOutcome } from './flows.js';
import { authorizeReply, cancelReply, connectionCreatedReply, deviceCodeReply, pollOutcomeReply, retiredReply } from './replies.js';
import { OAUTH_PROVIDER_IDS } from './settings.js';

const RETIRED = ['windsurf', 'devin-cli'] as const;
const secret = z.string().min(1).max(16_384);
const stateBody = z.object({ state: z.string().min(1).max(200) }).strict();

/** An OAuth provider named in the path: one of the providers with a login, else 404. */
function oauthProvider(services: Services, id: string | undefined): ProviderDef {
  const def = id && (OAUTH_PROVIDER_IDS as readonly string[]).includes(id) ? services.providers.provider(id) : undefined;
  if (!def?.oauth) throw new RouterError(404, `No OAuth login for provider '${id}'. Providers: ${OAUTH_PROVIDER_IDS.join(', ')}.`);
  return def;
}

/** Browser and device flows of a provider that only takes imported tokens are refused with the pointer. */
function liveFlow(services: Services, id: string | undefined): ProviderDef {
  const def = oauthProvider(services, id);
  if (def.oauth!.retired) throw retired(def.id, 'this login');
  return def;
}

function retired(provider: string, action: string): RouterError {
  return new RouterError(410, `${provider} retired its browser login, so ${action} is gone; import a token with POST /api/oauth/${provider}/import-token.`, {
    code: 'flow_retired',
    extra: { import_token: `/api/oauth/${provider}/import-token` },
  });
}

function view(services: Services, c: Connection) {
  return publicConnection(c, (id) => services.providers.label(id));
}

function pollReply(services: Services, o: PollOutcome): OAuthPollReply {
  if (o.status === 'complete') return { status: 'complete', connection: view(services, o.connection) };
  return o as OAuthPollReply;
}

const importBody = z
  .object({
    accessToken: secret,
    refreshToken: secret.optional(),
    idToken: secret.optional(),
    expiresAt: z.union([z.string().datetime({ offset: true }), z.number().int().positive()]).nullable().optional(),
    expiresIn: z.number().int().positive().max(10 * 365 * 86_400).optional(),
    name: z.string().trim().min(1).max(100).optional(),
    email: z.string().max(320).optional(),
    accountId: z.string().max(200).optional(),
    projectId: z.string().max(200).optional(),
    baseUrl: z.string().max(2000).url().refine((u) => /^https?:\/\//i.test(u), 'must be an http(s) URL').optional(),
  })
  .strict();

function importExpiry(b: z.infer<typeof importBody>): string | null {
  if (b.expiresIn) return new Date(Date.now() + b.expiresIn * 1000).toISOString();
  const v = b.expiresAt;
  if (v === undefined || v === null) return null;
  return new Date(typeof v === 'number' && v < 1e12 ? v * 1000 : v).toISOString();
}

/** The retired browser flows: answered before authentication (spec "Errors": 410 for retired OAuth actions). */
const retiredRoutes: RouteDef[] = RETIRED.flatMap((provider) =>
  (
    [
      ['GET', 'authorize'],
      ['GET', 'start-callback-server'],
      ['POST', 'poll-callback'],
    ] as const
  ).map(([method, action]) =>
    route({
      method,
      path: `/api/oauth/${provider}/${action}`,
      tier: 'public',
      tag: 'oauth',
      summary: `Retired: ${provider} logs in only through import-token (410 Gone)`,
      status: 410,
      reply: retiredReply,
      handler: () => {
        throw retired(provider, action);
      },
    }),
  ),
);

/** OAuth logins and token import (CONTRACT "Wave two": `/api/oauth/{provider}/{action}`). */
export const oauthRoutes: RouteDef[] = [
  ...retiredRoutes,
  route({
    method: 'GET',
    path: '/api/oauth/:provider/authorize',
    sideEffects: true,
    tier: 'management',
    tag: 'oauth',
    summary: 'Start a browser login (PKCE S256): {authUrl, state, redirectUri}; bring the code back to exchange',
    reply: authorizeReply,
    handler: ({ services, params }) => services.oauth.authorize(liveFlow(services, params.provider)),
  }),
  route({
    method: 'POST',
    path: '/api/oauth/:provider/exchange',
    tier: 'management',
    tag: 'oauth',
    summary: 'Exchange a login code ({code, state}; Claude\'s pasted code#state form too) for a connection',
    body: z.object({ code: z.string().min(1).max(4096), state: z.string().min(1).max(200).optional() }).strict(),
    status: 201,
    reply: connectionCreatedReply,
    handler: async ({ services, params, body }) => {
      const def = liveFlow(services, params.provider);
      const { connection, created } = await services.oauth.exchange(def, body.code, body.state);
      return json(201, { created, connection: view(services, connection) } satisfies OAuthConnectionReply);
    },
  }),
  route({
    method: 'GET',
    path: '/api/oauth/:provider/start-callback-server',
    sideEffects: true,
    tier: 'management',
    tag: 'oauth',
    summary: "Start a browser login with a loopback listener on the provider's redirect port: {authUrl, redirectUri, state}",
    query: z.object({ port: z.coerce.number().int().min(1024).max(65_535).optional() }).strict(),
    reply: authorizeReply,
    handler: ({ services, params, query }) => services.oauth.startCallbackServer(liveFlow(services, params.provider), query.port),
  }),
  route({
    method: 'POST',
    path: '/api/oauth/:provider/poll-callback',
    tier: 'management',
    tag: 'oauth',
    summary: 'The outcome of a callback-server login: {status: pending|complete|error|expired, connection?}',
    body: stateBody,
    reply: pollOutcomeReply,
    handler: ({ services, params, body }) => pollReply(services, services.oauth.pollCallback(liveFlow(services, params.provider), body.state)),
  }),
  route({
    method: 'POST',
    path: '/api/oauth/:provider/cancel',
    tier: 'management',
    tag: 'oauth',
    summary: 'Abandon a login in progress ({state}): forgets it and closes its callback listener; {cancelled}',
    body: stateBody,
    reply: cancelReply,
    handler: ({ services, params, body }) => ({ cancelled: services.oauth.cancel(oauthProvider(services, params.provider), body.state) }),
  }),
  route({
    method: 'GET',
    path: '/api/oauth/:provider/device-code',
    sideEffects: true,
    tier: 'management',
    tag: 'oauth',
    summary: 'Start a device login (RFC 8628): {state, user_code, verification_uri, interval, expires_in}',
    reply: deviceCodeReply,
    handler: ({ services, params }) => services.oauth.deviceCode(liveFlow(services, params.provider)),
  }),
  route({
    method: 'POST',
    path: '/api/oauth/:provider/poll',
    tier: 'management',
    tag: 'oauth',
    summary: 'Poll a device login once: {status: pending|slow_down|complete|expired|denied|error, interval?, connection?}',
    body: stateBody,
    reply: pollOutcomeReply,
    handler: async ({ services, params, body }) => pollReply(services, await services.oauth.poll(liveFlow(services, params.provider), body.state)),
  }),
  route({
    method: 'POST',
    path: '/api/oauth/:provider/import-token',
    tier: 'management',
    tag: 'oauth',
    summary: 'Import tokens from another login ({accessToken, refreshToken?, expiresAt?...}) as a connection',
    body: importBody,
    status: 201,
    reply: connectionCreatedReply,
    handler: async ({ services, params, body }) => {
      const def = oauthProvider(services, params.provider);
      const data = Object.fromEntries(Object.entries({ email: body.email, accountId: body.accountId, projectId: body.projectId, baseUrl: body.baseUrl }).filter(([, v]) => v !== undefined));
      const saved = await saveLogin(services, def, {
        accessToken: body.accessToken,
        refreshToken: body.refreshToken,
        idToken: body.idToken,
        expiresAt: importExpiry(body),
        data,
        name: body.name,
      }).catch((err: unknown) => {
        if (err instanceof RouterError) throw err;
        services.log.warn('oauth token import failed', { provider: def.id, error: (err as Error).message });
        throw badRequest(`The ${def.name} token could not be set up: ${publicReason(err)}.`, 'accessToken');
      });
      return json(201, { created: saved.created, connection: view(services, saved.connection) } satisfies OAuthConnectionReply);
    },
  }),
];
