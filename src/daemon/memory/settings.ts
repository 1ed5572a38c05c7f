import { z } from 'zod';
import { decryptSecret, encryptSecret } from '../store/secrets.js';
import type { MemoryRepository } from './port.js';
import { EMBEDDING_SOURCES, STRATEGIES } from './types.js';

/**
 * A strict all-optional copy of an object schema with its defaults removed: zod 4's `.partial()` keeps
 * `.default()`, which would turn a one-field patch into a reset of every other field.
 */
function patchOf<S extends z.ZodRawShape>(schema: z.ZodObject<S>) {
  const shape: Record<string, z.ZodType> = {};
  for (const [k, f] of Object.entries(schema.shape)) {
    const field = f as z.ZodType;
    shape[k] = (field instanceof z.ZodDefault ? (field.unwrap() as z.ZodType) : field).optional();
  }
  return z.object(shape).strict() as unknown as z.ZodType<Partial<z.infer<z.ZodObject<S>>>>;
}

const modelId = z
  .string()
  .trim()
  .min(3)
  .max(512)
  .regex(/^[^/\s]+\/\S+$/, 'expected <provider>/<model>');
const folder = z.string().trim().min(1).max(4096);

/**
 * Engine settings (GET/PUT /api/memory/settings). One JSON document in `memory_settings`; a stored value
 * that no longer validates falls back to the defaults field by field.
 */
export const memorySettingsSchema = z.object({
  /** Embedding sources tried in this order; the first available one is used. Empty = keyword only. */
  embeddingOrder: z
    .array(z.enum(EMBEDDING_SOURCES))
    .max(3)
    .refine((a) => new Set(a).size === a.length, 'sources must not repeat')
    .default(['remote', 'static', 'transformers']),
  /** `remote` source: an embeddings model of a configured provider, e.g. `openai/text-embedding-3-small`. */
  remoteModel: modelId.nullable().default(null),
  /** Optional `dimensions` asked of the remote model (OpenAI text-embedding-3 supports it). */
  remoteDimensions: z.number().int().min(1).max(8192).nullable().default(null),
  /** `static` source: folder of a static embedding model (vocab.txt + embeddings.f32 + config.json, or model2vec). */
  staticModelPath: folder.nullable().default(null),
  /** `transformers` source: folder of an ONNX sentence-embedding model (needs @huggingface/transformers). */
  transformersModelPath: folder.nullable().default(null),
  /** Entries of the in-memory LRU of embeddings (query and document texts). 0 disables it. */
  embeddingCacheSize: z.number().int().min(0).max(100_000).default(2000),
  /** Vector hits below this cosine similarity are dropped (nearest neighbours always exist). */
  minSimilarity: z.number().min(-1).max(1).default(0.2),
  /** Background reindex after a signature change or a failed embedding. */
  autoReindex: z.boolean().default(true),
  /** External vector store (Qdrant REST API) base URL, e.g. `http://127.0.0.1:6333`; null = embedded only. */
  qdrantUrl: z.string().trim().url().max(2000).nullable().default(null),
  qdrantCollection: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,128}$/, 'letters, digits, _ and - only')
    .default('router_memories'),
  /** Sent as `api-key`; replies mask it. */
  qdrantApiKey: z.string().max(500).nullable().default(null),
  qdrantTimeoutMs: z.number().int().min(100).max(60_000).default(2000),
  /** Rerank model of a configured provider (`/rerank`, Cohere/Jina shape); null = no rerank. */
  rerankModel: modelId.nullable().default(null),
  /** How many fused candidates are sent to the reranker. */
  rerankCandidates: z.number().int().min(2).max(200).default(40),
  /** Model that summarizes old episodic memories (POST /api/memory/summarize); null = summarization off. */
  summarizationModel: modelId.nullable().default(null),
  /** Episodic memories older than this are summarized. */
  summarizeOlderThanDays: z.number().int().min(0).max(3650).default(7),
  /** Run summarization by itself every 6 hours (needs summarizationModel). */
  autoSummarize: z.boolean().default(false),
  /** Model that extracts memories from conversations; null = built-in heuristic extraction. */
  extractionModel: modelId.nullable().default(null),
  /** Extraction also records each exchange as an episodic memory (summarized later). */
  extractEpisodes: z.boolean().default(true),
  /** Default strategy of injection when a key's settings name none. */
  defaultStrategy: z.enum(STRATEGIES).default('hybrid'),
});

export type MemorySettings = z.infer<typeof memorySettingsSchema>;
export const memorySettingsPatch = patchOf(memorySettingsSchema);
export type MemorySettingsPatch = Partial<MemorySettings>;

/** Settings as replies show them: the Qdrant API key masked. */
export function publicMemorySettings(s: MemorySettings): MemorySettings {
  return { ...s, qdrantApiKey: s.qdrantApiKey ? `${s.qdrantApiKey.slice(0, 4)}...` : null };
}

/** The associated data `qdrantApiKey` is sealed under (backups/rekey.ts re-seals it on import). */
export const QDRANT_KEY_CONTEXT = 'memory:qdrantApiKey';

/** The stored Qdrant key opened: `{enc}` sealed with the state folder's key; null when it cannot be read. */
function openQdrantKey(value: unknown, keyFile: string): unknown {
  const enc = (value as { enc?: unknown } | null)?.enc;
  if (typeof enc !== 'string') return value;
  try {
    return decryptSecret(enc, keyFile, QDRANT_KEY_CONTEXT);
  } catch {
    return null; // unreadable (key file changed): the key must be entered again
  }
}

/** The settings a stored document holds, field by field (a field that no longer validates gets its default). */
export function parseMemorySettings(doc: string | undefined, keyFile: string): { settings: MemorySettings; plainKey: boolean } {
  const stored = doc ? (JSON.parse(doc) as Record<string, unknown>) : {};
  const plainKey = typeof stored.qdrantApiKey === 'string' && stored.qdrantApiKey !== '';
  stored.qdrantApiKey = openQdrantKey(stored.qdrantApiKey, keyFile);
  const out: Record<string, unknown> = {};
  for (const [key, field] of Object.entries(memorySettingsSchema.shape)) {
    const parsed = (field as z.ZodType).safeParse(stored[key]);
    out[key] = parsed.success ? parsed.data : (field as z.ZodType).parse(undefined);
  }
  return { settings: out as MemorySettings, plainKey };
}

/** The document stored for the settings: the Qdrant API key sealed (AES-256-GCM, store/secrets.ts), never plain. */
export function sealMemorySettings(s: MemorySettings, keyFile: string): string {
  const sealed = s.qdrantApiKey ? { ...s, qdrantApiKey: { enc: encryptSecret(s.qdrantApiKey, keyFile, QDRANT_KEY_CONTEXT) } } : s;
  return JSON.stringify(sealed);
}

/**
 * The stored settings. A Qdrant API key written in plain text by an older router is sealed in place on this
 * first read (migration of existing values).
 */
export async function loadMemorySettings(repo: MemoryRepository, keyFile: string): Promise<MemorySettings> {
  const { settings, plainKey } = parseMemorySettings(await repo.loadSettings(), keyFile);
  if (plainKey) await saveMemorySettings(repo, settings, keyFile);
  return settings;
}

export async function saveMemorySettings(repo: MemoryRepository, s: MemorySettings, keyFile: string): Promise<void> {
  await repo.saveSettings(sealMemorySettings(s, keyFile), new Date());
}

/** Per-API-key use of memory in conversations (GET/PUT /api/memory/keys/:keyId/settings). */
export const keySettingsSchema = z.object({
  /** Inject relevant memories as a leading system block into chat/messages/responses requests. */
  inject: z.boolean().default(false),
  /** Extract new memories from conversations (after the reply, in the background). */
  extract: z.boolean().default(false),
  /** Token budget of the injected memories. */
  injectMaxTokens: z.number().int().min(1).max(16_000).default(1000),
  /** Most memories injected. */
  injectLimit: z.number().int().min(1).max(100).default(10),
  strategy: z.enum(STRATEGIES).default('hybrid'),
  /** Which pools injection searches: the key's own, the global pool, or both. */
  scope: z.enum(['key', 'global', 'both']).default('both'),
});
export type KeySettings = z.infer<typeof keySettingsSchema>;
export const keySettingsPatch = patchOf(keySettingsSchema);

/**
 * Per-key settings, kept in memory (the request path reads them on every call). Writes reach the port
 * first and the snapshot once stored; `reload()` replaces the snapshot (another node wrote).
 */
export class KeySettingsStore {
  private byKey = new Map<string, KeySettings>();

  private constructor(private readonly repo: MemoryRepository) {}

  static async create(repo: MemoryRepository): Promise<KeySettingsStore> {
    const store = new KeySettingsStore(repo);
    await store.reload();
    return store;
  }

  async reload(): Promise<void> {
    this.byKey = new Map((await this.repo.loadKeySettings()).map((r) => [r.apiKeyId, r.settings]));
  }

  /** The stored settings, or the defaults. */
  get(apiKeyId: string): KeySettings {
    return this.byKey.get(apiKeyId) ?? keySettingsSchema.parse({});
  }

  /** Stored settings only (undefined = defaults, i.e. memory off for this key). */
  peek(apiKeyId: string): KeySettings | undefined {
    return this.byKey.get(apiKeyId);
  }

  async set(apiKeyId: string, s: KeySettings): Promise<KeySettings> {
    await this.repo.saveKeySettings(apiKeyId, s, new Date());
    this.byKey.set(apiKeyId, s);
    return s;
  }

  /** Forgets a deleted key (the row goes with the key through ON DELETE CASCADE). */
  forget(apiKeyId: string): void {
    this.byKey.delete(apiKeyId);
  }
}
