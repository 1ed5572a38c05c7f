import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { json, noContent, route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import type { ComboRecord } from './store.js';
import { checkCombo, comboBody, comboReply, inUse } from './validate.js';
import { NO_CONTENT } from '../http/replies.js';

/**
 * Fallback chains (spec: "combos ... fallback chains" of the management surface) are priority combos: an
 * ordered list of targets tried one after the other while a target fails before the first byte. This is
 * the same object seen through a narrower door: `/api/fallback-chains` lists, creates, replaces and
 * deletes exactly the combos whose strategy is `priority`, and a chain is addressed by its name in a
 * request's `model` field like any combo. A combo of another strategy is not a chain (404 here).
 */

const chainBody = comboBody.omit({ strategy: true });
type ChainBody = z.infer<typeof chainBody>;

/** A chain as these routes show it: the combo without its (always priority) strategy. */
function chainView(rec: ComboRecord) {
  return { id: rec.id, name: rec.name, models: rec.models, targetTimeoutMs: rec.targetTimeoutMs, affinity: rec.affinity, createdAt: rec.createdAt, updatedAt: rec.updatedAt };
}

function chainById(services: Services, id: string | undefined): ComboRecord {
  const rec = id && z.string().uuid().safeParse(id).success ? services.combos.get(id) : undefined;
  if (!rec || rec.strategy !== 'priority') throw new RouterError(404, 'Fallback chain not found (a fallback chain is a combo with the priority strategy; see /api/combos).');
  return rec;
}

/** A chain as the replies show it: a combo without its strategy and the fields chains do not set. */
const chainReply = comboReply.pick({ id: true, name: true, models: true, targetTimeoutMs: true, affinity: true, createdAt: true, updatedAt: true });

const asCombo = (body: ChainBody) => ({ ...body, strategy: 'priority' as const });

export const fallbackChainRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/fallback-chains',
    tier: 'management',
    tag: 'combos',
    summary: 'Fallback chains: the combos with the priority strategy (targets tried in order)',
    reply: z.object({ chains: z.array(chainReply) }),
    handler: ({ services }) => ({ chains: services.combos.list().filter((c) => c.strategy === 'priority').map(chainView) }),
  }),
  route({
    method: 'POST',
    path: '/api/fallback-chains',
    tier: 'management',
    tag: 'combos',
    summary: 'Create a fallback chain (a priority combo): {name, models, targetTimeoutMs?, affinity?}',
    body: chainBody,
    status: 201,
    reply: chainReply,
    handler: async ({ services, body }) => json(201, chainView(await services.combos.create(checkCombo(asCombo(body), services)))),
  }),
  route({
    method: 'GET',
    path: '/api/fallback-chains/:id',
    tier: 'management',
    tag: 'combos',
    summary: 'One fallback chain',
    reply: chainReply,
    handler: ({ services, params }) => chainView(chainById(services, params.id)),
  }),
  route({
    method: 'PUT',
    path: '/api/fallback-chains/:id',
    tier: 'management',
    tag: 'combos',
    summary: 'Replace a fallback chain (it stays a priority combo)',
    body: chainBody,
    reply: chainReply,
    handler: async ({ services, params, body }) => {
      const rec = chainById(services, params.id);
      const next = await services.combos.update(rec.id, checkCombo(asCombo(body), services, rec.id));
      if (!next) throw new RouterError(404, 'Fallback chain not found.');
      return chainView(next);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/fallback-chains/:id',
    tier: 'management',
    tag: 'combos',
    summary: 'Delete a fallback chain (409 while another combo references it)',
    status: 204,
    reply: NO_CONTENT,
    handler: async ({ services, params }) => {
      const rec = chainById(services, params.id);
      const users = services.combos.referrers(rec.name);
      if (users.length > 0) throw inUse(rec.name, users, 'deleted');
      await services.combos.remove(rec.id);
      return noContent();
    },
  }),
];
