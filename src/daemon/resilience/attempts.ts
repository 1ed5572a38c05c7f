import { RouterError } from '../http/errors.js';
import { fetchUpstreamModels, ModelListError } from '../providers/sync.js';
import { canRefresh, refreshConnection } from '../oauth/refresh.js';
import type { Credential, ProviderDef } from '../providers/types.js';
import { ANY_MODEL } from '../routing/cooldowns.js';
import { allUnavailableError, upstreamAuthError } from '../routing/errors.js';
import type { ClassifiedFailure } from '../routing/provider-error.js';
import type { EventBus } from '../events/bus.js';
import type { Logger } from '../logger.js';
import type { Metrics } from '../observability/metrics.js';
import type { ConnectionStore } from '../providers/connections.js';
import type { ProviderDirectory } from '../providers/directory.js';
import type { SettingsStore } from '../settings/store.js';
import type { Resilience } from './service.js';

/*
 * Routing decides from its own types; the proxy acts. These are what resilience reads of an attempt: the
 * proxy's Target, Plan and AttemptError fit them as they are, and resilience never imports the proxy.
 */

/** The provider, model and account an attempt used. */
export interface AttemptTarget {
  provider: ProviderDef;
  /** Model id as the upstream knows it. */
  model: string;
  /** The model as the client named it (latency and combo bookkeeping). */
  publicModel: string;
  connectionId?: string;
  /** The credential the attempt was sent with (an auth failure is confirmed only while it is current). */
  credential: Credential;
  /** The combo entry the target came from, when routed through a combo. */
  comboEntry?: string;
}

/** What resilience reads of a request's plan. */
export interface AttemptPlan {
  combo?: { id: string; name: string; affinity?: string };
  targets: ReadonlyArray<{ model: string; connectionId?: string }>;
  /** Why the strategy's first choice was left out, when it was. */
  leadSkipped?: 'circuit_open' | 'cooldown';
}

/** A failed attempt as classified when it was built (proxy/upstream-error.ts). */
export interface FailedAttempt {
  status: number;
  message: string;
  failure: ClassifiedFailure;
  origin?: { provider: string; connection?: string };
}

/** Bookkeeping after a target served a request: breaker closes, cooldown clears, usage and latency count. */
export function attemptSucceeded(services: { resilience: Resilience; events: EventBus }, plan: AttemptPlan, target: AttemptTarget, ms: number, index: number, sessionKey?: string): void {
  const r = services.resilience;
  r.breakers.recordSuccess(target.provider.id, target.model);
  if (target.connectionId) {
    r.health.succeeded(target.connectionId, target.model);
    if (r.cooldowns.isCooling(target.connectionId, target.model)) r.touch();
    r.cooldowns.clear(target.connectionId, target.model);
    // The use was counted when the request was planned; here the session binds to the account that served.
    if (sessionKey !== undefined) r.accounts.bindSession(target.provider.id, sessionKey, target.connectionId);
  }
  // Cache affinity: the conversation stays on the target and account that served it until they fail.
  if (sessionKey !== undefined && plan.combo?.affinity !== undefined && plan.combo.affinity !== 'off') r.conversations.bind(plan.combo.id, sessionKey, target);
  const latencyKey = target.comboEntry ?? target.publicModel;
  r.latency.record(latencyKey, ms);
  if (!plan.combo) return;
  const previous = r.comboPrimary.get(plan.combo.id);
  if (previous === target.publicModel) return;
  r.comboPrimary.set(plan.combo.id, target.publicModel);
  services.events.emit('combo.switched', {
    combo: plan.combo.name,
    from: previous ?? null,
    to: target.publicModel,
    // Failover after a failed attempt; a first choice left out for an open circuit or a cooldown; else the strategy.
    reason: index > 0 ? 'failover' : (plan.leadSkipped ?? 'strategy'),
  });
}

/**
 * Bookkeeping after a failed attempt, as its classification says (decided once, when the attempt error
 * was built): the account's cooldown (for the model, or for all its models when the failure's scope is
 * the account: out of quota or credit), its failure streak (repeated 5xx or a model it cannot use demote
 * it behind the pool's healthy accounts), the breaker (every failure is reported: an ineligible one does
 * not count, but releases a half-open probe slot, since the provider did answer), and the reactive expiry
 * check on auth failures.
 */
export function attemptFailed(services: AuthCheckServices & { resilience: Resilience; metrics: Metrics }, target: AttemptTarget, error: FailedAttempt): void {
  const r = services.resilience;
  services.metrics.upstreamError(target.provider.id, error.failure.kind, error.status);
  const failure = error.failure;
  const conn = target.connectionId;
  if (conn && failure.coolSeconds !== undefined) {
    r.cooldowns.set(conn, failure.scope === 'account' ? ANY_MODEL : target.model, failure.coolSeconds, error.message.slice(0, 200));
    r.touch();
  }
  if (conn && (failure.scope === 'transient' || failure.kind === 'model_access')) {
    if (r.health.failed(conn, target.model, failure.kind === 'model_access')) {
      services.log.warn('account demoted after repeated failures', { provider: target.provider.id, connection: conn, model: target.model, status: error.status });
    }
  }
  const circuit = r.breakers.recordFailure(target.provider.id, failure, target.model);
  if (circuit) r.providerError(circuit, error.status);
  if (failure.authConfirmable && target.connectionId) void confirmAuthFailure(services, target);
}

/** What the reactive expiry check uses of the daemon. */
type AuthCheckServices = { connections: ConnectionStore; log: Logger; settings: SettingsStore; providers: ProviderDirectory; events: EventBus };

/**
 * The reactive expiry path: an upstream-confirmed auth failure marks the connection expired only when a
 * recovery check fails too. A credential rotated since the request started is never expired; a check
 * that fails for any other reason (network, 5xx) leaves the connection active.
 */
export async function confirmAuthFailure(services: AuthCheckServices, target: AttemptTarget): Promise<void> {
  const conn = services.connections.get(target.connectionId!);
  if (!conn || !conn.isActive) return;
  if (JSON.stringify(conn.credential) !== JSON.stringify(target.credential)) return;
  // OAuth first: a refreshed token is recovery, the connection stays active.
  if (canRefresh(target.provider, conn, services.settings)) {
    try {
      await refreshConnection(target.provider, conn, services);
      return;
    } catch (err) {
      services.log.warn('token refresh after an auth failure failed', { provider: services.providers.label(conn.provider), connection: conn.name, connectionId: conn.id, error: (err as Error).message });
    }
  }
  try {
    await fetchUpstreamModels(target.provider, conn, services.providers.connectionTarget(target.provider, conn));
    return;
  } catch (err) {
    // Only the upstream saying the credential is refused (classified like the attempt) confirms it.
    if (!(err instanceof ModelListError) || !err.failure.authConfirmable) return;
    const fresh = services.connections.get(conn.id);
    if (!fresh || JSON.stringify(fresh.credential) !== JSON.stringify(target.credential)) return;
    const expired = await services.connections.update(conn.id, { isActive: false, testStatus: 'expired', lastError: (err as Error).message });
    services.events.emit('connection.expired', { connection_id: conn.id, provider: conn.provider, name: conn.name, reason: expired?.lastError ?? 'authentication failed' });
    services.log.warn('connection expired after a confirmed auth failure', { provider: services.providers.label(conn.provider), connection: conn.name, connectionId: conn.id });
  }
}

/** The error a client gets when every target failed (spec "Errors" table). */
export function allFailedError(services: { resilience: Resilience }, plan: AttemptPlan, last: FailedAttempt): RouterError | undefined {
  const refused = upstreamAuthError(last);
  if (plan.combo) {
    return new RouterError(502, `All targets of combo '${plan.combo.name}' failed; last error: ${refused?.message ?? last.message}`, { code: 'combo_failed' });
  }
  if (refused) return refused;
  if (plan.targets.length > 1) {
    const ids = plan.targets.map((t) => t.connectionId).filter((id): id is string => id !== undefined);
    const reset = services.resilience.cooldowns.earliestReset(plan.targets[0]!.model, ids);
    return allUnavailableError(last.status, last.message, reset > 0 ? reset : undefined);
  }
  return undefined;
}
