/**
 * Reply types of the routes the dashboard reads, named by route. The shapes are the daemon's shared wire
 * types (src/shared: the same ones the daemon builds and the CLI reads), never copies; routes whose replies
 * have no shared type are read as `Json`.
 */
import type {
  AccountView,
  BreakdownRow,
  ComboRecord,
  CooldownView,
  DeliveryRecord,
  LogEntry,
  MemoryEntry,
  Point,
  ProviderNode,
  ProviderTelemetry,
  SeriesGroup,
  Summary,
  WebhookView,
} from '../../../src/shared/records';
import type { ApiKeyRecord, CreatedApiKey, StatusReply } from '../../../src/shared/wire';
import type { PriceEntry } from '../../../src/shared/pricing';
import type { DiscoverReply, KeychainImportReply } from '../../../src/shared/imports';
import type { DoctorFinding, DoctorReply } from '../../../src/shared/doctor';
import type { OAuthAuthorizeReply, OAuthConnectionReply, OAuthDeviceCodeReply, OAuthPollReply, OAuthProviderInfo } from '../../../src/shared/oauth';

export type { AccountView, BreakdownRow, ComboRecord, CooldownView, DeliveryRecord, LogEntry, MemoryEntry, Point, ProviderNode, ProviderTelemetry, SeriesGroup, Summary, WebhookView };
export type { ApiKeyRecord, CreatedApiKey, StatusReply, DiscoverReply, KeychainImportReply, DoctorFinding, DoctorReply };
export type { OAuthAuthorizeReply, OAuthConnectionReply, OAuthDeviceCodeReply, OAuthPollReply, OAuthProviderInfo };

/** Any JSON value, for replies without a shared type (read defensively). */
export type Json = any;

export interface Replies {
  'GET /api/auth/status': { requireLogin: boolean; passwordSet: boolean };
  'POST /api/auth/login': { ok: true; expiresAt: string };
  'POST /api/auth/session': { ok: true; expiresAt: string };
  'GET /api/system/status': StatusReply;
  'GET /api/doctor': DoctorReply;
  'GET /api/combos': { combos: ComboRecord[] };
  'POST /api/combos': ComboRecord;
  'PUT /api/combos/{id}': ComboRecord;
  'GET /api/provider-nodes': { nodes: ProviderNode[] };
  'POST /api/providers/keychain/discover': DiscoverReply;
  'POST /api/providers/keychain/import': KeychainImportReply;
  'POST /api/provider-nodes': ProviderNode;
  'GET /api/logs': { logs: LogEntry[]; nextCursor: string | null };
  'GET /api/usage/summary': Summary;
  'GET /api/usage/breakdown': { by: string; from: string; to: string; rows: BreakdownRow[] };
  'GET /api/usage/timeseries': { bucket: string; from: string; to: string; points: Point[]; groupBy?: string; series?: SeriesGroup[]; otherGroups?: number };
  'GET /api/telemetry/summary': { providers: ProviderTelemetry[]; window: { minutes: number } } & Record<string, Json>;
  'GET /api/webhooks': { webhooks: WebhookView[] };
  'GET /api/pricing': { pricing: PriceEntry[] };
  'GET /api/webhooks/{id}/deliveries': { deliveries: DeliveryRecord[] };
  'GET /api/oauth/providers': { providers: OAuthProviderInfo[] };
  'GET /api/oauth/{provider}/start-callback-server': OAuthAuthorizeReply;
  'POST /api/oauth/{provider}/poll-callback': OAuthPollReply;
  'GET /api/oauth/{provider}/device-code': OAuthDeviceCodeReply;
  'POST /api/oauth/{provider}/poll': OAuthPollReply;
  'POST /api/oauth/{provider}/import-token': OAuthConnectionReply;
  'GET /api/memory': { data: MemoryEntry[]; total: number; totalPages: number; stats: Record<string, Json> };
}
