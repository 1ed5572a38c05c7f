import type { StatePaths } from '../shared/paths.js';
import type { PasswordStore } from './auth/password.js';
import type { SessionStore } from './auth/sessions.js';
import type { KeyStore } from './keys/store.js';
import type { ComboStore } from './combos/store.js';
import type { Logger } from './logger.js';
import type { SettingsStore } from './settings/store.js';
import type { Db } from './store/db.js';
import type { RouteDef } from './http/routes.js';
import type { EventBus } from './events/bus.js';
import type { WebhookService } from './webhooks/service.js';
import type { UsageService } from './usage/service.js';
import type { LiveHub } from './live/hub.js';
import type { ResponsesSocketServer } from './responses-ws/server.js';
import type { ConnectionStore } from './providers/connections.js';
import type { ProviderDirectory } from './providers/directory.js';
import type { SyncedModels } from './providers/models.js';
import type { NodeStore } from './providers/nodes.js';
import type { QuotaService } from './quotas/index.js';
import type { Resilience } from './resilience/service.js';
import type { StageRegistry } from './proxy/stages.js';
import type { GuardrailService } from './guardrails/store.js';
import type { MemoryService } from './memory/service.js';
import type { PresetStore } from './playground/presets.js';
import type { ResponseCache } from './cache/store.js';
import type { CacheKeyModes } from './cache/key-modes.js';
import type { SharedResponseCache } from './cache/shared.js';
import type { SyncNonceRepository } from './sync/nonces.js';
import type { TokenRefresher } from './resilience/refresher.js';
import type { OAuthLogins } from './oauth/flows.js';
import type { TrafficCapture } from './inspect/capture.js';
import type { TranslatorHistory } from './insights/translator-history.js';
import type { CliToolLog } from './insights/cli-tool-log.js';
import type { EvalService } from './evals/service.js';
import type { BackupService } from './backups/service.js';
import type { Metrics } from './observability/metrics.js';
import type { Tracing } from './observability/tracing.js';
import type { HookService } from './hooks/store.js';
import type { ReasoningCache } from './reasoning/cache.js';
import type { McpService } from './mcp/server.js';
import type { SkillCatalog } from './skills/catalog.js';
import type { BatchService } from './batches/service.js';
import type { CatalogService } from './catalog/service.js';
import type { HotState } from './hot/port.js';
import type { SharedDatabase } from './cluster/database.js';
import type { NodeRegistry } from './cluster/registry.js';
import type { ChangeFeed } from './store/changes.js';
import type { A2aTaskRepository } from './a2a/port.js';

/** Everything handlers may use, built once at start and passed to every route through its context. */
export interface Services {
  db: Db;
  paths: StatePaths;
  version: string;
  /** Unix ms when the daemon started. */
  startedAt: number;
  listen: { host: string; port: number; url: string };
  settings: SettingsStore;
  /** Provider connections (accounts), credentials decrypted in memory. */
  connections: ConnectionStore;
  /** Custom provider nodes. */
  nodes: NodeStore;
  /** Models synced from upstreams. */
  syncedModels: SyncedModels;
  /** Provider lookup and model -> target resolution. */
  providers: ProviderDirectory;
  /** Breakers, cooldowns, account selection, latency and combo state (persisted write-behind). */
  resilience: Resilience;
  /** Request-shaping stages (guardrails, memory, compression, cache) the pipeline runs. */
  stages: StageRegistry;
  /** Guardrail configuration (global and per key) and its compiled policies; its stage is registered on `stages`. */
  guardrails: GuardrailService;
  /** Request hooks (match + actions as data), compiled on change; their stage is registered on `stages`. */
  hooks: HookService;
  /** Reasoning (thinking + signatures) of tool-call turns, re-inserted when a client drops it; its stage is on `stages`. */
  reasoningCache: ReasoningCache;
  /** Memory engine: entries, FTS5 + sqlite-vec retrieval, embedding sources, injection/extraction stage. */
  memory: MemoryService;
  /** Exact-match response cache (in memory, written behind to SQLite); its stage is registered on `stages`. */
  cache: ResponseCache;
  /** Cluster mode with Redis: the response cache shared by every node (cache/shared.ts), over `cache`. */
  sharedCache?: SharedResponseCache;
  /** Per-key cache modes (off, request, always). */
  cacheModes: CacheKeyModes;
  /** Seen nonces of signed sync requests (shared in a cluster: a replay is refused on every node). */
  syncNonces: SyncNonceRepository;
  /** Playground presets, scoped to the API key (or the dashboard) that created them. */
  presets: PresetStore;
  /** Traffic inspector captures (opt-in). */
  capture: TrafficCapture;
  /** The last translations (client and upstream shapes, dropped fields), kept while capture is on. */
  translatorHistory: TranslatorHistory;
  /** What `router config-tool` changed in agents' settings files (reported by the CLI). */
  cliToolLog: CliToolLog;
  /** Evals (prompt sets with checks) and their runs through the executor. */
  evals: EvalService;
  /** Proactive OAuth token refresh. */
  tokenRefresher: TokenRefresher;
  /** OAuth logins in progress (browser PKCE with loopback listeners, device flows). */
  oauth: OAuthLogins;
  keys: KeyStore;
  /**
   * Hot shared state (hot/port.ts): in-process on one machine; Redis in a cluster (limits, budgets,
   * cooldowns, circuits, refresh locks, affinity, cross-node events). `hot.health()` for /api/cluster.
   */
  hot: HotState;
  /** Per-key daily request and token limits, relay per-minute limits, model scopes (in memory, written behind). */
  quotas: QuotaService;
  /** Routing combos, cached in memory (no database access per request). */
  combos: ComboStore;
  sessions: SessionStore;
  passwords: PasswordStore;
  /** In-process event bus (request.completed, provider.error...); emit is synchronous and never throws. */
  events: EventBus;
  /** Webhook store and dispatcher, subscribed to `events`. */
  webhooks: WebhookService;
  /** Usage rows (batched writes), pricing, the in-flight tracker; fed by recordOutcome. */
  usage: UsageService;
  /** The model catalog (models.dev data), loaded on first use. */
  catalog: CatalogService;
  /** Prometheus metrics (GET /metrics): counted from usage records and Server-Timing, snapshots read at scrape. */
  metrics: Metrics;
  /** OpenTelemetry trace export; absent when no OTLP endpoint is configured (zero cost). */
  tracing?: Tracing;
  /** The live dashboard WebSocket channel (GET /api/live). */
  live: LiveHub;
  /** The Responses API over WebSocket (GET /v1/responses with Upgrade: websocket). */
  responsesSocket: ResponsesSocketServer;
  /** This daemon's node id (`--node-id`, ROUTER_NODE_ID, or generated once into the state folder). */
  nodeId: string;
  /** Cluster mode's shared PostgreSQL database (driver and health); undefined on one machine. */
  sharedDatabase?: SharedDatabase;
  /** Cluster mode's node registry (heartbeat, GET /api/cluster nodes); undefined on one machine. */
  clusterNodes?: NodeRegistry;
  /** Change notices between the nodes (LOCAL_CHANGES on one machine): stores publish, and reload on others'. */
  changes: ChangeFeed;
  /** The A2A agent's tasks (read by the A2A service, loaded with its SDK on the first A2A request). */
  a2aTasks: A2aTaskRepository;
  /** The CLI token this daemon accepts (derived once at start). */
  cliToken: string;
  log: Logger;
  /** The route table the app serves (for the OpenAPI document). */
  routeTable: readonly RouteDef[];
  /** Begins a graceful shutdown (used by the shutdown route). */
  requestShutdown: (reason: string) => void;
  /**
   * Restarts the daemon: a graceful stop, then `beforeStart` (with the database closed: an import swaps
   * the file there), then a fresh process on the same address (main.ts). A no-op in in-process tests.
   */
  requestRestart: (reason: string, beforeStart?: () => void) => void;
  /** Database backups, export and import. */
  backups: BackupService;
  /** The MCP server: sessions over both transports, tools, the audit log (docs/agents.md). */
  mcp: McpService;
  /** Agent Skills under <state>/skills (index in memory); its request stage and MCP prompts are registered in boot.ts. */
  skills: SkillCatalog;
  /** Batch API: batches run through the executor or as provider batches; in a cluster leased per node (docs/batch.md). */
  batches: BatchService;
}
