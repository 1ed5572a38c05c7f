import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { route, json, noContent, type RouteDef } from '../http/routes.js';
import { publicKey, SCOPE_RE } from './store.js';

const name = z.string().trim().min(1).max(100);
const scopes = z.array(z.string().regex(SCOPE_RE, 'unknown scope (use proxy, manage or model:<pattern>)')).max(20);
const idParam = z.string().uuid();

const createBody = z.object({ name, scopes: scopes.optional() }).strict();
const patchBody = z
  .object({ name: name.optional(), scopes: scopes.optional(), isActive: z.boolean().optional() })
  .strict()
  .refine((b) => Object.keys(b).length > 0, 'at least one of name, scopes, isActive is required');

function keyId(params: Record<string, string>): string {
  const id = params.id ?? '';
  if (!idParam.safeParse(id).success) throw new RouterError(404, 'API key not found.');
  return id;
}

/** API keys: created shown once, stored hashed, listed masked. */
export const keyRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/keys',
    tier: 'management',
    tag: 'keys',
    summary: 'Create an API key (the whole key is in this reply only)',
    body: createBody,
    status: 201,
    handler: ({ services, body }) => json(201, services.keys.create(body.name, body.scopes)),
  }),
  route({
    method: 'GET',
    path: '/api/keys',
    tier: 'management',
    tag: 'keys',
    summary: 'List API keys (masked)',
    handler: ({ services }) => ({ keys: services.keys.list().map(publicKey) }),
  }),
  route({
    method: 'GET',
    path: '/api/keys/:id',
    tier: 'management',
    tag: 'keys',
    summary: 'One API key (masked)',
    handler: ({ services, params }) => {
      const rec = services.keys.get(keyId(params));
      if (!rec) throw new RouterError(404, 'API key not found.');
      return publicKey(rec);
    },
  }),
  route({
    method: 'PATCH',
    path: '/api/keys/:id',
    tier: 'management',
    tag: 'keys',
    summary: 'Rename an API key and/or change its scopes and active flag, applied together',
    body: patchBody,
    handler: ({ services, params, body }) => {
      const rec = services.keys.update(keyId(params), body);
      if (!rec) throw new RouterError(404, 'API key not found.');
      return publicKey(rec);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/keys/:id',
    tier: 'management',
    tag: 'keys',
    summary: 'Delete an API key',
    status: 204,
    handler: ({ services, params }) => {
      if (!services.keys.remove(keyId(params))) throw new RouterError(404, 'API key not found.');
      return noContent();
    },
  }),
];
