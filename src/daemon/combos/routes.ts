import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { json, noContent, route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import type { ComboRecord } from './store.js';
import { checkCombo, comboBody, comboReply, inUse } from './validate.js';
import { NO_CONTENT } from '../http/replies.js';

const idParam = z.string().uuid();

/** A combo by the `:id` param; a non-uuid id is a 404 like an unknown one. */
function comboById(services: Services, params: Record<string, string>): ComboRecord {
  const id = params.id ?? '';
  const rec = idParam.safeParse(id).success ? services.combos.get(id) : undefined;
  if (!rec) throw new RouterError(404, 'Combo not found.');
  return rec;
}

/** Combos: named groups of targets a request can address by name in its model field. */
export const comboRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: '/api/combos',
    tier: 'management',
    tag: 'combos',
    summary: 'Create a combo (models are <provider>/<model> ids or other combo names)',
    body: comboBody,
    status: 201,
    reply: comboReply,
    handler: async ({ services, body }) => json(201, await services.combos.create(checkCombo(body, services))),
  }),
  route({
    method: 'GET',
    path: '/api/combos',
    tier: 'management',
    tag: 'combos',
    summary: 'List combos',
    reply: z.object({ combos: z.array(comboReply) }),
    handler: ({ services }) => ({ combos: services.combos.list() }),
  }),
  route({
    method: 'GET',
    path: '/api/combos/:id',
    tier: 'management',
    tag: 'combos',
    summary: 'One combo',
    reply: comboReply,
    handler: ({ services, params }) => comboById(services, params),
  }),
  route({
    method: 'PUT',
    path: '/api/combos/:id',
    tier: 'management',
    tag: 'combos',
    summary: 'Replace a combo (same body as create; omitted strategy, targetTimeoutMs, affinity, hedgeAfterMs, midStreamRecovery and contextFit reset to defaults)',
    body: comboBody,
    reply: comboReply,
    handler: async ({ services, params, body }) => {
      const rec = comboById(services, params);
      const next = await services.combos.update(rec.id, checkCombo(body, services, rec.id));
      if (!next) throw new RouterError(404, 'Combo not found.');
      return next;
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/combos/:id',
    tier: 'management',
    tag: 'combos',
    summary: 'Delete a combo (409 while another combo references it)',
    status: 204,
    reply: NO_CONTENT,
    handler: async ({ services, params }) => {
      const rec = comboById(services, params);
      const users = services.combos.referrers(rec.name);
      if (users.length > 0) throw inUse(rec.name, users, 'deleted');
      await services.combos.remove(rec.id);
      return noContent();
    },
  }),
];
