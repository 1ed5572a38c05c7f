/**
 * Quotas and rate limits of API keys, called by the proxy pipeline:
 * - `admit` before a request goes upstream: relay per-minute limits (per key and per client IP), the
 *   key's daily request limit (its own, or the `defaultDailyRequestLimit` setting) and its token limits;
 *   refuses with a 429 (`type: rate_limit_error`, a specific `code`, `Retry-After`) or counts the request.
 * - `allowedModel` enforces `model:<glob>` scopes (403).
 * - `recordTokens` after a reply consumes the key's token budgets.
 * `quota.exceeded` is emitted once per threshold (80% and 100%) per key, limit and period.
 *
 * Everything on the request path is in memory and O(number of the key's limits). Counters are written
 * behind: dirty counters are upserted in one transaction on a timer and on `close()`, and read back at
 * start, so daily request counts and token usage survive a restart.
 */
import type { AuthInfo } from '../auth/pipeline.js';
import type { EventBus } from '../events/bus.js';
import { RouterError } from '../http/errors.js';
import type { KeyRecord, KeyStore, TokenLimit, UsdBudget } from '../keys/store.js';
import type { Logger } from '../logger.js';
import { type Clock, nextUtcMidnight, nextUtcMonthStart, systemClock } from '../routing/clock.js';
import { SlidingWindowLimiter, type LimitResult } from './rate-limit.js';
import { TokenBudgets, type BudgetScope, type ThresholdEvent, type TokenBudget } from './token-budget.js';
import type { SettingsStore } from '../settings/store.js';
import type { Db } from '../store/db.js';
import { globMatch } from '../../shared/glob.js';
import { LocalHotState } from '../hot/local.js';
import type { HotState } from '../hot/port.js';
import type { Price } from '../usage/pricing.js';
import { budgetCounter, budgetWindow, NANO_PER_USD } from './budget.js';
import { type BudgetCall, HotQuotas, type SettledRow } from './hot-quotas.js';


/** The `code` of a 429 refused by this module. */
export type QuotaCode = 'daily_request_limit' | 'token_limit' | 'relay_rate_limit_key' | 'relay_rate_limit_ip' | 'budget_exceeded';

/** What `admit` needs to know about a request. */
export interface AdmitRequest {
  /** Provider id of the target (`target.provider.id`). */
  provider: string;
  /** Model id of the target as the upstream knows it (`target.model`); a `<provider>/`-prefixed id is accepted too. */
  model: string;
  /** True on the relay route: the per-minute limits apply. */
  relay: boolean;
  /** The client address the relay limit counts against; '' falls back to `auth.remoteAddress`. */
  clientIp: string;
  /** The call and its trace id, for a key's USD budget (its reservation is settled by the call's usage rows). */
  budget?: BudgetCall;
}

/** Tokens a reply used, for `recordTokens`. */
export interface TokenUsage {
  provider: string;
  model: string;
  /** Input plus output tokens. Non-positive or non-finite values count nothing. */
  tokens: number;
}

/** Thresholds announced by `quota.exceeded`, as fractions of the limit. */
export const QUOTA_THRESHOLDS = [0.8, 1] as const;

export interface QuotaServiceOptions {
  db: Db;
  settings: SettingsStore;
  keys: KeyStore;
  events: EventBus;
  log?: Logger;
  now?: Clock;
  /** Write-behind interval, ms; 0 disables the timer (flush only on demand and on close). Default 30,000. */
  flushIntervalMs?: number;
  /** Hot state: the Redis adapter makes every limit cluster-wide; default in-process (one machine). */
  hot?: HotState;
  /** Prices and output caps, for the reservations of USD budgets. */
  price?(provider: string, model: string): Price | undefined;
  maxOutput?(provider: string, model: string): number | undefined;
  /** Committed usage rows (budget reservations are reconciled from them). */
  onRecord?(fn: (row: SettledRow) => void): void;
}

/** Reply of `GET /api/quotas/:keyId`. */
export interface QuotaSnapshot {
  keyId: string;
  now: string;
  requests: {
    period: 'day';
    used: number;
    /** Effective limit; 0 = unlimited. */
    limit: number;
    /** Where the limit comes from: the key's own `dailyRequestLimit` or the default setting. */
    source: 'key' | 'default';
    /** null when unlimited. */
    remaining: number | null;
    resetsAt: string;
  };
  tokens: Array<TokenLimit & { used: number; remaining: number | null; resetsAt: string }>;
  relay: {
    perKeyPerMinute: number;
    /** Requests left in the current sliding minute; null when the per-key relay limit is off. */
    remaining: number | null;
  };
  /** The key's USD budget: spent plus reserved by calls in flight; null without a budget. */
  budget: { period: 'day' | 'month'; usd: number; usedUsd: number; remainingUsd: number; resetsAt: string } | null;
}

interface Dirty {
  keyId: string;
  /** `requests` or `tokens:<scope>`. */
  counter: string;
  period: 'day' | 'month';
}

const REQUESTS = 'requests';
const UNLIMITED: TokenBudget = { limit: Number.POSITIVE_INFINITY, period: 'day' };

/** `YYYY-MM-DD` (UTC) of `ms`. */
function dayStamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** `YYYY-MM` (UTC) of `ms`. */
function monthStamp(ms: number): string {
  return new Date(ms).toISOString().slice(0, 7);
}


/** `<provider>/<model>` for a target, without doubling an existing provider prefix. */
export function canonicalModel(provider: string, model: string): string {
  return model.startsWith(`${provider}/`) ? model : `${provider}/${model}`;
}

function tooMany(code: QuotaCode, message: string, result: LimitResult, extra: Record<string, unknown> = {}): RouterError {
  const retryAfter = Math.max(1, result.retryAfterSeconds);
  return new RouterError(429, message, {
    code,
    type: 'rate_limit_error',
    extra: { limit: result.limit, retry_after: retryAfter, ...extra },
    headers: { 'Retry-After': String(retryAfter) },
  });
}

function scopeWords(scope: string): string {
  if (scope === 'global') return 'across all models';
  if (scope.startsWith('provider:')) return 'for this provider';
  return 'for this model';
}

export class QuotaService {
  private readonly db: Db;
  private readonly settings: SettingsStore;
  private readonly keys: KeyStore;
  private readonly events: EventBus;
  private readonly log?: Logger;
  private readonly now: Clock;
  /** Requests per UTC day per key (the budget's key is the API key id, its scope always `global`). */
  private readonly requests: TokenBudgets;
  /** Tokens per key, scope and period (the budget's key is `<api key id>|<period>`). */
  private readonly tokens: TokenBudgets;
  private readonly relayByKey: SlidingWindowLimiter;
  private readonly relayByIp: SlidingWindowLimiter;
  private readonly dirty = new Map<string, Dirty>();
  private readonly timer?: ReturnType<typeof setInterval>;
  /** While counters are read back at start: thresholds reached before the restart are not announced again. */
  private restoring = false;
  private prunedFor = '';
  /** Budgets (everywhere) and, with Redis, every limit. */
  readonly hot: HotQuotas;
  private readonly shared: boolean;

  constructor(options: QuotaServiceOptions) {
    this.db = options.db;
    this.settings = options.settings;
    this.keys = options.keys;
    this.events = options.events;
    this.log = options.log;
    this.now = options.now ?? systemClock;
    this.requests = new TokenBudgets({ now: this.now, thresholds: QUOTA_THRESHOLDS });
    this.tokens = new TokenBudgets({ now: this.now, thresholds: QUOTA_THRESHOLDS });
    this.relayByKey = new SlidingWindowLimiter({ now: this.now, windowMs: 60_000 });
    this.relayByIp = new SlidingWindowLimiter({ now: this.now, windowMs: 60_000 });
    this.requests.onThreshold((e) => this.announce(e, 'requests_per_day', e.key, 'global'));
    this.tokens.onThreshold((e) => this.announce(e, 'tokens', e.key.slice(0, e.key.lastIndexOf('|')), e.scope));
    const hot = options.hot ?? new LocalHotState('local', { now: this.now });
    this.shared = hot.shared;
    this.hot = new HotQuotas({
      hot,
      settings: this.settings,
      events: this.events,
      log: this.log,
      dailyLimitOf: (k) => this.dailyLimitOf(k),
      thresholds: QUOTA_THRESHOLDS,
      announce: (d) => {
        // The shape documented in docs/events.md (as `announce` below).
        const data = { api_key_id: d.apiKeyId, quota: d.quota, scope: d.scope, period: d.period, window: d.period, limit: d.limit, used: d.used, threshold: d.threshold };
        this.events.emit('quota.exceeded', data);
      },
      price: options.price,
      maxOutput: options.maxOutput,
      onRecord: options.onRecord,
    });
    this.restore();
    const interval = options.flushIntervalMs ?? 30_000;
    if (interval > 0) {
      this.timer = setInterval(() => this.flush(), interval);
      this.timer.unref();
    }
  }

  /**
   * Admits a request or throws a 429 `RouterError` (`type: rate_limit_error`, `code` one of
   * {@link QuotaCode}, header `Retry-After` in seconds). Checks everything before counting anything, so a
   * refused request consumes no quota. Callers without an API key (dashboard session) are subject to the
   * relay per-IP limit only. With Redis (cluster) every limit is cluster-wide and this returns a promise
   * (one round trip); on one machine it returns nothing and never waits.
   */
  admit(auth: AuthInfo, req: AdmitRequest): void | Promise<void> {
    if (this.shared) return this.hot.admitShared(auth, req);
    const s = this.settings.get();
    const key = auth.key;
    const ip = req.clientIp || auth.remoteAddress;
    const ipLimit = req.relay ? s.relayRequestsPerMinutePerIp : 0;
    const keyLimit = req.relay && key ? s.relayRequestsPerMinutePerKey : 0;

    if (ipLimit > 0) {
      const r = this.relayByIp.peek(ip, ipLimit);
      if (!r.allowed) {
        throw tooMany('relay_rate_limit_ip', `Relay rate limit reached for this client address (${ipLimit} requests per minute).`, r);
      }
    }
    if (keyLimit > 0) {
      const r = this.relayByKey.peek(key!.id, keyLimit);
      if (!r.allowed) {
        throw tooMany('relay_rate_limit_key', `Relay rate limit reached for this API key (${keyLimit} requests per minute).`, r);
      }
    }
    let daily: TokenBudget | undefined;
    if (key) {
      daily = this.dailyBudget(key);
      if (daily !== UNLIMITED) {
        const r = this.requests.check(key.id, 'global', daily);
        if (!r.allowed) {
          throw tooMany(
            'daily_request_limit',
            `This API key reached its daily request limit (${daily.limit} requests per UTC day); it resets at 00:00 UTC.`,
            r,
          );
        }
      }
      this.checkTokenLimits(key, req.provider, req.model);
      // Last check, and it counts (a reservation): nothing else is counted when it refuses.
      if (key.budget) this.hot.reserveLocal(key, req);
    }

    if (ipLimit > 0) this.relayByIp.hit(ip, ipLimit);
    if (keyLimit > 0) this.relayByKey.hit(key!.id, keyLimit);
    if (key && daily) {
      this.requests.consume(key.id, 'global', 1, daily);
      this.markDirty(key.id, REQUESTS, 'day');
    }
  }

  /**
   * Only the token limits of `admit`, without counting anything: for a failover or combo target other
   * than the one `admit` was called with. Throws the same 429 (`token_limit`).
   */
  checkTokens(auth: AuthInfo, target: { provider: string; model: string }): void {
    if (auth.key) this.checkTokenLimits(auth.key, target.provider, target.model);
  }

  /**
   * Throws 403 (`code: model_not_allowed`) when the key holds `model:<glob>` scopes and none matches
   * `publicModel` (the model as the client named it). Keys without model scopes, and callers without a
   * key, may use every model.
   */
  allowedModel(auth: AuthInfo, publicModel: string): void {
    const scopes = auth.key?.scopes;
    if (!scopes) return;
    let restricted = false;
    for (const scope of scopes) {
      if (!scope.startsWith('model:')) continue;
      restricted = true;
      if (globMatch(scope.slice(6), publicModel)) return;
    }
    if (restricted) {
      throw new RouterError(403, 'This API key is not allowed to use this model (see its model: scopes).', {
        code: 'model_not_allowed',
        type: 'permission_error',
        extra: { model: publicModel },
      });
    }
  }

  /**
   * Consumes tokens a reply used from every token limit of the key that applies to the target. Tokens are
   * counted even past a limit (they were spent); the next `admit` refuses.
   */
  recordTokens(auth: AuthInfo, usage: TokenUsage): void {
    const key = auth.key;
    if (!key || !(usage.tokens > 0) || !Number.isFinite(usage.tokens)) return;
    const limits = key.tokenLimits ?? [];
    if (limits.length === 0) return;
    const tokens = Math.round(usage.tokens);
    if (this.shared) return this.hot.recordTokensShared(key, usage.provider, usage.model, tokens);
    const providerScope = `provider:${usage.provider}`;
    const modelScope = `model:${canonicalModel(usage.provider, usage.model)}`;
    for (const l of limits) {
      if (l.limit <= 0 || (l.scope !== 'global' && l.scope !== providerScope && l.scope !== modelScope)) continue;
      this.tokens.consume(`${key.id}|${l.period}`, l.scope, tokens, { limit: l.limit, period: l.period });
      this.markDirty(key.id, `tokens:${l.scope}`, l.period);
    }
  }

  /** A request ended without a served reply: its budget reservation (if any) is given back. */
  release(traceId: string): void {
    this.hot.release(traceId);
  }

  /** Current counters and limits of a key on this node's own counters; undefined for an unknown key. */
  snapshot(keyId: string): QuotaSnapshot | undefined {
    const key = this.keys.get(keyId);
    if (!key) return undefined;
    const snap = this.localSnapshot(key);
    if (key.budget) this.withBudget(snap, key.budget, this.hot.readLocal(budgetCounter(key.id), budgetWindow(key.budget)));
    return snap;
  }

  /** {@link snapshot} with the cluster's counters when the hot state is shared (GET /api/quotas/:keyId). */
  async current(keyId: string): Promise<QuotaSnapshot | undefined> {
    if (!this.shared) return this.snapshot(keyId);
    const key = this.keys.get(keyId);
    if (!key) return undefined;
    const snap = this.localSnapshot(key);
    const items = [
      { key: `requests:${key.id}`, window: { kind: 'period', period: 'day' } as const },
      { key: `relay-key:${key.id}`, window: { kind: 'sliding', windowMs: 60_000 } as const },
      ...snap.tokens.map((t) => ({ key: `tokens:${key.id}|${t.period}|${t.scope}`, window: { kind: 'period', period: t.period } as const })),
      ...(key.budget ? [{ key: budgetCounter(key.id), window: budgetWindow(key.budget) }] : []),
    ];
    const values = await this.hot.read(items);
    const used = values[0] ?? 0;
    snap.requests.used = used;
    snap.requests.remaining = snap.requests.limit > 0 ? Math.max(0, snap.requests.limit - used) : null;
    const relay = snap.relay.perKeyPerMinute;
    snap.relay.remaining = relay > 0 ? Math.max(0, Math.floor(relay - (values[1] ?? 0))) : null;
    snap.tokens.forEach((t, i) => {
      t.used = values[i + 2] ?? 0;
      t.remaining = t.limit > 0 ? Math.max(0, t.limit - t.used) : null;
    });
    if (key.budget) this.withBudget(snap, key.budget, values[values.length - 1] ?? 0);
    return snap;
  }

  private withBudget(snap: QuotaSnapshot, budget: UsdBudget, nano: number): void {
    const now = this.now();
    const usedUsd = Math.round((nano / NANO_PER_USD) * 1e6) / 1e6;
    snap.budget = {
      ...budget,
      usedUsd,
      remainingUsd: Math.max(0, Math.round((budget.usd - usedUsd) * 1e6) / 1e6),
      resetsAt: new Date(budget.period === 'day' ? nextUtcMidnight(now) : nextUtcMonthStart(now)).toISOString(),
    };
  }

  private localSnapshot(key: KeyRecord): QuotaSnapshot {
    const now = this.now();
    const s = this.settings.get();
    const limit = this.dailyLimitOf(key);
    const used = this.requests.used(key.id, 'global', UNLIMITED);
    const relayLimit = s.relayRequestsPerMinutePerKey;
    return {
      keyId: key.id,
      now: new Date(now).toISOString(),
      requests: {
        period: 'day',
        used,
        limit,
        source: key.dailyRequestLimit === null || key.dailyRequestLimit === undefined ? 'default' : 'key',
        remaining: limit > 0 ? Math.max(0, limit - used) : null,
        resetsAt: new Date(nextUtcMidnight(now)).toISOString(),
      },
      tokens: (key.tokenLimits ?? []).map((l) => {
        const u = this.tokens.used(`${key.id}|${l.period}`, l.scope, { limit: l.limit, period: l.period });
        return {
          ...l,
          used: u,
          remaining: l.limit > 0 ? Math.max(0, l.limit - u) : null,
          resetsAt: new Date(l.period === 'day' ? nextUtcMidnight(now) : nextUtcMonthStart(now)).toISOString(),
        };
      }),
      relay: {
        perKeyPerMinute: relayLimit,
        remaining: relayLimit > 0 ? this.relayByKey.peek(key.id, relayLimit).remaining : null,
      },
      budget: null,
    };
  }

  /** Writes dirty counters in one transaction (write-behind). Never throws. */
  flush(): void {
    if (this.dirty.size === 0 || !this.db.open) return;
    const now = this.now();
    const day = dayStamp(now);
    const month = monthStamp(now);
    const entries = [...this.dirty.values()];
    this.dirty.clear();
    try {
      const upsert = this.db.prepare(
        `INSERT INTO quota_counters (api_key_id, counter, period, period_start, used, updated_at) VALUES (?, ?, ?, ?, ?, ?)
         ON CONFLICT (api_key_id, counter, period, period_start) DO UPDATE SET used = excluded.used, updated_at = excluded.updated_at`,
      );
      const stamp = new Date(now).toISOString();
      this.db.transaction(() => {
        if (this.prunedFor !== day) this.prune(day, month);
        for (const e of entries) {
          if (!this.keys.get(e.keyId)) continue; // deleted since: its rows went with it
          const used =
            e.counter === REQUESTS
              ? this.requests.used(e.keyId, 'global', UNLIMITED)
              : this.tokens.used(`${e.keyId}|${e.period}`, e.counter.slice(7) as BudgetScope, { limit: 0, period: e.period });
          // 0: the window rolled over since the mark, and the old window's count is no longer needed.
          if (used > 0) upsert.run(e.keyId, e.counter, e.period, e.period === 'day' ? day : month, used, stamp);
        }
      })();
    } catch (err) {
      this.log?.error('quota counters flush failed', { error: err instanceof Error ? err.message : String(err) });
      // Keep them for the next attempt (unless newer marks replaced them meanwhile).
      for (const e of entries) {
        const id = `${e.keyId}\u0000${e.counter}\u0000${e.period}`;
        if (!this.dirty.has(id)) this.dirty.set(id, e);
      }
    }
  }

  /** Stops the timer and flushes (shutdown). */
  close(): void {
    if (this.timer) clearInterval(this.timer);
    this.hot.close();
    this.flush();
  }

  private dailyLimitOf(key: KeyRecord): number {
    const own = key.dailyRequestLimit;
    return own === null || own === undefined ? this.settings.get().defaultDailyRequestLimit : own;
  }

  private dailyBudget(key: KeyRecord): TokenBudget {
    const limit = this.dailyLimitOf(key);
    return limit > 0 ? { limit, period: 'day' } : UNLIMITED;
  }

  private checkTokenLimits(key: KeyRecord, provider: string, model: string): void {
    const limits = key.tokenLimits ?? [];
    if (limits.length === 0) return;
    const providerScope = `provider:${provider}`;
    const modelScope = `model:${canonicalModel(provider, model)}`;
    for (const l of limits) {
      if (l.limit <= 0 || (l.scope !== 'global' && l.scope !== providerScope && l.scope !== modelScope)) continue;
      const r = this.tokens.check(`${key.id}|${l.period}`, l.scope, { limit: l.limit, period: l.period });
      if (!r.allowed) {
        throw tooMany(
          'token_limit',
          `This API key reached its ${l.period === 'day' ? 'daily' : 'monthly'} token limit ${scopeWords(l.scope)} (${l.limit} tokens).`,
          r,
          { scope: l.scope, period: l.period },
        );
      }
    }
  }

  private markDirty(keyId: string, counter: string, period: 'day' | 'month'): void {
    const id = `${keyId}\u0000${counter}\u0000${period}`;
    if (!this.dirty.has(id)) this.dirty.set(id, { keyId, counter, period });
  }

  private announce(e: ThresholdEvent, quota: string, apiKeyId: string, scope: string): void {
    if (this.restoring) return;
    // The shape documented in docs/events.md: the fields of QuotaExceededData plus period and threshold.
    const data = {
      api_key_id: apiKeyId,
      quota,
      scope,
      period: e.period,
      window: e.period,
      limit: e.limit,
      used: e.used,
      threshold: e.threshold,
    };
    this.events.emit('quota.exceeded', data);
  }

  /** Deletes counters of past windows. */
  private prune(day: string, month: string): void {
    this.db
      .prepare(
        "DELETE FROM quota_counters WHERE NOT ((period = 'day' AND period_start = ?) OR (period = 'month' AND period_start = ?))",
      )
      .run(day, month);
    this.prunedFor = day;
  }

  /** Reads back the counters of the current windows (start). */
  private restore(): void {
    const now = this.now();
    const day = dayStamp(now);
    const month = monthStamp(now);
    this.prune(day, month);
    const rows = this.db
      .prepare('SELECT api_key_id, counter, period, used FROM quota_counters')
      .all() as Array<{ api_key_id: string; counter: string; period: 'day' | 'month'; used: number }>;
    this.restoring = true;
    try {
      for (const row of rows) {
        const key = this.keys.get(row.api_key_id);
        if (!key || !(row.used > 0)) continue;
        if (row.counter === REQUESTS) {
          // Seeding through consume also marks thresholds already reached as announced.
          this.requests.consume(key.id, 'global', row.used, this.dailyBudget(key));
        } else if (row.counter.startsWith('tokens:')) {
          const scope = row.counter.slice(7) as BudgetScope;
          const limit = (key.tokenLimits ?? []).find((l) => l.scope === scope && l.period === row.period)?.limit ?? 0;
          this.tokens.consume(`${key.id}|${row.period}`, scope, row.used, {
            limit: limit > 0 ? limit : Number.POSITIVE_INFINITY,
            period: row.period,
          });
        }
      }
    } finally {
      this.restoring = false;
    }
  }
}
