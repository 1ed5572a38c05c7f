import { z } from 'zod';
import type { OAuthAuthorizeReply, OAuthCancelReply, OAuthConnectionReply, OAuthDeviceCodeReply, OAuthPollReply, OAuthProviderInfo } from '../../shared/oauth.js';
import { errorReply } from '../http/replies.js';
import { connectionReply } from '../providers/routes.js';

/** Reply schemas of the OAuth login routes (RouteDef.reply). */

export const authorizeReply = z.object({ authUrl: z.string(), state: z.string(), redirectUri: z.string() }) satisfies z.ZodType<OAuthAuthorizeReply>;

export const deviceCodeReply = z.object({
  state: z.string(),
  user_code: z.string(),
  verification_uri: z.string(),
  verification_uri_complete: z.string().optional(),
  interval: z.number(),
  expires_in: z.number(),
}) satisfies z.ZodType<OAuthDeviceCodeReply>;

/** A poll: still waiting (`interval` to wait, device flow), done with the connection, or ended with `error`. */
export const pollOutcomeReply = z.discriminatedUnion('status', [
  z.object({ status: z.enum(['pending', 'slow_down']), interval: z.number().optional() }),
  z.object({ status: z.literal('complete'), connection: connectionReply }),
  z.object({ status: z.enum(['expired', 'denied', 'error']), error: z.string() }),
]) satisfies z.ZodType<OAuthPollReply>;

export const connectionCreatedReply = z.object({ created: z.boolean(), connection: connectionReply }) satisfies z.ZodType<OAuthConnectionReply>;

export const cancelReply = z.object({ cancelled: z.boolean() }) satisfies z.ZodType<OAuthCancelReply>;

/** A retired browser action: 410 with `code: flow_retired` and the import-token route to use instead. */
export const retiredReply = errorReply({ code: z.literal('flow_retired'), import_token: z.string() });

export const oauthProvidersReply = z.object({
  providers: z.array(
    z.object({
      id: z.string(),
      name: z.string(),
      login: z.enum(['browser', 'device']).nullable(),
      paste: z.boolean(),
      retired: z.boolean(),
    }) satisfies z.ZodType<OAuthProviderInfo>,
  ),
});
