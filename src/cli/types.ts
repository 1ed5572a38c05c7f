/**
 * Shapes of management replies the CLI reads. Record shapes shared with the daemon live in src/shared/;
 * the CLI never imports daemon code (a test walks the import graph to keep it so).
 */
import type { RouteReply } from '../shared/api/contract.js';
import type { LogEntry, UsageRecord } from '../shared/records.js';

export type { BatchView, BreakdownRow, ComboModel, ComboRecord, LogEntry, Point, ProviderNode, ProviderTelemetry, Summary, WebhookView } from '../shared/records.js';

/** A connection as `GET /api/providers` shows it (secrets masked): the route's declared reply. */
export type PublicConnection = RouteReply<'GET /api/providers'>['connections'][number];

/** One entry of `GET /api/providers/catalog`. */
export type CatalogProvider = RouteReply<'GET /api/providers/catalog'>['providers'][number];

/** `GET /api/resilience`. */
export type ResilienceReply = RouteReply<'GET /api/resilience'>;

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

/** What `router inspect` shows for one request when the daemon records bodies (`GET /api/logs/traces/{traceId}`). */
export type TraceDetail = RouteReply<'GET /api/logs/traces/{traceId}'>;

/** One side of an exchange, as the traffic inspector shows it. */
export type ExchangeSide = TraceDetail['client']['request'];
