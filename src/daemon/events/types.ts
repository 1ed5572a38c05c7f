/**
 * The events the daemon emits in-process and delivers to webhooks, with their data shapes. Field names
 * are snake_case, like the shapes the spec shows (request.completed, provider.error); test.ping keeps the
 * spec's `webhookId`. The shapes the spec leaves open are decided here and documented in docs/events.md.
 */
import { EVENT_NAMES as SHARED_EVENT_NAMES } from '../../shared/event-names.js';

/** A proxied request completed successfully (spec shape). */
export interface RequestCompletedData {
  trace_id: string;
  /** The API key that made the request; null for dashboard-session callers. */
  api_key_id: string | null;
  /** The provider as people read it: a provider node's prefix, a built-in provider's id. */
  provider: string;
  /** The stored provider id (a node's UUID); filled by the event bus. */
  provider_id?: string;
  model: string;
  /** HTTP status returned to the client. */
  status: number;
  tokens_in: number;
  tokens_out: number;
  /** USD; null when no price is known for the model (cost_source `unpriced`). */
  cost_usd: number | null;
  /** `reported` (the provider's figure), `computed` (tokens x price) or `unpriced`. */
  cost_source: 'reported' | 'computed' | 'unpriced' | null;
  /** The price table of a computed cost (`override`, `router@<month>`, `models.dev@<date>`). */
  price_version: string | null;
}

/** A proxied request failed after all retries and fallback (shape decided here). */
export interface RequestFailedData {
  trace_id: string;
  api_key_id: string | null;
  /** The last provider tried; null when none was reached (e.g. nothing configured for the model). */
  provider: string | null;
  /** The stored provider id (a node's UUID); filled by the event bus. */
  provider_id?: string | null;
  /** The model the client asked for (a `<provider>/<model>` id or a combo name). */
  model: string;
  /** HTTP status returned to the client. */
  status: number;
  /** The error code of the client-facing error body. */
  error_code: string;
  /** The sanitized client-facing error message. */
  error_message: string;
  /** Upstream attempts made (accounts and combo targets together). */
  attempts: number;
}

/** A provider returned an error eligible for circuit breaking (spec shape). */
export interface ProviderErrorData {
  provider: string;
  /** The stored provider id (a node's UUID); filled by the event bus. */
  provider_id?: string;
  /** Set when the failure (a 5xx) counted against this model's circuit rather than the provider's. */
  model?: string;
  status: number;
  consecutive_failures: number;
  /** Breaker state after this error: `closed`, `open` or `half_open`. */
  circuit_state: string;
}

/** A failing provider returned to healthy (shape decided here). */
export interface ProviderRecoveredData {
  provider: string;
  /** The stored provider id (a node's UUID); filled by the event bus. */
  provider_id?: string;
  /** Set when it is one model's circuit that closed again. */
  model?: string;
  /** Breaker state now (normally `closed`). */
  circuit_state: string;
  /** Breaker state before recovery (`open` or `half_open`). */
  previous_state: string;
  /** Consecutive failures that were cleared by the recovery. */
  consecutive_failures: number;
  /** Time since the first failure of the streak, in seconds; null when unknown. */
  downtime_seconds: number | null;
}

/** An API key crossed a budget or quota threshold (shape decided here). */
export interface QuotaExceededData {
  api_key_id: string;
  /** What ran out: `requests_per_day`, `tokens`, `budget_usd`, or another limit kind. */
  quota: string;
  /** What the limit applies to: `global`, `provider:<id>` or `model:<id>`. */
  scope: string;
  limit: number;
  used: number;
  /** Window the limit counts over (`day`, `month`, `total`...); null for unwindowed limits. */
  window: string | null;
}

/** A combo changed its primary target (shape decided here). */
export interface ComboSwitchedData {
  combo: string;
  /** The previous primary target (`<provider>/<model>`); null on the first choice. */
  from: string | null;
  to: string;
  /** Why: `failover`, `strategy`, `cooldown`, `circuit_open`, `manual`. */
  reason: string;
}

/**
 * A batch (`/v1/batches`) ended: `batch.completed`, `batch.failed` when it failed or expired, `batch.cancelled`
 * when it was cancelled (OpenAI's own webhook names; shape decided here).
 */
export interface BatchFinishedData {
  batch_id: string;
  /** Final status: `completed`, `failed`, `expired` or `cancelled`. */
  status: string;
  /** The API key that created it; null for the dashboard or the CLI. */
  api_key_id: string | null;
  endpoint: string;
  /** `local` (run by router) or `native` (a provider batch). */
  mode: string;
  total: number;
  completed: number;
  failed: number;
  output_file_id: string | null;
  error_file_id: string | null;
}

/** Sent by the test endpoint (spec shape). */
export interface TestPingData {
  message: string;
  webhookId: string;
}

/** Event name to data shape. */
/** An OAuth connection's access token was renewed (proactively, before a request, or after an auth failure). */
export interface ConnectionRefreshedData {
  connection_id: string;
  /** The provider as people read it; `provider_id` is filled by the event bus. */
  provider: string;
  provider_id?: string;
  name: string;
  /** When the new access token expires (ISO), null when the provider did not say. */
  expires_at: string | null;
  /** True when the provider also issued a new refresh token (rotation). */
  rotated: boolean;
}

/** An OAuth connection was marked expired (testStatus `expired`, isActive false) after recovery failed. */
export interface ConnectionExpiredData {
  connection_id: string;
  provider: string;
  provider_id?: string;
  name: string;
  /** The upstream's refusal that confirmed it (credentials masked). */
  reason: string;
}

/**
 * An upstream reply named another model than the one asked for, not a dated snapshot of it (served-model
 * check, routing/served-model.ts): a provider silently substituting a model.
 */
export interface ModelMismatchData {
  trace_id: string;
  api_key_id: string | null;
  /** The provider as people read it; `provider_id` is filled by the event bus. */
  provider: string;
  provider_id?: string;
  connection_id: string | null;
  combo: string | null;
  /** What the client named (`<provider>/<model>` or a combo name). */
  requested_model: string | null;
  /** The upstream model id router asked for. */
  model: string;
  /** The model the reply says served it. */
  served_model: string;
}

export interface EventMap {
  'request.completed': RequestCompletedData;
  'request.failed': RequestFailedData;
  'provider.error': ProviderErrorData;
  'provider.recovered': ProviderRecoveredData;
  'quota.exceeded': QuotaExceededData;
  'combo.switched': ComboSwitchedData;
  'batch.completed': BatchFinishedData;
  'batch.failed': BatchFinishedData;
  'batch.cancelled': BatchFinishedData;
  'test.ping': TestPingData;
  'connection.refreshed': ConnectionRefreshedData;
  'connection.expired': ConnectionExpiredData;
  'model.mismatch': ModelMismatchData;
}

/** One event name. */
export type EventName = keyof EventMap;

/** Every event name, in the spec's order (src/shared/event-names.ts; the CLI reads the same list). */
export const EVENT_NAMES: readonly EventName[] = SHARED_EVENT_NAMES;
// Both ways: a listed name without a payload type fails the line above; a payload type left out of the list fails here.
type Unlisted = Exclude<EventName, (typeof SHARED_EVENT_NAMES)[number]>;
const everyEventListed: [Unlisted] extends [never] ? true : Unlisted = true;
void everyEventListed;

const NAME_SET: ReadonlySet<string> = new Set(EVENT_NAMES);

/** True for a known event name (subscriptions may hold unknown names; dispatch ignores them). */
export function isEventName(name: string): name is EventName {
  return NAME_SET.has(name);
}

/** An emitted event: the webhook body is exactly this object. */
export interface RouterEvent<N extends EventName = EventName> {
  event: N;
  /** ISO 8601, stamped once at emit (retries resend the same value). */
  timestamp: string;
  data: EventMap[N];
  /**
   * Names the happening when several nodes of a cluster may each emit it (the same circuit recovering on
   * every node, a batch finished by whichever node resumed it): webhooks deliver one event per name across
   * the cluster (webhooks/service.ts). Absent for events only one node can emit. Never sent to receivers.
   */
  once?: string;
}

/** Any event, discriminated on `event`. */
export type AnyRouterEvent = { [N in EventName]: RouterEvent<N> }[EventName];
