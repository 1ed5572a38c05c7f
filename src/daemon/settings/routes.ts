import { z } from 'zod';
import { badRequest } from '../http/errors.js';
import { route, type RouteDef } from '../http/routes.js';
import { maskTelegramToken, publicSettings, settingsPatchSchema, settingsSchema } from './store.js';
import { SECRET_MASK } from '../sync/settings.js';
import { unmaskOutboundProxy } from '../net/settings.js';
import { describeSettings, type SettingsSchemaReply } from './schema.js';

const settingsSchemaReply = z.object({
  groups: z.array(
    z.object({
      id: z.string(),
      title: z.string(),
      settings: z.array(
        z.object({
          key: z.string(),
          description: z.string(),
          default: z.unknown(),
          secret: z.boolean(),
          secretFields: z.array(z.string()).optional(),
          unit: z.string().optional(),
          schema: z.record(z.string(), z.unknown()),
        }),
      ),
    }),
  ),
}) satisfies z.ZodType<SettingsSchemaReply>;

/** Settings: read all, patch some (validated, unknown keys rejected). */
export const settingsRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/settings',
    tier: 'management',
    tag: 'settings',
    summary: 'All settings',
    reply: settingsSchema,
    handler: ({ services }) => publicSettings(services.settings.get()),
  }),
  route({
    method: 'GET',
    path: '/api/settings/schema',
    tier: 'management',
    tag: 'settings',
    summary: 'Every setting by group: description, JSON Schema (type, bounds, choices), default, whether it is secret',
    reply: settingsSchemaReply,
    handler: () => describeSettings(),
  }),
  route({
    method: 'PATCH',
    path: '/api/settings',
    tier: 'management',
    tag: 'settings',
    summary: 'Change settings',
    body: settingsPatchSchema,
    reply: settingsSchema,
    handler: async ({ services, body }) => {
      // A client that PATCHes back what GET showed must not overwrite the token with its masked form.
      const token = body.telegramBotToken;
      if (token !== undefined && token.endsWith('...')) {
        if (token !== maskTelegramToken(services.settings.get().telegramBotToken)) {
          throw badRequest("Invalid field 'telegramBotToken': expected <bot id>:<token>", 'telegramBotToken');
        }
        delete body.telegramBotToken;
      }
      // The same for the sync secret: its mask means "unchanged".
      if (body.cloudSync?.secret === SECRET_MASK) body.cloudSync = { ...body.cloudSync, secret: services.settings.get().cloudSync.secret };
      // And for proxy URLs: a password shown masked means the stored one.
      if (body.outboundProxy) body.outboundProxy = unmaskOutboundProxy(body.outboundProxy, services.settings.get().outboundProxy);
      return publicSettings(await services.settings.update(body));
    },
  }),
];
