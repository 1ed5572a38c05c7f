import { z } from 'zod';
import { badRequest, RouterError, publicReason } from '../http/errors.js';
import { json, route, type RouteDef } from '../http/routes.js';
import type { Services } from '../services.js';
import { keySettingsPatch, memorySettingsPatch, memorySettingsSchema, publicMemorySettings, type KeySettings, type MemorySettingsPatch } from './settings.js';
import { embeddingProvidersReply, engineStatusReply, keySettingsReply, memoryEntry, memoryHealthReply, memoryListReply, reindexReply, retrieveReply, summarizeReply } from './replies.js';
import { MEMORY_TYPES, STRATEGIES, type Scope } from './types.js';

const memoryType = z.enum(MEMORY_TYPES);
const uuid = z.string().uuid();
/** apiKeyId: a key id; omitted (or null) = the global pool. */
const apiKeyId = z.string().min(1).max(200).nullable().optional();
const metadata = z.record(z.string(), z.unknown());
const expiresAt = z.iso
  .datetime({ offset: true })
  .transform((s) => new Date(s).toISOString())
  .nullable()
  .optional();

/** An integer query parameter in [min, max]. */
function intParam(min: number, max = Number.MAX_SAFE_INTEGER) {
  return z
    .string()
    .trim()
    .regex(/^-?\d+$/, 'expected an integer')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max))
    .optional();
}

const createBody = z.object({
  content: z.string().min(1),
  key: z.string().min(1),
  type: memoryType.default('factual'),
  sessionId: z.string().max(500).nullable().optional(),
  apiKeyId,
  metadata: metadata.optional(),
  expiresAt,
});

const updateBody = z
  .object({
    type: memoryType.optional(),
    key: z.string().min(1).optional(),
    content: z.string().min(1).optional(),
    metadata: metadata.optional(),
  })
  .strict();

const listQuery = z.object({
  apiKeyId: z.string().min(1).max(200).optional(),
  type: memoryType.optional(),
  sessionId: z.string().max(500).optional(),
  q: z.string().max(1000).optional(),
  limit: intParam(1, 200),
  page: intParam(1),
  offset: intParam(0),
});

const previewBody = z
  .object({
    query: z.string().min(1),
    strategy: z.enum(STRATEGIES).default('hybrid'),
    maxTokens: z.number().int().min(1).max(16_000).default(2000),
    apiKeyId,
    limit: z.number().int().min(1).max(100).default(20),
  })
  .strict();

const reindexBody = z
  .object({
    /** Re-embed every row, not only those whose vector is missing or stale. */
    full: z.boolean().default(false),
    /** Answer when the reindex is done (default) or at once with 202. */
    wait: z.boolean().default(true),
  })
  .strict();

const summarizeBody = z
  .object({
    apiKeyId,
    sessionId: z.string().max(500).optional(),
    olderThanDays: z.number().int().min(0).max(3650).optional(),
    dryRun: z.boolean().default(false),
  })
  .strict();

function memoryId(params: Record<string, string>): string {
  const id = params.id ?? '';
  if (!uuid.safeParse(id).success) throw new RouterError(404, 'Memory not found.');
  return id;
}

function keyOf(services: Services, params: Record<string, string>): string {
  const id = params.keyId ?? '';
  if (!services.keys.get(id)) throw new RouterError(404, 'API key not found.');
  return id;
}

const scopeOf = (v: string | null | undefined): Scope => v ?? null;

/** Memory routes (spec "Memory (auth Mgmt)") and the engine's settings, reindex and summarization routes. */
export const memoryRoutes: RouteDef[] = [
  route({
    method: 'GET',
    path: '/api/memory',
    tier: 'management',
    tag: 'memory',
    summary: 'List memories (newest first; apiKeyId omitted = global pool) with paging and stats',
    query: listQuery,
    reply: memoryListReply,
    handler: ({ services, query }) => {
      const limit = query.limit ?? 50;
      const page = query.page ?? 1;
      const offset = query.offset ?? (page - 1) * limit;
      return services.memory.list({
        apiKeyId: scopeOf(query.apiKeyId),
        type: query.type,
        sessionId: query.sessionId,
        q: query.q || undefined,
        limit,
        offset,
      });
    },
  }),
  route({
    method: 'POST',
    path: '/api/memory',
    tier: 'management',
    tag: 'memory',
    summary: 'Create a memory (embedded at once when an embedding source is available)',
    body: createBody,
    status: 201,
    reply: memoryEntry,
    handler: async ({ services, body }) => json(201, await services.memory.create({ ...body, apiKeyId: scopeOf(body.apiKeyId) })),
  }),
  route({
    method: 'GET',
    path: '/api/memory/health',
    sideEffects: true,
    tier: 'management',
    tag: 'memory',
    summary: 'Memory store health: a real create, list and delete round trip',
    reply: memoryHealthReply,
    handler: ({ services }) => services.memory.health(),
  }),
  route({
    method: 'GET',
    path: '/api/memory/engine-status',
    tier: 'management',
    tag: 'memory',
    summary: 'Keyword index, embedding source, vector stores, rerank',
    reply: engineStatusReply,
    handler: ({ services }) => services.memory.status(),
  }),
  route({
    method: 'GET',
    path: '/api/memory/embedding-providers',
    tier: 'management',
    tag: 'memory',
    summary: 'Providers with an embeddings endpoint and their embedding models',
    reply: embeddingProvidersReply,
    handler: async ({ services }) => ({ providers: await services.memory.embeddingProviders() }),
  }),
  route({
    method: 'POST',
    path: '/api/memory/retrieve-preview',
    tier: 'management',
    tag: 'memory',
    summary: 'Dry-run retrieval: what a query would retrieve, and how; modifies nothing',
    body: previewBody,
    reply: retrieveReply,
    handler: ({ services, body }) =>
      services.memory.retrieve({
        query: body.query,
        strategy: body.strategy,
        maxTokens: body.maxTokens,
        limit: body.limit,
        scopes: [scopeOf(body.apiKeyId)],
        dryRun: true,
      }),
  }),
  route({
    method: 'GET',
    path: '/api/memory/settings',
    tier: 'management',
    tag: 'memory',
    summary: 'Memory engine settings (embedding sources, external vector store, rerank, summarization, extraction)',
    reply: memorySettingsSchema,
    handler: ({ services }) => publicMemorySettings(services.memory.settings),
  }),
  route({
    method: 'PUT',
    path: '/api/memory/settings',
    tier: 'management',
    tag: 'memory',
    summary: 'Update memory engine settings; answers once the embedding source reflects them',
    body: memorySettingsPatch,
    reply: memorySettingsSchema,
    handler: async ({ services, body }) => {
      const patch = { ...body } as MemorySettingsPatch;
      // A masked key echoed back from GET keeps the stored one.
      if (typeof patch.qdrantApiKey === 'string' && patch.qdrantApiKey === publicMemorySettings(services.memory.settings).qdrantApiKey) {
        delete patch.qdrantApiKey;
      }
      return publicMemorySettings(await services.memory.updateSettings(patch));
    },
  }),
  route({
    method: 'GET',
    path: '/api/memory/keys/:keyId/settings',
    tier: 'management',
    tag: 'memory',
    summary: "An API key's memory use in conversations (inject, extract, budget)",
    reply: keySettingsReply,
    handler: ({ services, params }) => ({ apiKeyId: keyOf(services, params), ...services.memory.keySettings.get(keyOf(services, params)) }),
  }),
  route({
    method: 'PUT',
    path: '/api/memory/keys/:keyId/settings',
    tier: 'management',
    tag: 'memory',
    summary: "Update an API key's memory use in conversations",
    body: keySettingsPatch,
    reply: keySettingsReply,
    handler: async ({ services, params, body }) => {
      const id = keyOf(services, params);
      const next = { ...services.memory.keySettings.get(id), ...body } as KeySettings;
      return { apiKeyId: id, ...(await services.memory.setKeySettings(id, next)) };
    },
  }),
  route({
    method: 'POST',
    path: '/api/memory/reindex',
    tier: 'management',
    tag: 'memory',
    summary: 'Embed memories whose vector is missing or stale (all with full: true)',
    body: reindexBody,
    reply: reindexReply,
    handler: async ({ services, body }) => {
      const r = await services.memory.reindex(body);
      return body.wait ? r : json(202, r);
    },
  }),
  route({
    method: 'POST',
    path: '/api/memory/summarize',
    tier: 'management',
    tag: 'memory',
    summary: 'Summarize old episodic memories of a scope with the summarization model; originals are archived',
    body: summarizeBody,
    reply: summarizeReply,
    handler: async ({ services, body }) => {
      if (!services.memory.settings.summarizationModel) throw badRequest('No summarization model is configured (PUT /api/memory/settings summarizationModel).', 'summarizationModel');
      try {
        return await services.memory.summarize({ ...body, apiKeyId: scopeOf(body.apiKeyId) });
      } catch (err) {
        services.log.warn('memory summarization failed', { error: (err as Error).message });
        throw new RouterError(502, `Summarization failed: ${publicReason(err)}.`);
      }
    },
  }),
  route({
    method: 'GET',
    path: '/api/memory/:id',
    tier: 'management',
    tag: 'memory',
    summary: 'One memory',
    reply: memoryEntry,
    handler: async ({ services, params }) => {
      const m = await services.memory.get(memoryId(params));
      if (!m) throw new RouterError(404, 'Memory not found.');
      return m;
    },
  }),
  route({
    method: 'PUT',
    path: '/api/memory/:id',
    tier: 'management',
    tag: 'memory',
    summary: 'Update type, key, content or metadata of a memory; its vector is regenerated',
    body: updateBody,
    reply: memoryEntry,
    handler: async ({ services, params, body }) => {
      const m = await services.memory.update(memoryId(params), body);
      if (!m) throw new RouterError(404, 'Memory not found.');
      return m;
    },
  }),
  route({
    method: 'DELETE',
    path: '/api/memory/:id',
    tier: 'management',
    tag: 'memory',
    summary: 'Delete a memory, its vector and (best-effort) its external point',
    reply: z.object({ success: z.literal(true) }),
    handler: async ({ services, params }) => {
      if (!(await services.memory.delete(memoryId(params)))) throw new RouterError(404, 'Memory not found.');
      return { success: true };
    },
  }),
];
