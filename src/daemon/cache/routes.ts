import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { isoTime } from '../http/replies.js';
import { route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import { corePatchSchema, type SettingsPatch } from '../settings/store.js';
import { CACHE_KEY_MODES, type CacheKeyMode } from './key-modes.js';

/**
 * Hit and miss counters, what is held, and the settings (GET /api/cache). Counters are this node's; in
 * cluster mode with Redis, entries and bytes are the shared cache's (sealed values).
 */
export async function cacheStatus(services: Services) {
  const s = services.settings.get();
  const { counters, since } = services.cache;
  const size = services.sharedCache ? await services.sharedCache.size() : services.cache.size();
  const lookups = counters.hits + counters.misses;
  return {
    enabled: s.cacheEnabled,
    ttlSeconds: s.cacheTtlSeconds,
    maxEntries: s.cacheMaxEntries,
    maxBytes: s.cacheMaxBytes,
    ...size,
    ...counters,
    hitRate: lookups ? counters.hits / lookups : 0,
    since: new Date(since).toISOString(),
  };
}

const S = corePatchSchema.shape;
/** PATCH /api/cache: the cache settings under short names, with the bounds of their /api/settings twins. */
const cachePatch = z.strictObject({ enabled: S.cacheEnabled, ttlSeconds: S.cacheTtlSeconds, maxEntries: S.cacheMaxEntries, maxBytes: S.cacheMaxBytes });
const SETTING_OF = { enabled: 'cacheEnabled', ttlSeconds: 'cacheTtlSeconds', maxEntries: 'cacheMaxEntries', maxBytes: 'cacheMaxBytes' } as const;

const cacheStatusReply = z.object({
  enabled: z.boolean(),
  ttlSeconds: z.number(),
  maxEntries: z.number(),
  maxBytes: z.number(),
  entries: z.number(),
  bytes: z.number(),
  hits: z.number(),
  misses: z.number(),
  stores: z.number(),
  evictions: z.number(),
  expirations: z.number(),
  tooLarge: z.number(),
  savedTokens: z.number(),
  hitRate: z.number(),
  since: isoTime,
}) satisfies z.ZodType<Awaited<ReturnType<typeof cacheStatus>>>;

const mode = z.enum(CACHE_KEY_MODES as [CacheKeyMode, ...CacheKeyMode[]]);
const modeBody = z.strictObject({ mode });
const keyModeReply = z.object({ keyId: z.string(), mode });

const missingKey = () => new RouterError(404, 'API key not found.');

function keyById(services: Services, id: string | undefined) {
  const key = id ? services.keys.get(id) : undefined;
  if (!key) throw missingKey();
  return key;
}

/** The response cache's management routes. */
export const cacheRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/cache',
    tier: 'management',
    tag: 'cache',
    summary: 'Response cache: hit/miss counters since start, entries and bytes held, settings',
    reply: cacheStatusReply,
    handler: ({ services }) => cacheStatus(services),
  }),
  route({
    method: 'PATCH',
    path: '/api/cache',
    tier: 'management',
    tag: 'cache',
    summary: 'Change the cache settings (enabled, ttlSeconds, maxEntries, maxBytes); same bounds as /api/settings',
    body: cachePatch,
    reply: cacheStatusReply,
    handler: async ({ services, body }) => {
      const patch: SettingsPatch = {};
      for (const [name, setting] of Object.entries(SETTING_OF)) {
        const value = body[name as keyof typeof SETTING_OF];
        if (value !== undefined) Object.assign(patch, { [setting]: value });
      }
      await services.settings.update(patch);
      return cacheStatus(services);
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/cache',
    tier: 'management',
    tag: 'cache',
    summary: 'Purge every cached reply',
    reply: z.object({ purged: z.number() }),
    handler: async ({ services }) => ({ purged: services.sharedCache ? await services.sharedCache.purge() : services.cache.purge() }),
  }),
  route({
    method: 'GET',
    path: '/api/cache/keys/:id',
    tier: 'management',
    tag: 'cache',
    summary: "An API key's cache mode (off, request, always)",
    reply: keyModeReply,
    handler: ({ services, params }) => {
      const key = keyById(services, params.id);
      return { keyId: key.id, mode: services.cacheModes.get(key.id) };
    },
  }),
  route({
    method: 'PUT',
    path: '/api/cache/keys/:id',
    tier: 'management',
    tag: 'cache',
    summary: "Set an API key's cache mode: off (never), request (requests that opt in; default), always (unless a request opts out)",
    body: modeBody,
    reply: keyModeReply,
    handler: async ({ services, params, body }) => {
      const key = keyById(services, params.id);
      if (!(await services.cacheModes.set(key.id, body.mode))) throw missingKey();
      return { keyId: key.id, mode: body.mode };
    },
  }),
];
