import { json, noContent, route, type RouteDef } from '../http/routes.js';
import { hookInputSchema, hookPatchSchema, MAX_HOOKS } from './config.js';

/** Request hooks (docs/operations.md "Request hooks"): list, create, read, replace, change, delete. */
export const hookRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/middleware/hooks',
    tier: 'management',
    tag: 'hooks',
    summary: 'Lists the request hooks in run order (order, then creation)',
    handler: ({ services }) => ({ hooks: services.hooks.list(), max: MAX_HOOKS }),
  }),
  route({
    method: 'POST',
    path: '/api/middleware/hooks',
    tier: 'management',
    tag: 'hooks',
    summary: 'Creates a request hook: a match (route, model, provider, key) and actions from a fixed set',
    status: 201,
    body: hookInputSchema,
    handler: async ({ services, body }) => json(201, await services.hooks.create(body)),
  }),
  route({
    method: 'GET',
    path: '/api/middleware/hooks/:id',
    tier: 'management',
    tag: 'hooks',
    summary: 'One request hook, by id or name',
    handler: ({ services, params }) => services.hooks.orThrow(params.id!),
  }),
  route({
    method: 'PUT',
    path: '/api/middleware/hooks/:id',
    tier: 'management',
    tag: 'hooks',
    summary: 'Replaces a request hook (by id or name)',
    body: hookInputSchema,
    handler: ({ services, params, body }) => services.hooks.replace(params.id!, body),
  }),
  route({
    method: 'PATCH',
    path: '/api/middleware/hooks/:id',
    tier: 'management',
    tag: 'hooks',
    summary: 'Changes the given fields of a request hook (by id or name)',
    body: hookPatchSchema,
    handler: ({ services, params, body }) => services.hooks.patch(params.id!, body),
  }),
  route({
    method: 'DELETE',
    path: '/api/middleware/hooks/:id',
    tier: 'management',
    tag: 'hooks',
    summary: 'Deletes a request hook (by id or name)',
    status: 204,
    handler: async ({ services, params }) => {
      await services.hooks.delete(params.id!);
      return noContent();
    },
  }),
];
