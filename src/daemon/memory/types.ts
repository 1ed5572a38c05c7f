/** Shared types of the memory engine (spec "Memory entry", "Memory engine status"). */

import {
  EMBEDDING_SOURCES,
  MEMORY_STRATEGIES as STRATEGIES,
  MEMORY_TYPES,
  type EmbeddingSourceKind,
  type MemoryEntry,
  type MemoryStrategy as Strategy,
  type MemoryTier as Tier,
  type MemoryType,
  type Resolution,
  type RetrievedMemory,
  type RetrieveResult,
  type VectorStoreKind,
} from '../../shared/records.js';

export { EMBEDDING_SOURCES, MEMORY_TYPES, STRATEGIES };
export type { EmbeddingSourceKind, MemoryEntry, MemoryType, Resolution, RetrievedMemory, RetrieveResult, Strategy, Tier, VectorStoreKind };

/** One scope of retrieval: an API key id, or null for the global pool. */
export type Scope = string | null;


export interface CacheStats {
  hits: number;
  misses: number;
  size: number;
}

export interface EngineStatus {
  /** FTS5 in the SQLite file; a tsvector column with a GIN index on PostgreSQL (cluster mode). */
  keyword: { available: boolean; backend: 'FTS5' | 'tsvector' };
  embedding: {
    source: EmbeddingSourceKind | null;
    model: string | null;
    dimensions: number | null;
    available: boolean;
    reason: string;
    cacheStats: CacheStats;
  };
  vectorStore: { backend: VectorStoreKind; available: boolean; rowCount: number; needsReindex: number; reason: string };
  externalVector: { enabled: boolean; healthy: boolean | null; latencyMs: number | null; error: string | null };
  rerank: { enabled: boolean; provider: string | null; model: string | null; available: boolean; reason: string };
}

/** A new memory entry, as the routes, tools and extraction give it. */
export interface CreateInput {
  type: MemoryType;
  key: string;
  content: string;
  sessionId?: string | null;
  apiKeyId?: string | null;
  metadata?: Record<string, unknown>;
  expiresAt?: string | null;
}

export interface RetrieveOptions {
  query: string;
  strategy: Strategy;
  maxTokens: number;
  limit: number;
  scopes: Scope[];
  /** A dry run touches nothing (hit counters included). */
  dryRun: boolean;
}
