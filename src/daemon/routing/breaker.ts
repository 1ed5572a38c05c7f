/**
 * Per-provider circuit breakers. After `failureThreshold` consecutive breaker-eligible failures a
 * provider's circuit opens and requests to it are refused for `cooldownMs`; then it turns half-open and
 * lets `halfOpenProbes` requests through. A probe success closes the circuit, a probe failure reopens
 * it for another cooldown. All state is in memory; `snapshot`/`restore` carry it across restarts.
 */
import { type Clock, secondsUntil, systemClock } from './clock.js';
import { type ClassifiedFailure, type FailureKind, isBreakerEligible } from './provider-error.js';

/** The three breaker states. */
export type BreakerState = 'closed' | 'open' | 'half-open';

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

/** Result of {@link CircuitBreakers.check}. `probe` marks a half-open trial request. */
export type BreakerDecision = { allowed: true; probe: boolean } | { allowed: false; retryAfterSeconds: number };

/** Emitted on every state change (open -> webhook `provider.error`, closed -> `provider.recovered`). */
export interface BreakerEvent {
  provider: string;
  from: BreakerState;
  to: BreakerState;
  consecutiveFailures: number;
}

/** One provider's persisted breaker state; `openUntil` is epoch ms (only meaningful when open). */
export interface BreakerSnapshotEntry {
  provider: string;
  state: BreakerState;
  consecutiveFailures: number;
  openUntil: number;
}

interface Entry {
  state: BreakerState;
  consecutiveFailures: number;
  openUntil: number;
  probesInFlight: number;
  lastProbeAt: number;
}

/** Registry of circuit breakers keyed by provider id. Every operation is O(1). */
export class CircuitBreakers {
  private readonly entries = new Map<string, Entry>();
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
   * Whether a request to the provider may go out now. While half-open each allowed call takes a probe
   * slot, released by the next recorded result; a slot whose result never arrives (request abandoned)
   * is reclaimed after one cooldown so the circuit cannot wedge half-open.
   */
  check(provider: string): BreakerDecision {
    const entry = this.advance(provider);
    if (!entry || entry.state === 'closed') return { allowed: true, probe: false };
    const now = this.now();
    if (entry.state === 'open') return { allowed: false, retryAfterSeconds: secondsUntil(entry.openUntil, now) };
    if (entry.probesInFlight > 0 && now - entry.lastProbeAt >= this.config.cooldownMs) entry.probesInFlight = 0;
    if (entry.probesInFlight >= this.config.halfOpenProbes) {
      return { allowed: false, retryAfterSeconds: secondsUntil(entry.lastProbeAt + this.config.cooldownMs, now) };
    }
    entry.probesInFlight++;
    entry.lastProbeAt = now;
    return { allowed: true, probe: true };
  }

  /**
   * Whether {@link check} would let a request out now, without taking a half-open probe slot. For
   * planning: a provider planned as a fallback may never be called, and must not hold the only probe.
   */
  peek(provider: string): BreakerDecision {
    const entry = this.advance(provider);
    if (!entry || entry.state === 'closed') return { allowed: true, probe: false };
    const now = this.now();
    if (entry.state === 'open') return { allowed: false, retryAfterSeconds: secondsUntil(entry.openUntil, now) };
    const stale = entry.probesInFlight > 0 && now - entry.lastProbeAt >= this.config.cooldownMs;
    if (!stale && entry.probesInFlight >= this.config.halfOpenProbes) {
      return { allowed: false, retryAfterSeconds: secondsUntil(entry.lastProbeAt + this.config.cooldownMs, now) };
    }
    return { allowed: true, probe: true };
  }

  /** Records a success: resets the failure count, and closes a half-open circuit. Ignored while open. */
  recordSuccess(provider: string): void {
    const entry = this.advance(provider);
    if (!entry) return;
    // A late success from a request admitted before the circuit opened proves little; only probes decide.
    if (entry.state === 'open') return;
    const from = entry.state;
    this.entries.delete(provider);
    if (from === 'half-open') this.emit({ provider, from, to: 'closed', consecutiveFailures: 0 });
  }

  /**
   * Records a failure. Only breaker-eligible failures (network, timeout, 5xx) count; others (429, auth,
   * other 4xx) neither count nor reset the streak, but do release a half-open probe slot because the
   * provider did answer.
   */
  recordFailure(provider: string, failure: FailureKind | ClassifiedFailure): void {
    const eligible = typeof failure === 'string' ? isBreakerEligible(failure) : failure.breakerEligible;
    const entry = this.advance(provider);
    if (!eligible) {
      if (entry?.state === 'half-open' && entry.probesInFlight > 0) entry.probesInFlight--;
      return;
    }
    const current = entry ?? this.create(provider);
    current.consecutiveFailures++;
    if (current.state === 'half-open') this.open(provider, current);
    else if (current.state === 'closed' && current.consecutiveFailures >= this.config.failureThreshold) {
      this.open(provider, current);
    }
  }

  /** The provider's state now (an open circuit whose cooldown has passed reports half-open). */
  state(provider: string): BreakerState {
    return this.advance(provider)?.state ?? 'closed';
  }

  /** Closes one provider's circuit, or every circuit when no provider is given. Emits for non-closed ones. */
  reset(provider?: string): void {
    const names = provider === undefined ? [...this.entries.keys()] : [provider];
    for (const name of names) {
      const entry = this.entries.get(name);
      if (!entry) continue;
      this.entries.delete(name);
      if (entry.state !== 'closed') this.emit({ provider: name, from: entry.state, to: 'closed', consecutiveFailures: 0 });
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

  /** JSON-able state of every provider that is not cleanly closed. */
  snapshot(): BreakerSnapshotEntry[] {
    const out: BreakerSnapshotEntry[] = [];
    for (const [provider, e] of this.entries) {
      out.push({ provider, state: e.state, consecutiveFailures: e.consecutiveFailures, openUntil: e.openUntil });
    }
    return out;
  }

  /**
   * Replaces all state with a snapshot (e.g. after a restart). Circuits whose open period ended before
   * `now` come back half-open so the first request probes; malformed entries are skipped. No events
   * are emitted: these are not new transitions.
   */
  restore(snapshot: readonly BreakerSnapshotEntry[], now: number = this.now()): void {
    this.entries.clear();
    for (const item of snapshot) {
      if (!isSnapshotEntry(item)) continue;
      let state = item.state;
      if (state === 'open' && item.openUntil <= now) state = 'half-open';
      const failures = Math.max(0, Math.floor(item.consecutiveFailures));
      if (state === 'closed' && failures === 0) continue;
      this.entries.set(item.provider, {
        state,
        consecutiveFailures: failures,
        openUntil: state === 'open' ? item.openUntil : 0,
        probesInFlight: 0,
        lastProbeAt: 0,
      });
    }
  }

  /** Moves an open entry whose cooldown has passed to half-open; returns the entry. */
  private advance(provider: string): Entry | undefined {
    const entry = this.entries.get(provider);
    if (entry?.state === 'open' && this.now() >= entry.openUntil) {
      entry.state = 'half-open';
      entry.probesInFlight = 0;
      this.emit({ provider, from: 'open', to: 'half-open', consecutiveFailures: entry.consecutiveFailures });
    }
    return entry;
  }

  private create(provider: string): Entry {
    const entry: Entry = { state: 'closed', consecutiveFailures: 0, openUntil: 0, probesInFlight: 0, lastProbeAt: 0 };
    this.entries.set(provider, entry);
    return entry;
  }

  private open(provider: string, entry: Entry): void {
    const from = entry.state;
    entry.state = 'open';
    entry.openUntil = this.now() + this.config.cooldownMs;
    entry.probesInFlight = 0;
    this.emit({ provider, from, to: 'open', consecutiveFailures: entry.consecutiveFailures });
  }

  private emit(event: BreakerEvent): void {
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

function isSnapshotEntry(value: unknown): value is BreakerSnapshotEntry {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.provider === 'string' &&
    (v.state === 'closed' || v.state === 'open' || v.state === 'half-open') &&
    typeof v.consecutiveFailures === 'number' &&
    Number.isFinite(v.consecutiveFailures) &&
    typeof v.openUntil === 'number' &&
    Number.isFinite(v.openUntil)
  );
}
