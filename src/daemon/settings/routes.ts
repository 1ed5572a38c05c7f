import { route, type RouteDef } from '../http/routes.js';
import { settingsPatchSchema } from './store.js';

/** Settings: read all, patch some (validated, unknown keys rejected). */
export const settingsRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/settings',
    tier: 'management',
    tag: 'settings',
    summary: 'All settings',
    handler: ({ services }) => services.settings.get(),
  }),
  route({
    method: 'PATCH',
    path: '/api/settings',
    tier: 'management',
    tag: 'settings',
    summary: 'Change settings',
    body: settingsPatchSchema,
    handler: ({ services, body }) => services.settings.update(body),
  }),
];
