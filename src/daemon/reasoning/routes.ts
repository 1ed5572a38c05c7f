import { z } from 'zod';
import { RouterError } from '../http/errors.js';
import { isoTime } from '../http/replies.js';
import { route, type RouteDef } from '../http/routes.js';
import type { ReasoningEntry } from './cache.js';

const listQuery = z.object({ full: z.enum(['0', '1', 'true', 'false']).optional() });

/** An entry as listed: its reasoning summarized (kinds and sizes), or whole with `?full=1`. */
function view(e: ReasoningEntry, full: boolean) {
  return {
    id: e.id,
    issuer: e.issuer,
    provider: e.providerId,
    model: e.model,
    toolCallIds: e.toolCallIds,
    bytes: e.bytes,
    createdAt: new Date(e.createdAt).toISOString(),
    lastUsedAt: new Date(e.lastUsedAt).toISOString(),
    hits: e.hits,
    parts: full
      ? e.parts
      : e.parts.map((p) => (p.type === 'thinking' ? { type: p.type, textChars: p.text.length, signed: !!p.signature } : { type: p.type, dataChars: p.data.length })),
  };
}

const issuer = z.enum(['anthropic', 'gemini', 'openai']);
const reasoningReply = z.object({
  stats: z.object({
    entries: z.number(),
    bytes: z.number(),
    maxEntries: z.number(),
    maxBytes: z.number(),
    ttlSeconds: z.number(),
    hits: z.number(),
    misses: z.number(),
    stores: z.number(),
    evictions: z.number(),
  }),
  entries: z.array(
    z.object({
      id: z.string(),
      issuer,
      provider: z.string(),
      model: z.string(),
      toolCallIds: z.array(z.string()),
      bytes: z.number(),
      createdAt: isoTime,
      lastUsedAt: isoTime,
      hits: z.number(),
      /** Whole with `?full=1`, else each part's kind and size. */
      parts: z.array(
        z.union([
          z.object({ type: z.literal('thinking'), text: z.string(), signature: z.string().optional(), issuer: issuer.optional() }),
          z.object({ type: z.literal('redacted_thinking'), data: z.string() }),
          z.object({ type: z.literal('thinking'), textChars: z.number(), signed: z.boolean() }),
          z.object({ type: z.literal('redacted_thinking'), dataChars: z.number() }),
        ]),
      ),
    }),
  ),
});
const clearedReply = z.object({ cleared: z.number() });

/** The reasoning cache (docs/operations.md "Reasoning cache"): inspect and clear. */
export const reasoningRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/cache/reasoning',
    tier: 'management',
    tag: 'cache',
    summary: 'Reasoning cache statistics and entries, most recently used first (reasoning summarized; ?full=1 for the whole text and signatures)',
    query: listQuery,
    reply: reasoningReply,
    handler: ({ services, query }) => {
      const full = query.full === '1' || query.full === 'true';
      return { stats: services.reasoningCache.stats(), entries: services.reasoningCache.list().map((e) => view(e, full)) };
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/cache/reasoning',
    tier: 'management',
    tag: 'cache',
    summary: 'Clears the reasoning cache',
    reply: clearedReply,
    handler: ({ services }) => ({ cleared: services.reasoningCache.clear() }),
  }),
  route({
    method: 'DELETE',
    path: '/api/cache/reasoning/:id',
    tier: 'management',
    tag: 'cache',
    summary: 'Removes one reasoning cache entry',
    reply: clearedReply,
    handler: ({ services, params }) => {
      if (!services.reasoningCache.remove(params.id ?? '')) throw new RouterError(404, 'Reasoning cache entry not found.');
      return { cleared: 1 };
    },
  }),
];
