import type { Logger } from '../logger.js';
import type { SettingsStore } from '../settings/store.js';
import type { ConnectionStore } from '../providers/connections.js';
import type { ProviderDirectory } from '../providers/directory.js';
import type { SyncedModels } from '../providers/models.js';
import type { Resilience } from '../resilience/service.js';
import type { QuotaService } from '../quotas/index.js';
import type { ComboStore } from '../combos/store.js';
import type { UsageService } from '../usage/service.js';
import type { EventBus } from '../events/bus.js';
import type { Metrics } from '../observability/metrics.js';
import type { Tracing } from '../observability/tracing.js';
import type { TrafficCapture } from '../inspect/capture.js';
import type { TranslatorHistory } from '../insights/translator-history.js';
import type { StageRegistry } from './stages.js';

/**
 * What the request pipeline reads: the executor, its plan and attempts, request stages, outcome bookkeeping
 * and router's own calls (proxy/internal-call.ts). Built in boot.ts before the features that call the
 * pipeline (memory, evals, MCP, batches), which take it in their constructors.
 */
export interface PipelineDeps {
  version: string;
  log: Logger;
  settings: SettingsStore;
  events: EventBus;
  /** Provider accounts (credentials decrypted in memory). */
  connections: ConnectionStore;
  /** Models synced from upstreams (the model lists of providers/available.ts). */
  syncedModels: SyncedModels;
  /** Provider lookup and model -> target resolution. */
  providers: ProviderDirectory;
  combos: ComboStore;
  /** Breakers, cooldowns, account selection, latency and combo state. */
  resilience: Resilience;
  /** Per-key limits and model scopes. */
  quotas: QuotaService;
  /** The request stages (guardrails, memory, compression, cache...), registered by their features. */
  stages: StageRegistry;
  /** Usage rows and pricing, fed by recordOutcome. */
  usage: UsageService;
  metrics: Metrics;
  /** Absent when no OTLP endpoint is configured. */
  tracing?: Tracing;
  /** Traffic inspector captures (opt-in). */
  capture: TrafficCapture;
  translatorHistory: TranslatorHistory;
}
