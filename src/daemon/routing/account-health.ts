/**
 * Demotion of failing accounts. An account whose replies for a model are 5xx again and again, or that says
 * it cannot use the model, keeps its place in a pool's order only until it has failed
 * `DEMOTE_AFTER_FAILURES` times in a row (one model-access reply is enough): then it is tried after every
 * healthy account for that model, never excluded (with no healthy account left it is still tried, so a pool
 * whose every account hiccups keeps serving). A demotion lasts `BASE_DEMOTION_MS`, doubled with each
 * demotion of the same streak up to `MAX_DEMOTION_MS`; after it the account is tried first again and one more
 * failure demotes it at once. A success ends the streak.
 *
 * Unlike a cooldown (the upstream said "not before then"), a demotion is router's own guess, so it only
 * reorders. All state is in memory; lookups are O(1) and skipped entirely while no account is demoted.
 */
import { type Clock, systemClock } from './clock.js';

/** Consecutive 5xx (or empty) replies of one account for one model before it is demoted. */
export const DEMOTE_AFTER_FAILURES = 3;
/** First demotion of a streak. */
export const BASE_DEMOTION_MS = 30_000;
/** Longest demotion. */
export const MAX_DEMOTION_MS = 10 * 60_000;

interface Streak {
  failures: number;
  demotions: number;
  until: number;
}

const keyOf = (connectionId: string, model: string): string => `${connectionId}\u0000${model}`;

/** What account selection reads. */
export interface DemotionReader {
  /** True when some account is demoted (selection skips the per-account check otherwise). */
  readonly active: boolean;
  isDemoted(connectionId: string, model: string): boolean;
}

/** A demoted account as the management routes show it. */
export interface DemotionView {
  connectionId: string;
  model: string;
  failures: number;
  remainingSeconds: number;
}

/** Failure streaks per (account, model). */
export class AccountHealth implements DemotionReader {
  private readonly streaks = new Map<string, Streak>();
  private demoted = 0;
  private readonly now: Clock;

  constructor(options: { now?: Clock } = {}) {
    this.now = options.now ?? systemClock;
  }

  get active(): boolean {
    return this.demoted > 0;
  }

  /**
   * Counts a failure; `immediate` demotes at once (the account said it cannot use the model). Returns true
   * when this failure demoted the account.
   */
  failed(connectionId: string, model: string, immediate = false): boolean {
    const key = keyOf(connectionId, model);
    let s = this.streaks.get(key);
    if (!s) this.streaks.set(key, (s = { failures: 0, demotions: 0, until: 0 }));
    s.failures++;
    const now = this.now();
    if (s.until > now) return false;
    this.expire(s);
    if (!immediate && s.failures < DEMOTE_AFTER_FAILURES) return false;
    s.until = now + Math.min(MAX_DEMOTION_MS, BASE_DEMOTION_MS * 2 ** s.demotions);
    s.demotions++;
    this.demoted++;
    return true;
  }

  /** Ends the account's streak for the model. */
  succeeded(connectionId: string, model: string): void {
    if (this.streaks.size === 0) return;
    const key = keyOf(connectionId, model);
    const s = this.streaks.get(key);
    if (!s) return;
    if (s.until > 0) this.demoted--;
    this.streaks.delete(key);
  }

  isDemoted(connectionId: string, model: string): boolean {
    const s = this.streaks.get(keyOf(connectionId, model));
    if (!s || s.until === 0) return false;
    if (s.until > this.now()) return true;
    // Expired: tried first again, but the streak stands, so one more failure demotes it at once.
    this.expire(s);
    return false;
  }

  private expire(s: Streak): void {
    if (s.until === 0) return;
    s.until = 0;
    this.demoted--;
  }

  /** Forgets every streak of a connection (its key was replaced, it was deleted). */
  clearConnection(connectionId: string): void {
    for (const [key, s] of this.streaks) {
      if (!key.startsWith(`${connectionId}\u0000`)) continue;
      if (s.until > 0) this.demoted--;
      this.streaks.delete(key);
    }
  }

  /** Forgets every streak (all accounts, or those of the given connections). */
  clear(connectionIds?: Iterable<string>): void {
    if (connectionIds === undefined) {
      this.streaks.clear();
      this.demoted = 0;
      return;
    }
    for (const id of connectionIds) this.clearConnection(id);
  }

  /** Demoted accounts now, soonest back first. */
  list(): DemotionView[] {
    const now = this.now();
    const out: DemotionView[] = [];
    for (const [key, s] of this.streaks) {
      if (s.until <= now) continue;
      const [connectionId, model] = key.split('\u0000') as [string, string];
      out.push({ connectionId, model, failures: s.failures, remainingSeconds: Math.ceil((s.until - now) / 1000) });
    }
    return out.sort((a, b) => a.remainingSeconds - b.remainingSeconds);
  }
}
