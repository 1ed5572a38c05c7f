import { z } from 'zod';
import { isoTime, NO_CONTENT } from '../http/replies.js';
import { json, noContent, route, type RouteDef } from '../http/routes.js';
import { type Hook, hookInputSchema, hookPatchSchema, MAX_HOOKS } from './config.js';

/** A hook as the replies show it: what was given, with its id and times. */
const hookReply = hookInputSchema.extend({ id: z.string(), createdAt: isoTime, updatedAt: isoTime }) satisfies z.ZodType<Hook>;

/** Request hooks (docs/operations.md "Request hooks"): list, create, read, replace, change, delete. */
export const hookRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/middleware/hooks',
    tier: 'management',
    tag: 'hooks',
    summary: 'Lists the request hooks in run order (order, then creation)',
    reply: z.object({ hooks: z.array(hookReply), max: z.number() }),
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
    reply: hookReply,
    handler: async ({ services, body }) => json(201, await services.hooks.create(body)),
  }),
  route({
    method: 'GET',
    path: '/api/middleware/hooks/:id',
    tier: 'management',
    tag: 'hooks',
    summary: 'One request hook, by id or name',
    reply: hookReply,
    handler: ({ services, params }) => services.hooks.orThrow(params.id!),
  }),
  route({
    method: 'PUT',
    path: '/api/middleware/hooks/:id',
    tier: 'management',
    tag: 'hooks',
    summary: 'Replaces a request hook (by id or name)',
    body: hookInputSchema,
    reply: hookReply,
    handler: ({ services, params, body }) => services.hooks.replace(params.id!, body),
  }),
  route({
    method: 'PATCH',
    path: '/api/middleware/hooks/:id',
    tier: 'management',
    tag: 'hooks',
    summary: 'Changes the given fields of a request hook (by id or name)',
    body: hookPatchSchema,
    reply: hookReply,
    handler: ({ services, params, body }) => services.hooks.patch(params.id!, body),
  }),
  route({
    method: 'DELETE',
    path: '/api/middleware/hooks/:id',
    tier: 'management',
    tag: 'hooks',
    summary: 'Deletes a request hook (by id or name)',
    status: 204,
    reply: NO_CONTENT,
    handler: async ({ services, params }) => {
      await services.hooks.delete(params.id!);
      return noContent();
    },
  }),
];
