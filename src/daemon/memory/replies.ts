import { z } from 'zod';
import type { MemoryEntry, RetrieveResult } from '../../shared/records.js';
import { EMBEDDING_SOURCES, MEMORY_STRATEGIES, MEMORY_TYPES } from '../../shared/records.js';
import { isoTime } from '../http/replies.js';
import type { EmbeddingSelector } from './embedding/selector.js';
import { keySettingsSchema } from './settings.js';
import type { EngineStatus } from './types.js';

/** Reply schemas of the memory routes (RouteDef.reply). */

export const memoryEntry = z.object({
  id: z.string(),
  type: z.enum(MEMORY_TYPES),
  key: z.string(),
  content: z.string(),
  sessionId: z.string().nullable(),
  apiKeyId: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()),
  expiresAt: isoTime.nullable(),
  tokens: z.number(),
  hitCount: z.number(),
  lastHitAt: isoTime.nullable(),
  archived: z.boolean(),
  createdAt: isoTime,
  updatedAt: isoTime,
}) satisfies z.ZodType<MemoryEntry>;

export const memoryListReply = z.object({
  data: z.array(memoryEntry),
  total: z.number(),
  totalPages: z.number(),
  stats: z.object({ total: z.number(), tokensUsed: z.number(), hitRate: z.number(), cacheStats: z.object({ hits: z.number(), misses: z.number() }) }),
});

export const memoryHealthReply = z.object({ working: z.boolean(), latencyMs: z.number(), error: z.string().nullable() });

const reason = z.string();
export const engineStatusReply = z.object({
  keyword: z.object({ available: z.boolean(), backend: z.literal('FTS5') }),
  embedding: z.object({
    source: z.enum(EMBEDDING_SOURCES).nullable(),
    model: z.string().nullable(),
    dimensions: z.number().nullable(),
    available: z.boolean(),
    reason,
    cacheStats: z.object({ hits: z.number(), misses: z.number(), size: z.number() }),
  }),
  vectorStore: z.object({ backend: z.enum(['embedded-vec', 'external-vec', 'none']), available: z.boolean(), rowCount: z.number(), needsReindex: z.number(), reason }),
  externalVector: z.object({ enabled: z.boolean(), healthy: z.boolean().nullable(), latencyMs: z.number().nullable(), error: z.string().nullable() }),
  rerank: z.object({ enabled: z.boolean(), provider: z.string().nullable(), model: z.string().nullable(), available: z.boolean(), reason }),
}) satisfies z.ZodType<EngineStatus>;

export const embeddingProvidersReply = z.object({
  providers: z.array(
    z.object({
      provider: z.string(),
      hasKey: z.boolean(),
      models: z.array(z.object({ id: z.string(), name: z.string(), dimensions: z.number().nullable() })),
    }) satisfies z.ZodType<Awaited<ReturnType<EmbeddingSelector['providers']>>[number]>,
  ),
});

export const retrieveReply = z.object({
  memories: z.array(
    z.object({
      id: z.string(),
      type: z.enum(MEMORY_TYPES),
      key: z.string(),
      content: z.string(),
      score: z.number(),
      tokens: z.number(),
      tier: z.enum(['fts5', 'vector', 'hybrid-rrf', 'external-vec']),
      vecScore: z.number().nullable(),
      ftsScore: z.number().nullable(),
    }),
  ),
  resolution: z.object({
    embeddingSource: z.enum(EMBEDDING_SOURCES).nullable(),
    embeddingModel: z.string().nullable(),
    vectorStore: z.enum(['embedded-vec', 'external-vec', 'none']),
    strategyUsed: z.enum(MEMORY_STRATEGIES),
    rerankApplied: z.boolean(),
    fallbackReason: z.string().nullable(),
  }),
  totalTokensUsed: z.number(),
  budgetMaxTokens: z.number(),
}) satisfies z.ZodType<RetrieveResult>;

export const keySettingsReply = keySettingsSchema.extend({ apiKeyId: z.string() });
export const reindexReply = z.object({ signature: z.string().nullable(), pending: z.number(), error: z.string().nullable() });
export const summarizeReply = z.object({
  summaries: z.array(memoryEntry),
  archived: z.number(),
  groups: z.array(z.object({ sessionId: z.string().nullable(), count: z.number() })),
});
