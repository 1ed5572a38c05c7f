/**
 * Per-provider circuit breakers. After `failureThreshold` consecutive breaker-eligible failures a
 * provider's circuit opens and requests to it are refused for `cooldownMs`; then it turns half-open and
 * lets `halfOpenProbes` requests through. A probe success closes the circuit, a probe failure reopens
 * it for another cooldown. All state is in memory; `snapshot`/`restore` carry it across restarts.
 *
 * Two scopes share that state machine. Failures that say the provider cannot be reached (network,
 * timeout) count against the provider's own circuit, which refuses every model. A 5xx reply says only
 * that this model failed this time: it counts against a circuit for the provider and that model, so one
 * overloaded model opens a circuit for itself while the provider's other models keep serving (a combo of
 * several models on one provider then fails over inside the provider). A request needs both circuits to
 * let it through; a success closes both.
 */
import { type Clock, secondsUntil, systemClock } from './clock.js';
import { type ClassifiedFailure, type FailureKind, isBreakerEligible } from './provider-error.js';
import type { BreakerState } from '../../shared/records.js';

export type { BreakerState };

/** Tunables; all may be changed at runtime with {@link CircuitBreakers.configure}. */
export interface BreakerConfig {
  /** Consecutive eligible failures that open a closed circuit. Default 5. */
  failureThreshold: number;
  /** How long an open circuit refuses requests before probing. Default 30 s. */
  cooldownMs: number;
  /** Concurrent probe requests allowed while half-open. Default 1. */
  halfOpenProbes: number;
}

/** Default tunables. */
export const DEFAULT_BREAKER_CONFIG: Readonly<BreakerConfig> = { failureThreshold: 5, cooldownMs: 30_000, halfOpenProbes: 1 };

/**
 * Result of {@link CircuitBreakers.check}. `probe` marks a half-open trial request. A refusal names the
 * model when it is that model's circuit (not the provider's) which is open.
 */
export type BreakerDecision = { allowed: true; probe: boolean } | { allowed: false; retryAfterSeconds: number; model?: string };

/** Which circuit a failure counts against: the provider's (unreachable) or the provider and model's (5xx). */
export type BreakerScope = 'provider' | 'model';

/** Network and timeout failures concern the whole provider; anything else eligible (5xx) one model. */
export function breakerScope(kind: FailureKind): BreakerScope {
  return kind === 'network' || kind === 'timeout' ? 'provider' : 'model';
}

/** Emitted on every state change (open -> webhook `provider.error`, closed -> `provider.recovered`). */
export interface BreakerEvent {
  provider: string;
  /** Set for a model's circuit; absent for the provider's own. */
  model?: string;
  from: BreakerState;
  to: BreakerState;
  consecutiveFailures: number;
  /** On a transition to closed: ms since the first failure of the streak that ended (when known). */
  downtimeMs?: number;
  /** On a transition to closed: epoch ms of the streak's first counted failure (when known), the same on every node sharing the circuit. */
  since?: number;
}

/** One circuit's persisted state; `openUntil` is epoch ms (only meaningful when open). */
export interface BreakerSnapshotEntry {
  provider: string;
  /** Set for a model's circuit; absent for the provider's own. */
  model?: string;
  state: BreakerState;
  consecutiveFailures: number;
  openUntil: number;
  /** Epoch ms of the streak's first counted failure (absent in snapshots of older versions). */
  since?: number;
}

interface Entry {
  provider: string;
  model?: string;
  state: BreakerState;
  consecutiveFailures: number;
  openUntil: number;
  probesInFlight: number;
  lastProbeAt: number;
  /** Epoch ms of the streak's first counted failure; 0 when unknown (restored from an older snapshot). */
  since: number;
  /** Provider circuits opened by 5xx across models: those models (a failed probe then reopens it). */
  models?: Set<string>;
}

/** Map key of a circuit: the provider id, or provider id and model (provider ids never hold a NUL). */
function keyOf(provider: string, model?: string): string {
  return model === undefined ? provider : `${provider}\u0000${model}`;
}

/** Registry of circuit breakers keyed by provider id (and model). Every operation is O(1). */
export class CircuitBreakers {
  private readonly entries = new Map<string, Entry>();
  /** Per provider: the 5xx streak across its models since its last success (see modelFailed). */
  private readonly spreads = new Map<string, { failures: number; models: Set<string>; since: number }>();
  private readonly listeners = new Set<(event: BreakerEvent) => void>();
  private config: BreakerConfig;
  private readonly now: Clock;

  constructor(options: Partial<BreakerConfig> & { now?: Clock } = {}) {
    this.now = options.now ?? systemClock;
    this.config = { ...DEFAULT_BREAKER_CONFIG };
    this.configure(options);
  }

  /** Changes tunables at runtime. Open circuits keep their current end time. */
  configure(changes: Partial<BreakerConfig>): void {
    const next = { ...this.config };
    for (const key of ['failureThreshold', 'cooldownMs', 'halfOpenProbes'] as const) {
      const value = changes[key];
      if (value === undefined) continue;
      if (!Number.isInteger(value) || value < 1) throw new RangeError(`${key} must be a positive integer`);
      next[key] = value;
    }
    this.config = next;
  }

  /** Current tunables. */
  get settings(): Readonly<BreakerConfig> {
    return this.config;
  }

  /**
   * Whether a request to the provider (and model) may go out now: both the provider's circuit and the
   * model's must allow it. While half-open each allowed call takes a probe slot, released by the next
   * recorded result; a slot whose result never arrives (request abandoned) is reclaimed after one
   * cooldown so the circuit cannot wedge half-open.
   */
  check(provider: string, model?: string): BreakerDecision {
    const p = this.advance(keyOf(provider));
    const m = model === undefined ? undefined : this.advance(keyOf(provider, model));
    const now = this.now();
    const refusal = this.refusal(p, now) ?? this.refusal(m, now);
    if (refusal) return refusal;
    const probe = this.takeProbe(p, now) | this.takeProbe(m, now);
    return { allowed: true, probe: probe === 1 };
  }

  /**
   * Whether {@link check} would let a request out now, without taking a half-open probe slot. For
   * planning: a provider planned as a fallback may never be called, and must not hold the only probe.
   */
  peek(provider: string, model?: string): BreakerDecision {
    const p = this.advance(keyOf(provider));
    const m = model === undefined ? undefined : this.advance(keyOf(provider, model));
    const now = this.now();
    const refusal = this.refusal(p, now) ?? this.refusal(m, now);
    if (refusal) return refusal;
    return { allowed: true, probe: (p !== undefined && p.state !== 'closed') || (m !== undefined && m.state !== 'closed') };
  }

  /** Why a circuit refuses a request now (open, or half-open with every probe slot taken), if it does. */
  private refusal(entry: Entry | undefined, now: number): BreakerDecision | undefined {
    if (!entry || entry.state === 'closed') return undefined;
    const model = entry.model === undefined ? {} : { model: entry.model };
    if (entry.state === 'open') return { allowed: false, retryAfterSeconds: secondsUntil(entry.openUntil, now), ...model };
    const stale = entry.probesInFlight > 0 && now - entry.lastProbeAt >= this.config.cooldownMs;
    if (!stale && entry.probesInFlight >= this.config.halfOpenProbes) {
      return { allowed: false, retryAfterSeconds: secondsUntil(entry.lastProbeAt + this.config.cooldownMs, now), ...model };
    }
    return undefined;
  }

  /** Takes a probe slot of a half-open circuit (1), or nothing for a closed or absent one (0). */
  private takeProbe(entry: Entry | undefined, now: number): number {
    if (!entry || entry.state !== 'half-open') return 0;
    if (entry.probesInFlight > 0 && now - entry.lastProbeAt >= this.config.cooldownMs) entry.probesInFlight = 0;
    entry.probesInFlight++;
    entry.lastProbeAt = now;
    return 1;
  }

  /**
   * Records a success: resets the failure counts of the provider's circuit and the model's, and closes
   * them when half-open. Ignored by an open circuit.
   */
  recordSuccess(provider: string, model?: string): void {
    this.spreads.delete(provider);
    this.succeeded(keyOf(provider));
    if (model !== undefined) this.succeeded(keyOf(provider, model));
  }

  private succeeded(key: string): void {
    const entry = this.advance(key);
    if (!entry) return;
    // A late success from a request admitted before the circuit opened proves little; only probes decide.
    if (entry.state === 'open') return;
    const from = entry.state;
    this.entries.delete(key);
    if (from === 'half-open') this.emit(entry, { from, to: 'closed', consecutiveFailures: 0, ...this.downtime(entry) });
  }

  /**
   * Records a failure. Only breaker-eligible failures (network, timeout, 5xx) count, against the circuit
   * of their {@link breakerScope} (the model's only when a model is given); others (429, auth, other
   * 4xx) neither count nor reset the streak, but do release half-open probe slots because the provider
   * did answer. Returns the circuit counted against, if any.
   */
  recordFailure(provider: string, failure: FailureKind | ClassifiedFailure, model?: string): BreakerSnapshotEntry | undefined {
    const kind = typeof failure === 'string' ? failure : failure.kind;
    const eligible = typeof failure === 'string' ? isBreakerEligible(failure) : failure.breakerEligible;
    if (!eligible) {
      for (const key of model === undefined ? [keyOf(provider)] : [keyOf(provider), keyOf(provider, model)]) {
        const entry = this.advance(key);
        if (entry?.state === 'half-open' && entry.probesInFlight > 0) entry.probesInFlight--;
      }
      return undefined;
    }
    const scoped = model !== undefined && breakerScope(kind) === 'model' ? model : undefined;
    const spread = scoped === undefined ? undefined : this.modelFailed(provider, scoped);
    const key = keyOf(provider, scoped);
    const current = this.advance(key) ?? this.create(provider, scoped);
    current.consecutiveFailures++;
    if (current.state === 'half-open') this.open(current);
    else if (current.state === 'closed' && current.consecutiveFailures >= this.config.failureThreshold) this.open(current);
    // The provider's own circuit opening is the bigger news (provider.error names no model then).
    return toSnapshot(spread?.state === 'open' ? spread : current);
  }

  /**
   * A model's 5xx, seen from the provider's own circuit. One failing model says nothing about the others,
   * but failures spanning several of the provider's models with no success in between (any success of
   * the provider ends the streak) say the provider itself is down: its circuit opens at the threshold
   * once at least two models failed. A probe of a circuit opened that way that fails again reopens it; a
   * probe of a circuit opened by network failures that gets a 5xx only releases its slot (the provider
   * is reachable again; the model's own circuit counts the 5xx).
   */
  private modelFailed(provider: string, model: string): Entry | undefined {
    const own = this.advance(keyOf(provider));
    if (own?.state === 'open') return undefined;
    if (own?.state === 'half-open') {
      if (own.models) this.open(own);
      else if (own.probesInFlight > 0) own.probesInFlight--;
      return own;
    }
    // The streak lives beside the circuits (not in snapshots or listings) until it opens the provider's.
    let spread = this.spreads.get(provider);
    if (!spread) this.spreads.set(provider, (spread = { failures: 0, models: new Set(), since: this.now() }));
    spread.failures++;
    spread.models.add(model);
    if (spread.failures < this.config.failureThreshold || spread.models.size < 2) return undefined;
    this.spreads.delete(provider);
    const entry = own ?? this.create(provider, undefined);
    entry.consecutiveFailures = spread.failures;
    entry.since = spread.since;
    entry.models = spread.models;
    this.open(entry);
    return entry;
  }

  /** A circuit's state now (an open circuit whose cooldown has passed reports half-open). */
  state(provider: string, model?: string): BreakerState {
    return this.advance(keyOf(provider, model))?.state ?? 'closed';
  }

  /**
   * Closes one provider's circuits (its own and its models'), or every circuit when no provider is
   * given. Emits for non-closed ones.
   */
  reset(provider?: string): void {
    if (provider === undefined) this.spreads.clear();
    else this.spreads.delete(provider);
    for (const [key, entry] of [...this.entries]) {
      if (provider !== undefined && entry.provider !== provider) continue;
      this.entries.delete(key);
      if (entry.state !== 'closed') this.emit(entry, { from: entry.state, to: 'closed', consecutiveFailures: 0, ...this.downtime(entry) });
    }
  }

  /** Subscribes to state changes; returns an unsubscribe function. */
  onStateChange(listener: (event: BreakerEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Subscribes to recoveries only (any transition to closed); returns an unsubscribe function. */
  onRecovered(listener: (event: BreakerEvent) => void): () => void {
    return this.onStateChange((event) => {
      if (event.to === 'closed') listener(event);
    });
  }

  /** JSON-able state of every circuit that is not cleanly closed. */
  snapshot(): BreakerSnapshotEntry[] {
    return [...this.entries.values()].map(toSnapshot);
  }

  /**
   * Replaces all state with a snapshot (e.g. after a restart). Circuits whose open period ended before
   * `now` come back half-open so the first request probes; malformed entries are skipped. No events
   * are emitted: these are not new transitions.
   */
  restore(snapshot: readonly BreakerSnapshotEntry[], now: number = this.now()): void {
    this.entries.clear();
    this.spreads.clear();
    for (const item of snapshot) {
      if (!isSnapshotEntry(item)) continue;
      let state = item.state;
      if (state === 'open' && item.openUntil <= now) state = 'half-open';
      const failures = Math.max(0, Math.floor(item.consecutiveFailures));
      if (state === 'closed' && failures === 0) continue;
      const model = typeof item.model === 'string' ? item.model : undefined;
      this.entries.set(keyOf(item.provider, model), {
        provider: item.provider,
        ...(model === undefined ? {} : { model }),
        state,
        consecutiveFailures: failures,
        openUntil: state === 'open' ? item.openUntil : 0,
        probesInFlight: 0,
        lastProbeAt: 0,
        since: typeof item.since === 'number' && Number.isFinite(item.since) ? item.since : 0,
      });
    }
  }

  /**
   * A circuit another node of the cluster opened (or closed after a successful probe): applied as is,
   * with no events (the node that saw the transition announced it). An open circuit here that lasts
   * longer is kept.
   */
  applyRemote(item: BreakerSnapshotEntry): void {
    if (!isSnapshotEntry(item)) return;
    const model = typeof item.model === 'string' ? item.model : undefined;
    const key = keyOf(item.provider, model);
    if (item.state === 'closed') {
      this.entries.delete(key);
      if (model === undefined) this.spreads.delete(item.provider);
      return;
    }
    const existing = this.entries.get(key);
    if (existing?.state === 'open' && existing.openUntil >= item.openUntil) return;
    const open = item.openUntil > this.now();
    this.entries.set(key, {
      provider: item.provider,
      ...(model === undefined ? {} : { model }),
      state: open ? 'open' : 'half-open',
      consecutiveFailures: Math.max(0, Math.floor(item.consecutiveFailures)),
      openUntil: open ? item.openUntil : 0,
      probesInFlight: 0,
      lastProbeAt: 0,
      since: typeof item.since === 'number' && Number.isFinite(item.since) ? item.since : 0,
    });
  }

  /** One circuit's state as a snapshot entry (undefined when closed and clean). */
  entry(provider: string, model?: string): BreakerSnapshotEntry | undefined {
    const e = this.entries.get(keyOf(provider, model));
    return e && toSnapshot(e);
  }

  /** Moves an open entry whose cooldown has passed to half-open; returns the entry. */
  private advance(key: string): Entry | undefined {
    const entry = this.entries.get(key);
    if (entry?.state === 'open' && this.now() >= entry.openUntil) {
      entry.state = 'half-open';
      entry.probesInFlight = 0;
      this.emit(entry, { from: 'open', to: 'half-open', consecutiveFailures: entry.consecutiveFailures });
    }
    return entry;
  }

  private create(provider: string, model: string | undefined): Entry {
    const entry: Entry = { provider, state: 'closed', consecutiveFailures: 0, openUntil: 0, probesInFlight: 0, lastProbeAt: 0, since: this.now() };
    if (model !== undefined) entry.model = model;
    this.entries.set(keyOf(provider, model), entry);
    return entry;
  }

  private open(entry: Entry): void {
    const from = entry.state;
    entry.state = 'open';
    entry.openUntil = this.now() + this.config.cooldownMs;
    entry.probesInFlight = 0;
    this.emit(entry, { from, to: 'open', consecutiveFailures: entry.consecutiveFailures });
  }

  /** `{downtimeMs}` for a recovery event, when the streak's start is known. */
  private downtime(entry: Entry): { downtimeMs?: number; since?: number } {
    return entry.since > 0 ? { downtimeMs: Math.max(0, this.now() - entry.since), since: entry.since } : {};
  }

  private emit(entry: Entry, change: Omit<BreakerEvent, 'provider' | 'model'>): void {
    const event: BreakerEvent = entry.model === undefined ? { provider: entry.provider, ...change } : { provider: entry.provider, model: entry.model, ...change };
    for (const listener of this.listeners) {
      // A failing listener (e.g. a webhook sender) must not corrupt breaker state or the request path.
      try {
        listener(event);
      } catch {
        /* ignored on purpose */
      }
    }
  }
}

function toSnapshot(e: Entry): BreakerSnapshotEntry {
  const out: BreakerSnapshotEntry = { provider: e.provider, state: e.state, consecutiveFailures: e.consecutiveFailures, openUntil: e.openUntil };
  if (e.since > 0) out.since = e.since;
  if (e.model !== undefined) out.model = e.model;
  return out;
}

function isSnapshotEntry(value: unknown): value is BreakerSnapshotEntry {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.provider === 'string' &&
    (v.model === undefined || typeof v.model === 'string') &&
    (v.state === 'closed' || v.state === 'open' || v.state === 'half-open') &&
    typeof v.consecutiveFailures === 'number' &&
    Number.isFinite(v.consecutiveFailures) &&
    typeof v.openUntil === 'number' &&
    Number.isFinite(v.openUntil)
  );
}
