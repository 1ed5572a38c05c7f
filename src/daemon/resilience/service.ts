import type { EventBus } from '../events/bus.js';
import type { Logger } from '../logger.js';
import type { ConnectionStore } from '../providers/connections.js';
import { AccountHealth } from '../routing/account-health.js';
import { AccountLimits } from '../routing/account-limits.js';
import { AccountSelector } from '../routing/accounts.js';
import { CircuitBreakers, type BreakerEvent, type BreakerSnapshotEntry } from '../routing/breaker.js';
import { ConversationAffinity } from '../routing/conversation.js';
import { CooldownStore, type CooldownEntry } from '../routing/cooldowns.js';
import { LatencyTracker } from '../routing/latency.js';
import { SessionAffinity } from '../routing/session-affinity.js';
import { createComboState, type ComboState } from '../routing/strategies.js';
import type { Settings, SettingsStore } from '../settings/store.js';
import type { Db } from '../store/db.js';
import type { HotState } from '../hot/port.js';
import { shareRouting } from '../hot/shared-routing.js';

const PERSIST_EVERY_MS = 5_000;

const breakerState = (s: string) => (s === 'half-open' ? 'half_open' : s);

/**
 * Routing state with one owner: circuit breakers per provider (and per provider and model for 5xx), cooldowns per (connection, model), account
 * selection per provider, target latencies and per-combo strategy state. Everything is in memory on the
 * request path; breakers and cooldowns are persisted write-behind and restored at start (expired dropped).
 */
export class Resilience {
  readonly breakers: CircuitBreakers;
  readonly cooldowns = new CooldownStore();
  /** Failure streaks that demote an account for a model (repeated 5xx, model not available to it). */
  readonly health = new AccountHealth();
  /** Remaining quota per account as its replies' rate-limit headers report it (the `headroom` strategy). */
  readonly limits = new AccountLimits();
  readonly accounts: AccountSelector<{ id: string; priority: number; active: boolean }>;
  readonly latency = new LatencyTracker();
  readonly comboStates = new Map<string, ComboState>();
  /** Requests planned with each combo entry as its level's first choice, for `least-used` (counted in planning). */
  readonly comboUsage = new Map<string, number>();
  /** Last target that served each combo, for `combo.switched`. */
  readonly comboPrimary = new Map<string, string>();
  /** Cache affinity: where each conversation of a combo went last, and Responses chains (routing/conversation.ts). */
  readonly conversations = new ConversationAffinity();
  private dirty = false;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly db: Db,
    connections: ConnectionStore,
    settings: SettingsStore,
    private readonly events: EventBus,
    private readonly log: Logger,
    /** A stored provider id as the log shows it (a node's prefix). */
    private readonly label: (providerId: string) => string = String,
    /** Cluster mode: cooldowns, open circuits and affinity are shared through it (hot/shared-routing.ts). */
    hot?: HotState,
  ) {
    this.breakers = new CircuitBreakers(breakerConfig(settings.get()));
    this.accounts = new AccountSelector({ cooldowns: this.cooldowns, affinity: new SessionAffinity(), health: this.health, limits: this.limits });
    this.restore();
    const sync = () => this.syncConnections(connections);
    sync();
    connections.onChange(sync);
    settings.onChange((next) => this.breakers.configure(breakerConfig(next)));
    this.breakers.onStateChange((e) => this.onBreakerChange(e));
    if (hot) shareRouting({ cooldowns: this.cooldowns, breakers: this.breakers, conversations: this.conversations }, hot, log);
    this.timer = setInterval(() => this.persist(), PERSIST_EVERY_MS);
    this.timer.unref();
  }

  /** Rebuilds the account pools once per connection change (never per request). */
  private syncConnections(connections: ConnectionStore): void {
    const byProvider = new Map<string, Array<{ id: string; priority: number; active: boolean }>>();
    for (const c of connections.list()) {
      const list = byProvider.get(c.provider) ?? [];
      list.push({ id: c.id, priority: c.priority, active: c.isActive });
      byProvider.set(c.provider, list);
    }
    for (const [provider, list] of byProvider) this.accounts.setConnections(provider, list);
  }

  comboState(comboId: string): ComboState {
    let s = this.comboStates.get(comboId);
    if (!s) this.comboStates.set(comboId, (s = createComboState()));
    return s;
  }

  /** Marks state as changed so the next write-behind tick persists it. */
  touch(): void {
    this.dirty = true;
  }

  private onBreakerChange(e: BreakerEvent): void {
    this.dirty = true;
    this.log.info('circuit breaker', { provider: this.label(e.provider), model: e.model, from: e.from, to: e.to, failures: e.consecutiveFailures });
    if (e.to === 'closed' && e.from !== 'closed') {
      this.events.emit('provider.recovered', {
        provider: e.provider,
        ...(e.model === undefined ? {} : { model: e.model }),
        circuit_state: 'closed',
        previous_state: breakerState(e.from),
        consecutive_failures: e.consecutiveFailures,
        downtime_seconds: e.downtimeMs === undefined ? null : Math.round(e.downtimeMs / 1000),
      }, e.since === undefined ? undefined : `provider.recovered:${e.provider}:${e.model ?? ''}:${e.since}`);
    }
  }

  /** Emits `provider.error` for a breaker-eligible failure, with the state of the circuit it counted against. */
  providerError(circuit: BreakerSnapshotEntry, status: number): void {
    this.events.emit('provider.error', {
      provider: circuit.provider,
      ...(circuit.model === undefined ? {} : { model: circuit.model }),
      status,
      consecutive_failures: circuit.consecutiveFailures,
      circuit_state: breakerState(circuit.state),
    });
  }

  private restore(): void {
    const rows = this.db.prepare('SELECT kind, data FROM resilience_state').all() as Array<{ kind: string; data: string }>;
    for (const row of rows) {
      try {
        if (row.kind === 'breakers') this.breakers.restore(JSON.parse(row.data) as BreakerSnapshotEntry[]);
        if (row.kind === 'cooldowns') this.cooldowns.restore(JSON.parse(row.data) as CooldownEntry[]);
      } catch (err) {
        this.log.warn('ignoring unreadable resilience state', { kind: row.kind, error: String(err) });
      }
    }
  }

  /** Writes breakers and cooldowns when they changed since the last write. */
  persist(force = false): void {
    if (!this.dirty && !force) return;
    this.dirty = false;
    const now = new Date().toISOString();
    const upsert = this.db.prepare(
      'INSERT INTO resilience_state (kind, data, updated_at) VALUES (?, ?, ?) ON CONFLICT(kind) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at',
    );
    this.db.transaction(() => {
      upsert.run('breakers', JSON.stringify(this.breakers.snapshot()), now);
      upsert.run('cooldowns', JSON.stringify(this.cooldowns.snapshot()), now);
    })();
  }

  /** Final write at shutdown. */
  close(): void {
    clearInterval(this.timer);
    this.persist(true);
  }
}

function breakerConfig(s: Settings) {
  return { failureThreshold: s.breakerFailureThreshold, cooldownMs: s.breakerCooldownMs, halfOpenProbes: 1 };
}
