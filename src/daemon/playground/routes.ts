import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { json, noContent, route, type RouteContext, type RouteDef } from '../http/routes.js';
import { improvePrompt, IMPROVE_ENDPOINT } from './improve.js';
import type { PresetOwner } from './presets.js';
import { improveBody, improvedReply, presetBody, presetReply } from './schema.js';
import { NO_CONTENT } from '../http/replies.js';

const idParam = z.uuid();

/** Presets belong to the calling API key; dashboard sessions share one dashboard-owned set (null). */
function ownerOf(ctx: RouteContext): PresetOwner {
  return ctx.auth.key?.id ?? null;
}

const notFound = () => new RouterError(404, 'Preset not found.');

/** The `:id` param; a non-uuid id is a 404 like an unknown one (or another owner's preset). */
function presetId(ctx: RouteContext): string {
  const id = ctx.params.id ?? '';
  if (!idParam.safeParse(id).success) throw notFound();
  return id;
}

/** Fails with the 404 when the store found nothing. */
function found<T>(value: T | undefined | false): T {
  if (value === undefined || value === false) throw notFound();
  return value;
}

/** Playground: saved presets and prompt improvement. Client tier: an API key with the proxy scope, or a session. */
export const playgroundRoutes: RouteDef[] = [
  route({
    method: 'POST',
    path: IMPROVE_ENDPOINT,
    tier: 'client',
    tag: 'playground',
    summary: "Improve a system prompt and/or prompt with the given model (runs through Chat Completions: the caller's quotas and usage apply)",
    body: improveBody,
    reply: improvedReply,
    handler: (ctx) => improvePrompt(ctx, ctx.body),
  }),
  route({
    method: 'GET',
    path: '/api/playground/presets',
    tier: 'client',
    tag: 'playground',
    summary: "The caller's presets, newest first",
    reply: z.object({ presets: z.array(presetReply) }),
    handler: async (ctx) => ({ presets: await ctx.services.presets.list(ownerOf(ctx)) }),
  }),
  route({
    method: 'POST',
    path: '/api/playground/presets',
    tier: 'client',
    tag: 'playground',
    summary: 'Save a preset (owned by the calling key)',
    body: presetBody,
    status: 201,
    reply: presetReply,
    handler: async (ctx) => json(201, await ctx.services.presets.create(ownerOf(ctx), ctx.body)),
  }),
  route({
    method: 'GET',
    path: '/api/playground/presets/:id',
    tier: 'client',
    tag: 'playground',
    summary: 'One preset',
    reply: presetReply,
    handler: async (ctx) => found(await ctx.services.presets.get(ownerOf(ctx), presetId(ctx))),
  }),
  route({
    method: 'PUT',
    path: '/api/playground/presets/:id',
    tier: 'client',
    tag: 'playground',
    summary: 'Replace a preset (same body as create; omitted fields reset to their defaults)',
    body: presetBody,
    reply: presetReply,
    handler: async (ctx) => found(await ctx.services.presets.replace(ownerOf(ctx), presetId(ctx), ctx.body)),
  }),
  route({
    method: 'DELETE',
    path: '/api/playground/presets/:id',
    tier: 'client',
    tag: 'playground',
    summary: 'Delete a preset',
    status: 204,
    reply: NO_CONTENT,
    handler: async (ctx) => {
      found(await ctx.services.presets.remove(ownerOf(ctx), presetId(ctx)));
      return noContent();
    },
  }),
];
