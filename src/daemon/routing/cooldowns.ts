/**
 * Per (connection, model) cooldowns: after a 429 or similar, a connection is skipped for that model until
 * the upstream's reset time. A success clears it. Entries expire lazily on read, so nothing needs a timer.
 */
import { type Clock, secondsUntil, systemClock } from './clock.js';
import { MAX_RETRY_SECONDS } from './retry-after.js';
import type { CooldownEntry, CooldownView } from '../../shared/records.js';

/** Model name that cools a connection for every model (e.g. after an auth failure). */
export const ANY_MODEL = '*';

export type { CooldownEntry, CooldownView };

/** The read side other modules need (account selection); lets them avoid depending on the class. */
export interface CooldownReader {
  isCooling(connectionId: string, model: string): boolean;
}

// NUL cannot appear in ids or model names coming from JSON config, so the joined key is unambiguous.
const keyOf = (connectionId: string, model: string): string => `${connectionId}\u0000${model}`;

/** A change other nodes of a cluster must learn (hot/shared-routing.ts). */
export type CooldownChange = { type: 'set'; entry: CooldownEntry } | { type: 'clear'; connectionId: string; model?: string };

/** In-memory cooldown table. Lookups are O(1). */
export class CooldownStore implements CooldownReader {
  private readonly entries = new Map<string, CooldownEntry>();
  private readonly now: Clock;
  /** Told of every local change (cluster mode only; unset on one machine). */
  listener?: (change: CooldownChange) => void;

  constructor(options: { now?: Clock } = {}) {
    this.now = options.now ?? systemClock;
  }

  /**
   * Cools a connection for a model (or {@link ANY_MODEL}) for `seconds`, clamped to 1 s..24 h. An
   * existing longer cooldown is kept: a short hint must not cut a long upstream reset short.
   */
  set(connectionId: string, model: string, seconds: number, reason = ''): void {
    const clamped = Number.isFinite(seconds) ? Math.min(MAX_RETRY_SECONDS, Math.max(1, Math.ceil(seconds))) : 1;
    const until = this.now() + clamped * 1000;
    const key = keyOf(connectionId, model);
    const existing = this.entries.get(key);
    if (existing && existing.until >= until) return;
    const entry = { connectionId, model, until, reason };
    this.entries.set(key, entry);
    this.listener?.({ type: 'set', entry });
  }

  /** A cooldown another node learned: kept unless a longer one is already here. Tells no listener. */
  applyRemote(entry: CooldownEntry): void {
    if (!isEntry(entry) || entry.until <= this.now()) return;
    const key = keyOf(entry.connectionId, entry.model);
    const existing = this.entries.get(key);
    if (existing && existing.until >= entry.until) return;
    this.entries.set(key, { connectionId: entry.connectionId, model: entry.model, until: entry.until, reason: entry.reason });
  }

  /** A cooldown another node ended (a success there); `model` undefined: every cooldown of the connection. */
  clearRemote(connectionId: string, model?: string): void {
    if (model === undefined) this.dropConnection(connectionId);
    else this.entries.delete(keyOf(connectionId, model));
  }

  /** Ends the cooldown of one (connection, model) pair; call it when a request to them succeeds. */
  clear(connectionId: string, model: string): void {
    if (this.entries.delete(keyOf(connectionId, model))) this.listener?.({ type: 'clear', connectionId, model });
  }

  /** Ends every cooldown of a connection (e.g. after its key was replaced). O(entries). */
  clearConnection(connectionId: string): void {
    if (this.dropConnection(connectionId)) this.listener?.({ type: 'clear', connectionId });
  }

  private dropConnection(connectionId: string): boolean {
    let dropped = false;
    for (const [key, entry] of this.entries) {
      if (entry.connectionId === connectionId) dropped = this.entries.delete(key);
    }
    return dropped;
  }

  /** Whether the connection is cooling for the model, directly or through {@link ANY_MODEL}. */
  isCooling(connectionId: string, model: string): boolean {
    return this.untilOf(connectionId, model) > this.now();
  }

  /** Whole seconds (rounded up) until the connection is usable for the model again; 0 when it is now. */
  remaining(connectionId: string, model: string): number {
    const until = this.untilOf(connectionId, model);
    const now = this.now();
    return until > now ? secondsUntil(until, now) : 0;
  }

  /**
   * Seconds until the first of `connectionIds` is usable for `model` again: 0 when any of them is
   * usable now (or the list is empty). Used for the `reset_seconds` of the all-cooling error.
   */
  earliestReset(model: string, connectionIds: Iterable<string>): number {
    let earliest = Infinity;
    for (const id of connectionIds) {
      const left = this.remaining(id, model);
      if (left === 0) return 0;
      if (left < earliest) earliest = left;
    }
    return earliest === Infinity ? 0 : earliest;
  }

  /** Active cooldowns for the management route, soonest first; drops expired ones on the way. */
  list(): CooldownView[] {
    const now = this.now();
    this.prune();
    const out: CooldownView[] = [];
    for (const e of this.entries.values()) out.push({ ...e, remainingSeconds: secondsUntil(e.until, now) });
    return out.sort((a, b) => a.until - b.until);
  }

  /** Removes expired entries; lookups already ignore them, this only frees memory. */
  prune(): void {
    const now = this.now();
    for (const [key, entry] of this.entries) if (entry.until <= now) this.entries.delete(key);
  }

  /** JSON-able active cooldowns for persistence. */
  snapshot(): CooldownEntry[] {
    this.prune();
    return [...this.entries.values()].map((e) => ({ ...e }));
  }

  /** Replaces all state with persisted entries, dropping expired and malformed ones. */
  restore(entries: readonly CooldownEntry[], now: number = this.now()): void {
    this.entries.clear();
    for (const e of entries) {
      if (!isEntry(e) || e.until <= now) continue;
      this.entries.set(keyOf(e.connectionId, e.model), { connectionId: e.connectionId, model: e.model, until: e.until, reason: e.reason });
    }
  }

  /** Latest end time of the exact and the any-model cooldown; expired entries are deleted on the way. */
  private untilOf(connectionId: string, model: string): number {
    const exact = this.liveUntil(keyOf(connectionId, model));
    return model === ANY_MODEL ? exact : Math.max(exact, this.liveUntil(keyOf(connectionId, ANY_MODEL)));
  }

  private liveUntil(key: string): number {
    const entry = this.entries.get(key);
    if (!entry) return 0;
    if (entry.until > this.now()) return entry.until;
    this.entries.delete(key);
    return 0;
  }
}

function isEntry(value: unknown): value is CooldownEntry {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v.connectionId === 'string' &&
    typeof v.model === 'string' &&
    typeof v.until === 'number' &&
    Number.isFinite(v.until) &&
    typeof v.reason === 'string'
  );
}
