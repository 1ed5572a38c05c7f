import { z } from 'zod';
import { badRequest } from '../http/errors.js';
import { route, type RouteDef } from '../http/routes.js';
import { maskTelegramToken, publicSettings, settingsPatchSchema, settingsSchema, unmaskPatch, type SettingsPatch } from './store.js';
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
    // The schema is composed when first read (the features' sections are registered by then).
    get reply() {
      return settingsSchema();
    },
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
    get body() {
      return settingsPatchSchema() as unknown as z.ZodType<SettingsPatch>;
    },
    get reply() {
      return settingsSchema();
    },
    handler: async ({ services, body }) => {
      // A client that PATCHes back what GET showed must not overwrite the token with its masked form.
      const token = body.telegramBotToken;
      if (token?.endsWith('...')) {
        if (token !== maskTelegramToken(services.settings.get().telegramBotToken)) {
          throw badRequest("Invalid field 'telegramBotToken': expected <bot id>:<token>", 'telegramBotToken');
        }
        delete body.telegramBotToken;
      }
      // The same for the sections' credentials (the sync secret, proxy passwords): a mask means "unchanged".
      return publicSettings(await services.settings.update(unmaskPatch(body, services.settings.get())));
    },
  }),
];
