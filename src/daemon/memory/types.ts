/** Shared types of the memory engine (spec "Memory entry", "Memory engine status"). */

export const MEMORY_TYPES = ['factual', 'episodic', 'procedural', 'semantic'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

export const STRATEGIES = ['exact', 'semantic', 'hybrid'] as const;
export type Strategy = (typeof STRATEGIES)[number];

export const EMBEDDING_SOURCES = ['remote', 'static', 'transformers'] as const;
export type EmbeddingSourceKind = (typeof EMBEDDING_SOURCES)[number];

export type VectorStoreKind = 'embedded-vec' | 'external-vec' | 'none';
export type Tier = 'fts5' | 'vector' | 'hybrid-rrf' | 'external-vec';

/** A memory as the API shows it. */
export interface MemoryEntry {
  id: string;
  type: MemoryType;
  key: string;
  content: string;
  sessionId: string | null;
  /** null = the global pool. */
  apiKeyId: string | null;
  metadata: Record<string, unknown>;
  expiresAt: string | null;
  /** gpt-tokenizer count of `key: content` (what injection spends). */
  tokens: number;
  hitCount: number;
  lastHitAt: string | null;
  /** True once folded into a summary: still listed, no longer retrieved. */
  archived: boolean;
  createdAt: string;
  updatedAt: string;
}

/** One scope of retrieval: an API key id, or null for the global pool. */
export type Scope = string | null;

export interface RetrievedMemory {
  id: string;
  type: MemoryType;
  key: string;
  content: string;
  score: number;
  tokens: number;
  tier: Tier;
  vecScore: number | null;
  ftsScore: number | null;
}

export interface Resolution {
  embeddingSource: EmbeddingSourceKind | null;
  embeddingModel: string | null;
  vectorStore: VectorStoreKind;
  strategyUsed: Strategy;
  rerankApplied: boolean;
  fallbackReason: string | null;
}

export interface RetrieveResult {
  memories: RetrievedMemory[];
  resolution: Resolution;
  totalTokensUsed: number;
  budgetMaxTokens: number;
}

export interface CacheStats {
  hits: number;
  misses: number;
  size: number;
}

export interface EngineStatus {
  keyword: { available: boolean; backend: 'FTS5' };
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
