/**
 * Account balancing: choosing among several connections (accounts) of one provider. The caller hands
 * over each provider's connection list as an immutable array and swaps it when connections change; the
 * priority order is computed then, not per request. Per request the work is one pass over the list
 * (plus a sort of the available ones for `least-used`).
 */
import type { DemotionReader } from './account-health.js';
import type { HeadroomReader } from './account-limits.js';
import { ACCOUNT_STRATEGIES } from '../../shared/records.js';
import type { CooldownReader } from './cooldowns.js';
import type { SessionAffinity } from './session-affinity.js';

/** Account selection strategies (src/shared/records.ts: the settings schema reads the same list). */
export { ACCOUNT_STRATEGIES };

/** An account selection strategy name. */
export type AccountStrategy = (typeof ACCOUNT_STRATEGIES)[number];

/** The fields selection reads; callers may pass richer connection objects and get them back. */
export interface AccountConnection {
  id: string;
  /** Lower is preferred; missing sorts after every numbered connection. */
  priority?: number;
  /** `false` excludes the connection. Missing means active. */
  active?: boolean;
}

/** Per-request options of {@link AccountSelector.order}. */
export interface OrderOptions {
  /** Default `fill-first`. */
  strategy?: AccountStrategy;
  /** Session id (from a request header); keeps the session on the connection it used last. */
  sessionKey?: string;
}

interface Pool<C> {
  sorted: readonly C[];
  ids: ReadonlySet<string>;
  cursor: number;
  usage: Map<string, number>;
}

/** Selects connections per provider; state is in memory and updated in O(1) per request. */
export class AccountSelector<C extends AccountConnection = AccountConnection> {
  private readonly pools = new Map<string, Pool<C>>();
  private readonly cooldowns: CooldownReader;
  private readonly affinity?: SessionAffinity;
  private readonly health?: DemotionReader;
  private readonly limits?: HeadroomReader;

  constructor(options: { cooldowns: CooldownReader; affinity?: SessionAffinity; health?: DemotionReader; limits?: HeadroomReader }) {
    this.cooldowns = options.cooldowns;
    this.affinity = options.affinity;
    this.health = options.health;
    this.limits = options.limits;
  }

  /**
   * Installs a provider's connections. Usage counts of kept connections survive; a new connection
   * starts at the current minimum count so `least-used` does not flood it until it "catches up".
   */
  setConnections(provider: string, connections: readonly C[]): void {
    const sorted = connections
      .map((c, i) => ({ c, i, p: Number.isFinite(c.priority) ? (c.priority as number) : Infinity }))
      .sort((a, b) => (a.p === b.p ? a.i - b.i : a.p < b.p ? -1 : 1))
      .map((x) => x.c);
    const previous = this.pools.get(provider);
    const usage = new Map<string, number>();
    let floor = Infinity;
    for (const count of previous?.usage.values() ?? []) floor = Math.min(floor, count);
    for (const c of sorted) usage.set(c.id, previous?.usage.get(c.id) ?? (floor === Infinity ? 0 : floor));
    this.pools.set(provider, { sorted, ids: new Set(sorted.map((c) => c.id)), cursor: previous?.cursor ?? 0, usage });
  }

  /** Forgets a provider entirely. */
  removeProvider(provider: string): void {
    this.pools.delete(provider);
  }

  /**
   * The provider's usable connections for `model`, in the order to try them: inactive connections and
   * those cooling down for the model are skipped; demoted ones (repeated failures, see account-health.ts)
   * go after the others, in strategy order among themselves. A session's sticky connection goes first
   * while it is usable and not demoted; once it is not, the binding is released so the session moves on.
   */
  order(provider: string, model: string, options: OrderOptions = {}): C[] {
    const pool = this.pools.get(provider);
    if (!pool) return [];
    const available: C[] = [];
    for (const c of pool.sorted) {
      if (c.active !== false && !this.cooldowns.isCooling(c.id, model)) available.push(c);
    }
    if (available.length === 0) return available;
    const ordered = this.applyStrategy(pool, available, options.strategy ?? 'fill-first');
    const demoting = this.health?.active === true && ordered.length > 1;
    if (demoting) this.demote(ordered, model);
    if (options.sessionKey !== undefined && this.affinity) this.applySticky(provider, options.sessionKey, ordered, demoting ? model : undefined);
    return ordered;
  }

  /**
   * Records that a request went to a connection: counts it for `least-used` and binds the session to
   * it. Call it for each attempt, so the session ends bound to the connection that served it last.
   */
  recordUse(provider: string, connectionId: string, sessionKey?: string): void {
    const pool = this.pools.get(provider);
    if (!pool || !pool.ids.has(connectionId)) return;
    pool.usage.set(connectionId, (pool.usage.get(connectionId) ?? 0) + 1);
    if (sessionKey !== undefined) this.affinity?.bind(provider, sessionKey, connectionId);
  }

  /** Counts a request for `least-used` only (the router counts when it plans, so bursts spread). */
  countUse(provider: string, connectionId: string): void {
    const pool = this.pools.get(provider);
    if (!pool || !pool.ids.has(connectionId)) return;
    pool.usage.set(connectionId, (pool.usage.get(connectionId) ?? 0) + 1);
  }

  /** Binds a session to the connection that served it, without counting a use. */
  bindSession(provider: string, sessionKey: string, connectionId: string): void {
    const pool = this.pools.get(provider);
    if (!pool || !pool.ids.has(connectionId)) return;
    this.affinity?.bind(provider, sessionKey, connectionId);
  }

  /** Requests recorded for a connection (as adjusted when it joined). */
  usageOf(provider: string, connectionId: string): number {
    return this.pools.get(provider)?.usage.get(connectionId) ?? 0;
  }

  private applyStrategy(pool: Pool<C>, available: C[], strategy: AccountStrategy): C[] {
    if (strategy === 'round-robin') {
      // Rotating over the usable connections (not the full list) keeps the share even while some cool.
      const n = available.length;
      const start = pool.cursor % n;
      pool.cursor = (start + 1) % n;
      return start === 0 ? available : [...available.slice(start), ...available.slice(0, start)];
    }
    if (strategy === 'least-used') {
      // Array.prototype.sort is stable, so equal counts keep priority order.
      return available.sort((a, b) => (pool.usage.get(a.id) ?? 0) - (pool.usage.get(b.id) ?? 0));
    }
    if (strategy === 'headroom' && this.limits && available.length > 1) {
      // Most quota left first; an account that never reported counts as full (it gets tried and then
      // reports). Stable, so equal headroom keeps priority order.
      const limits = this.limits;
      return available.sort((a, b) => (limits.headroom(b.id) ?? 1) - (limits.headroom(a.id) ?? 1));
    }
    return available;
  }

  /** Moves demoted connections after the others, keeping each group's order (in place, stable). */
  private demote(ordered: C[], model: string): void {
    const later: C[] = [];
    let w = 0;
    for (const c of ordered) {
      if (this.health!.isDemoted(c.id, model)) later.push(c);
      else ordered[w++] = c;
    }
    // None demoted, or all (nothing was moved then): the strategy's order stands.
    if (later.length === 0 || w === 0) return;
    for (const c of later) ordered[w++] = c;
  }

  private applySticky(provider: string, sessionKey: string, ordered: C[], demotedFor?: string): void {
    const stickyId = this.affinity!.get(provider, sessionKey);
    if (stickyId === undefined) return;
    const index = ordered.findIndex((c) => c.id === stickyId);
    if (index === -1 || (demotedFor !== undefined && this.health!.isDemoted(stickyId, demotedFor))) {
      this.affinity!.release(provider, sessionKey);
      return;
    }
    if (index > 0) ordered.unshift(...ordered.splice(index, 1));
  }
}
