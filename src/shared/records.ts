/**
 * Shapes of the records the management API and the live channel carry (usage, resilience, combos, nodes,
 * webhooks, memory). The daemon builds them and the CLI reads them; both import them from here, so the CLI
 * never reaches into daemon code for a type.
 */

/** Every combo strategy, in the order the spec lists them. */
export const COMBO_STRATEGIES = [
  'priority',
  'weighted',
  'round-robin',
  'random',
  'least-used',
  'cost-optimized',
  'latency-optimized',
] as const;

/** A combo strategy name. */
export type ComboStrategy = (typeof COMBO_STRATEGIES)[number];

/** The strategy of a combo created without one. */
export const DEFAULT_COMBO_STRATEGY: ComboStrategy = 'priority';

/**
 * How the accounts of one provider are chosen: `fill-first` (by priority), `round-robin`, `least-used`, or
 * `headroom` (the account with the most of its reported rate-limit quota left first).
 */
export const ACCOUNT_STRATEGIES = ['fill-first', 'round-robin', 'least-used', 'headroom'] as const;

/** One rate-limit window of an account as its replies last reported it (`GET /api/accounts`). */
export interface AccountLimitWindow {
  /** `requests`, `tokens`, `input-tokens`, `output-tokens`, `unified`, `unified-5h`, `codex-primary`... */
  name: string;
  limit: number | null;
  remaining: number | null;
  /** Share used, 0..1, where the provider reports a share (Anthropic unified, Codex). */
  used: number | null;
  /** Epoch ms of the window's reset, when said. */
  resetAt: number | null;
  /** Share left now, 0..1 (1 once the reset passed). */
  left: number | null;
  resetSeconds: number | null;
}

/** An account (connection) with its remaining quota and cooldowns (`GET /api/accounts`). */
export interface AccountView {
  id: string;
  provider: string;
  providerId: string;
  name: string;
  authKind: string;
  priority: number;
  isActive: boolean;
  /** Share left of its tightest window, 0..1; null until a reply reported one. */
  headroom: number | null;
  limitsUpdatedAt: string | null;
  windows: AccountLimitWindow[];
  /** Cooling for every model until then (usage limit reached, out of credit, auth), or null. */
  coolingUntil: string | null;
  cooldowns: Array<{ model: string; remainingSeconds: number; reason: string }>;
}

/** Cache affinity of a combo (CONTRACT "Routing beyond failover"): keep one conversation on one account and target. */
export const COMBO_AFFINITIES = ['off', 'session', 'prefix'] as const;

/** A combo affinity mode. */
export type ComboAffinity = (typeof COMBO_AFFINITIES)[number];

/** What a combo does with a stream cut or stalled after its first byte (CONTRACT "Routing beyond failover"). */
export const MID_STREAM_RECOVERIES = ['error', 'continue'] as const;

/** A mid-stream recovery mode. */
export type MidStreamRecovery = (typeof MID_STREAM_RECOVERIES)[number];

/** One declared target of a combo: a `<provider>/<model>` or the name of another combo. */
export interface ComboModel {
  model: string;
  /** Relative weight, read only by the `weighted` strategy (missing means 1). */
  weight?: number;
}

/** A stored combo, as the API returns it. Cached records are frozen: replace, never mutate. */
export interface ComboRecord {
  id: string;
  name: string;
  strategy: ComboStrategy;
  /** Declared order, normalized to objects. */
  models: readonly ComboModel[];
  /** Per-target timeout in ms; null means the daemon's default. */
  targetTimeoutMs: number | null;
  /**
   * Cache affinity: `session` keeps a conversation (X-Router-Session-Id or the client's own markers) on the
   * account and target that served it while they stay healthy; `prefix` also recognizes a conversation by
   * its first system and user content; `off` (default) leaves every request to the strategies.
   */
  affinity: ComboAffinity;
  /**
   * Hedged requests: when the target tried sent no byte (a stream's first content, a whole JSON reply)
   * within this many ms, the next target starts too; the first to answer is served, the other aborted.
   * Null: off.
   */
  hedgeAfterMs: number | null;
  /**
   * A stream cut or stalled after its first byte: `error` ends it with the client format's error event,
   * `continue` goes on with the next target, the partial answer as the assistant's prefix, in the same
   * client stream. Null: off (a cut ends with the error event, a stall or a clean cut is not watched).
   */
  midStreamRecovery: MidStreamRecovery | null;
  /** Skip targets whose context window cannot hold the request's estimated tokens plus its max output. */
  contextFit: boolean;
  createdAt: string;
  updatedAt: string;
}

/** A custom OpenAI- or Anthropic-compatible endpoint whose models are `<prefix>/<model>`. */
export interface ProviderNode {
  id: string;
  name: string;
  prefix: string;
  type: 'openai-compatible' | 'anthropic-compatible';
  baseUrl: string;
  apiType: 'chat' | 'responses';
  /** OpenAI-compatible nodes: whether the endpoint serves legacy `/completions` (default true). */
  completions: boolean;
  /** OpenAI-compatible nodes: the shape of `{base}/rerank`, Cohere/Jina (vLLM, Infinity) or Text Embeddings Inference. */
  rerankFormat?: 'cohere' | 'tei';
  /**
   * Chat Completions nodes: the output-limit field sent upstream. `auto` (default): `max_completion_tokens`
   * for OpenAI reasoning models (o-series, gpt-5), which refuse `max_tokens`, else `max_tokens`.
   */
  tokenLimitField?: 'auto' | 'max_tokens' | 'max_completion_tokens';
  customHeaders: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

/** The three breaker states. */
export type BreakerState = 'closed' | 'open' | 'half-open';

/** One cooldown; `until` is epoch ms. */
export interface CooldownEntry {
  connectionId: string;
  model: string;
  until: number;
  reason: string;
}

/** A cooldown as listed for the management API, with the seconds left. */
export interface CooldownView extends CooldownEntry {
  remainingSeconds: number;
}

/**
 * Where a row's cost came from: `reported` (the provider's own figure in its reply), `computed` (tokens
 * times the price of `priceVersion`), `unpriced` (no price known: `costUsd` is null, never a silent 0).
 */
export type CostSource = 'reported' | 'computed' | 'unpriced';

/** One recorded proxied attempt. */
export interface UsageRecord {
  /** Unix ms when the attempt finished. */
  ts: number;
  traceId: string;
  apiKeyId: string | null;
  endpoint: string;
  clientFormat: string | null;
  provider: string;
  /** Upstream model id (no provider prefix). */
  model: string;
  /** What the client named: `<provider>/<model>` or a combo name. */
  requestedModel: string | null;
  connectionId: string | null;
  combo: string | null;
  status: number;
  latencyMs: number;
  upstreamMs: number | null;
  /** IR convention: tokensIn includes cache reads and writes, tokensOut includes reasoning. */
  tokensIn: number;
  tokensOut: number;
  cacheReadTokens: number;
  cacheWriteTokens: number;
  reasoningTokens: number;
  /** The part of cacheWriteTokens written for one hour (Anthropic's 1-hour cache), priced at its own rate; 0 when none. */
  cacheWrite1hTokens?: number;
  /** Audio and image parts of tokensIn and tokensOut (docs/usage.md "One usage model"), priced at their own rates; 0 when none. */
  audioInputTokens?: number;
  audioOutputTokens?: number;
  imageInputTokens?: number;
  imageOutputTokens?: number;
  /** USD; null when unpriced. */
  costUsd: number | null;
  /** Null only on rows recorded before router kept cost sources. */
  costSource: CostSource | null;
  /** The price table that priced a computed row: `override`, `router@<month>` (shipped) or the catalog's `models.dev@<date>`. */
  priceVersion: string | null;
  streamed: boolean;
  /** Tokens were counted by the router because the upstream reported none. */
  estimated: boolean;
  finishReason: string | null;
  error: string | null;
  userAgent: string | null;
  forwardedFor: string | null;
  /** JSON of what request stages reported (compression, guardrails, cache), or null. */
  notes: string | null;
  /**
   * The conversation (sanitized): the client's X-Router-Session(-Id) header, or under a combo's `affinity`
   * the id router derived from the client's own markers or the prompt's prefix; null when unknown.
   */
  sessionId?: string | null;
  /** The model the upstream says it served, when it names another one than `model` (a dated snapshot is the same). */
  servedModel?: string | null;
}

/**
 * A request-log entry as the API returns it (`GET /api/logs`, the live channel): `provider` as people read it
 * (a provider node's prefix), `providerId` the stored id (a node's UUID; a built-in id twice).
 */
export type LogEntry = { id: number; timestamp: string; providerId: string } & Omit<UsageRecord, 'ts'> & {
  /** The API key's name (null when none was used or the key is deleted); `GET /api/logs` and the live channel. */
  apiKeyName?: string | null;
  /** The connection's name (null when none served it or it is deleted). */
  connectionName?: string | null;
};

export interface TokenTotals {
  input: number;
  output: number;
  cacheRead: number;
  cacheWrite: number;
  /** The 1-hour part of cacheWrite. */
  cacheWrite1h: number;
  reasoning: number;
  /** Audio and image parts of input and output. */
  audioInput: number;
  audioOutput: number;
  imageInput: number;
  imageOutput: number;
  total: number;
}

export interface Totals {
  /** Proxied attempts (usage rows). */
  requests: number;
  /** Attempts with status >= 400. */
  errors: number;
  tokens: TokenTotals;
  /** Sum over priced rows; unpriced ones are counted in `unpricedRequests`, not as $0. */
  costUsd: number;
  /** Rows with no known price (their cost is unknown, not 0). */
  unpricedRequests: number;
  avgLatencyMs: number | null;
}

export interface Summary extends Totals {
  from: string;
  to: string;
  /** Client requests (distinct trace ids); lower than requests when attempts failed over. */
  traces: number;
  streamed: number;
  /** Rows whose tokens the router estimated. */
  estimated: number;
}

/** Which group a breakdown row or a timeseries series is. */
export interface GroupLabel {
  /**
   * The group's value: provider (a node's prefix), `<provider>/<model>`, API key id, connection id, endpoint
   * or combo; null when unset.
   */
  key: string | null;
  /** Grouped by provider or model: the stored provider id (a node's UUID). */
  providerId?: string;
  /** Grouped by connection or key: the connection's or key's name (null once deleted). */
  name?: string | null;
}

export interface BreakdownRow extends Totals, GroupLabel {}

/** One group's points in a grouped timeseries (`GET /api/usage/timeseries?groupBy=`). */
export interface SeriesGroup extends GroupLabel {
  points: Point[];
}

export interface Point {
  /** Start of the bucket (UTC). */
  t: string;
  requests: number;
  errors: number;
  tokensIn: number;
  tokensOut: number;
  /** Sum over the bucket's priced rows. */
  costUsd: number;
  /** The bucket's rows with no known price (left out of costUsd, not counted as $0). */
  unpricedRequests: number;
}

export interface Percentiles {
  p50: number | null;
  p95: number | null;
  p99: number | null;
}

export interface ProviderTelemetry {
  /** As people read it (a node's prefix). */
  provider: string;
  providerId: string;
  requests: number;
  errors: number;
  errorRate: number;
  /** Successful attempts: request start to end of reply (streams: last byte). */
  latencyMs: Percentiles;
  /** Successful attempts: time waiting on the upstream (streams: until the first content). */
  upstreamMs: Percentiles;
  /** Successful non-streamed attempts: latency minus upstream time, the router's own share. */
  overheadMs: Percentiles;
}

/** Where a webhook delivers: a generic receiver, or a chat service's incoming-webhook format. */
export type WebhookKind = 'custom' | 'slack' | 'discord' | 'telegram';
export const WEBHOOK_KINDS: readonly WebhookKind[] = ['custom', 'slack', 'discord', 'telegram'];

/** A webhook as stored, without its secret. */
export interface WebhookRecord {
  id: string;
  url: string;
  kind: WebhookKind;
  events: string[];
  enabled: 0 | 1;
  description: string | null;
  created_at: string;
  last_triggered_at: string | null;
  last_status: number | null;
  failure_count: number;
}

/** One delivery attempt as the history keeps it (`GET /api/webhooks/{id}/deliveries`). */
export interface DeliveryRecord {
  at: string;
  event: string;
  /** 1 for the first try; retries count up. */
  attempt: number;
  /** HTTP status; 0 for a network error, a timeout or a blocked destination. */
  status: number;
  ok: boolean;
  /** Empty on success; the sanitized reason otherwise. */
  error: string;
  /** A manual test (`POST /api/webhooks/{id}/test`). */
  test: boolean;
}

/** The API view of a webhook: the record plus its secret (masked, except in the create reply). */
export interface WebhookView extends WebhookRecord {
  secret: string;
}

export const MEMORY_TYPES = ['factual', 'episodic', 'procedural', 'semantic'] as const;
export type MemoryType = (typeof MEMORY_TYPES)[number];

export const MEMORY_STRATEGIES = ['exact', 'semantic', 'hybrid'] as const;
export type MemoryStrategy = (typeof MEMORY_STRATEGIES)[number];

export const EMBEDDING_SOURCES = ['remote', 'static', 'transformers'] as const;
export type EmbeddingSourceKind = (typeof EMBEDDING_SOURCES)[number];

export type VectorStoreKind = 'embedded-vec' | 'external-vec' | 'none';
export type MemoryTier = 'fts5' | 'vector' | 'hybrid-rrf' | 'external-vec';

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

export interface RetrievedMemory {
  id: string;
  type: MemoryType;
  key: string;
  content: string;
  score: number;
  tokens: number;
  tier: MemoryTier;
  vecScore: number | null;
  ftsScore: number | null;
}

export interface Resolution {
  embeddingSource: EmbeddingSourceKind | null;
  embeddingModel: string | null;
  vectorStore: VectorStoreKind;
  strategyUsed: MemoryStrategy;
  rerankApplied: boolean;
  fallbackReason: string | null;
}

export interface RetrieveResult {
  memories: RetrievedMemory[];
  resolution: Resolution;
  totalTokensUsed: number;
  budgetMaxTokens: number;
}

/** Every status of a Batch API batch (OpenAI's), in the order a batch goes through them. */
export const BATCH_STATUSES = ['validating', 'in_progress', 'finalizing', 'completed', 'failed', 'expired', 'cancelling', 'cancelled'] as const;
export type BatchStatus = (typeof BATCH_STATUSES)[number];

/** A batch as `GET /api/batches` and `/v1/batches` show it (OpenAI's batch object plus `mode` and `api_key_id`). */
export interface BatchView {
  id: string;
  object: 'batch';
  endpoint: string;
  errors: { object: 'list'; data: { code: string; message: string; line?: number }[] } | null;
  input_file_id: string;
  completion_window: string;
  status: BatchStatus;
  output_file_id: string | null;
  error_file_id: string | null;
  /** Unix seconds. */
  created_at: number;
  in_progress_at: number | null;
  expires_at: number | null;
  finalizing_at: number | null;
  completed_at: number | null;
  failed_at: number | null;
  expired_at: number | null;
  cancelling_at: number | null;
  cancelled_at: number | null;
  request_counts: { total: number; completed: number; failed: number };
  metadata: Record<string, string> | null;
  /** `local`: router sends the lines itself; `native`: submitted as the provider's own batch. */
  mode: 'local' | 'native';
  /** The API key that created it; null for the dashboard or the CLI. */
  api_key_id: string | null;
}
