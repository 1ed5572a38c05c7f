/**
 * Shapes of management replies the CLI reads. Record shapes shared with the daemon live in src/shared/;
 * the CLI never imports daemon code (a test walks the import graph to keep it so).
 */
import type { BreakerState, CooldownView, LogEntry, UsageRecord } from '../shared/records.js';

export type { BatchView, BreakdownRow, ComboModel, ComboRecord, LogEntry, Point, ProviderNode, ProviderTelemetry, Summary, WebhookView } from '../shared/records.js';

/** A connection as `GET /api/providers` shows it (secrets masked). */
export interface PublicConnection {
  id: string;
  /** As people read it: a provider node's prefix, a built-in provider's id. */
  provider: string;
  /** The stored provider id (a node's UUID). */
  providerId: string;
  name: string;
  authKind: string;
  apiKey: string | null;
  accessToken: string | null;
  refreshToken: string | null;
  cookie: string | null;
  expiresAt: string | null;
  priority: number;
  providerSpecificData: Record<string, unknown>;
  isActive: boolean;
  testStatus: string | null;
  lastError: string | null;
  lastTestedAt: string | null;
  createdAt: string;
  updatedAt: string;
}

/** One entry of `GET /api/providers/catalog`. */
export interface CatalogProvider {
  id: string;
  name: string;
  kind: string;
  format: string;
  authKinds: string[];
  /** null when the provider has no address of its own (web-session: each connection sets one). */
  baseUrl: string | null;
  aliases: string[];
  supportsTools: boolean;
}

/** `GET /api/resilience`. */
export interface ResilienceReply {
  breakers: Array<{ provider: string; model?: string; state: BreakerState; consecutiveFailures: number; openUntil: string | null }>;
  cooldowns: CooldownView[];
  /** Accounts tried after the healthy ones for a model (src/daemon/routing/account-health.ts). */
  demoted?: Array<{ connectionId: string; model: string; failures: number; remainingSeconds: number }>;
  settings: Record<string, unknown>;
}

/** `{type:'request'}` on the live WebSocket: one recorded proxied attempt (src/daemon/live/hub.ts). */
export type LiveRequest = { type: 'request'; timestamp: string; apiKeyName?: string | null; connectionName?: string | null } & Omit<UsageRecord, 'ts'>;

/** `{type:'status'}` on the live WebSocket: sent on connect and every two seconds. */
export interface LiveStatus {
  type: 'status';
  timestamp: string;
  version: string;
  uptimeSeconds: number;
  requestsPerSecond: number;
  inFlight: number;
  openStreams: number;
  liveClients: number;
  usageQueue: { queued: number; dropped: number; estimating: number };
}

export type LiveMessage = LiveRequest | LiveStatus;

/** A request entry as the TUIs hold it: from the live channel or the log (which adds `id`). */
export type RequestEntry = (LiveRequest | (LogEntry & { type?: 'request' })) & { id?: number };

/** One side of an exchange, as the traffic inspector shows it. */
export interface ExchangeSide {
  headers: Record<string, string>;
  /** The body as text (JSON pretty-printed by the viewer), or null when not recorded. */
  body: string | null;
  truncated?: boolean;
}

/**
 * What `router inspect` shows for one request when the daemon records bodies: the client's request and
 * the reply it got (translated side), next to what was sent upstream and what came back. The daemon has
 * no route for this yet (proposed: `GET /api/logs/traces/{traceId}`, management tier, secrets masked).
 */
export interface TraceDetail {
  traceId: string;
  client: { request: ExchangeSide; response: ExchangeSide };
  upstream: { url?: string; request: ExchangeSide; response: ExchangeSide };
}
