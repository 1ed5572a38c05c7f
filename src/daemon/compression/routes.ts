import { route, type RouteDef } from '../http/routes.js';
import { compressionSettingsSchema } from './settings.js';

/** Compression settings; the same object is the `compression` key of /api/settings. */
export const compressionRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/settings/compression',
    tier: 'management',
    tag: 'settings',
    summary: 'Context compression settings',
    reply: compressionSettingsSchema,
    handler: ({ services }) => services.settings.get().compression,
  }),
  route({
    method: 'PUT',
    path: '/api/settings/compression',
    tier: 'management',
    tag: 'settings',
    summary: 'Replaces the context compression settings (omitted fields take their defaults)',
    body: compressionSettingsSchema,
    reply: compressionSettingsSchema,
    handler: async ({ services, body }) => (await services.settings.update({ compression: body })).compression,
  }),
];
