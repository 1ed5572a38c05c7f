/**
 * The limits of API keys on the hot-state port (hot/port.ts): everything QuotaService does in a cluster,
 * and USD budgets everywhere.
 *
 * - Cluster (Redis): `admitShared` turns a request's limits into one check-and-add over counters (relay
 *   per-minute per client address and per key, the daily request limit, token limits, the budget
 *   reservation): one Lua script, one round trip. Threshold events come from the values the script saw,
 *   so exactly one node announces each crossing.
 * - Redis unreachable: the same checks run on this node's own counters with each limit cut to this node's
 *   share (what was left when Redis was last seen, divided by the live nodes); what was counted meanwhile is
 *   added to Redis when it is back.
 * - One machine: QuotaService keeps its own counters for the older limits; only budgets come here
 *   (`reserveLocal`), on the in-process adapter, synchronously.
 */
import type { AuthInfo } from '../auth/pipeline.js';
import type { EventBus } from '../events/bus.js';
import { RouterError } from '../http/errors.js';
import { LocalHotState } from '../hot/local.js';
import type { CounterOp, CounterOutcome, HotState, HotWindow } from '../hot/port.js';
import { periodStamp } from '../hot/port.js';
import type { KeyRecord, UsdBudget } from '../keys/store.js';
import type { Logger } from '../logger.js';
import type { SettingsStore } from '../settings/store.js';
import type { Price } from '../usage/pricing.js';
import type { WireFormat } from '../translate/ir.js';
import { budgetCounter, budgetWindow, estimateNano, NANO_PER_USD, type Reservation, toNano } from './budget.js';

/** What admission needs of the request beyond QuotaService's AdmitRequest (for the budget estimate). */
export interface BudgetCall {
  traceId: string;
  call: { clientFormat: WireFormat; raw: Record<string, unknown>; model: string };
}

export interface HotAdmitRequest {
  provider: string;
  model: string;
  relay: boolean;
  clientIp: string;
  budget?: BudgetCall;
}

/** A usage row as the reconciliation reads it. */
export interface SettledRow {
  traceId: string;
  status: number;
  costUsd: number | null;
}

export interface HotQuotaDeps {
  hot: HotState;
  settings: SettingsStore;
  events: EventBus;
  log?: Logger;
  /** The key's effective daily request limit (0: none). */
  dailyLimitOf(key: KeyRecord): number;
  /** Emits `quota.exceeded` (docs/events.md). */
  announce(data: { apiKeyId: string; quota: string; scope: string; period: string; limit: number; used: number; threshold: number }): void;
  thresholds: readonly number[];
  price?(provider: string, model: string): Price | undefined;
  maxOutput?(provider: string, model: string): number | undefined;
  /** Subscribes to committed usage rows (reservations are reconciled from them). */
  onRecord?(fn: (row: SettledRow) => void): void;
}

type Code = 'daily_request_limit' | 'token_limit' | 'relay_rate_limit_key' | 'relay_rate_limit_ip' | 'budget_exceeded';

interface Check {
  code: Code;
  op: CounterOp;
  message: string;
  extra?: Record<string, unknown>;
  /** Counters whose crossings are announced: the quota name, key and scope. */
  announce?: { quota: string; keyId: string; scope: string; period: string };
}

const MINUTE: HotWindow = { kind: 'sliding', windowMs: 60_000 };
const DAY: HotWindow = { kind: 'period', period: 'day' };

/** Canonical `<provider>/<model>` (no doubled prefix). */
function canonical(provider: string, model: string): string {
  return model.startsWith(`${provider}/`) ? model : `${provider}/${model}`;
}

function scopeWords(scope: string): string {
  if (scope === 'global') return 'across all models';
  if (scope.startsWith('provider:')) return 'for this provider';
  return 'for this model';
}

function usd(nano: number): number {
  return Math.round((nano / NANO_PER_USD) * 1e6) / 1e6;
}

export class HotQuotas {
  /** Budgets on one machine, and every limit while Redis is unreachable. */
  private local: LocalHotState;
  private readonly pending = new Map<string, Reservation>();
  /** Last value Redis reported per counter (with its period), for the per-node share during an outage. */
  private readonly lastSeen = new Map<string, { stamp: string; used: number }>();
  /** Amounts counted on this node while Redis was unreachable, added to Redis when it is back. */
  private readonly outage = new Map<string, { window: HotWindow; amount: number }>();
  private subscribed = false;
  private sweeper?: NodeJS.Timeout;

  constructor(private readonly d: HotQuotaDeps) {
    this.local = d.hot instanceof LocalHotState ? d.hot : new LocalHotState(`${d.hot.nodeId}-fallback`);
    if (d.hot.shared) d.hot.onHealth((h) => h.healthy && void this.recover());
  }

  /** Reserves a key's budget on one machine; throws the 429 when it does not fit. */
  reserveLocal(key: KeyRecord, req: HotAdmitRequest): void {
    const check = this.budgetCheck(key, req);
    if (!check) return;
    const outcome = this.local.countersSync([check.op]);
    if (!outcome.allowed) this.refuse(check, outcome);
    this.track(key, check, req.budget!.traceId, false);
  }

  /** Cluster admission: one round trip, or this node's share when Redis is unreachable. */
  async admitShared(auth: AuthInfo, req: HotAdmitRequest): Promise<void> {
    const checks = this.checksFor(auth, req);
    if (checks.length === 0) return;
    const ops = checks.map((c) => c.op);
    let outcome: CounterOutcome | undefined;
    if (this.d.hot.health().healthy) {
      try {
        outcome = await this.d.hot.counters(ops);
      } catch {
        outcome = undefined;
      }
    }
    const fallback = outcome === undefined;
    if (!outcome) outcome = this.local.countersSync(ops.map((op) => this.share(op)));
    else this.remember(ops, outcome);
    if (!outcome.allowed) this.refuse(checks[outcome.refused]!, outcome);
    checks.forEach((c, i) => {
      if (c.announce && c.op.add > 0) this.crossings(c, outcome.before[i]!, outcome.before[i]! + c.op.add);
      if (fallback && c.op.add > 0 && c.op.window.kind === 'period') this.noteOutage(c.op.key, c.op.window, c.op.add);
    });
    const budget = checks.find((c) => c.code === 'budget_exceeded');
    if (budget && auth.key) this.track(auth.key, budget, req.budget!.traceId, fallback);
  }

  /** Adds the tokens a reply used to the key's token counters in Redis (one round trip, after the reply). */
  recordTokensShared(key: KeyRecord, provider: string, model: string, tokens: number): void {
    const checks: Check[] = [];
    const providerScope = `provider:${provider}`;
    const modelScope = `model:${canonical(provider, model)}`;
    for (const l of key.tokenLimits ?? []) {
      if (l.limit <= 0 || (l.scope !== 'global' && l.scope !== providerScope && l.scope !== modelScope)) continue;
      const window: HotWindow = { kind: 'period', period: l.period };
      checks.push({
        code: 'token_limit',
        op: { key: `tokens:${key.id}|${l.period}|${l.scope}`, window, limit: -1, add: tokens },
        message: '',
        extra: { limitValue: l.limit },
        announce: { quota: 'tokens', keyId: key.id, scope: l.scope, period: l.period },
      });
    }
    if (checks.length === 0) return;
    const ops = checks.map((c) => c.op);
    const onLocal = () => {
      this.local.countersSync(ops);
      for (const op of ops) this.noteOutage(op.key, op.window, op.add);
    };
    if (!this.d.hot.health().healthy) return onLocal();
    this.d.hot.counters(ops).then(
      (o) => checks.forEach((c, i) => this.crossings(c, o.before[i]!, o.before[i]! + tokens, c.extra!.limitValue as number)),
      onLocal,
    );
  }

  /** Current values of counters (the snapshot route in a cluster). */
  read(items: ReadonlyArray<{ key: string; window: HotWindow }>): Promise<number[]> {
    if (!this.d.hot.shared) return Promise.resolve(items.map((i) => this.local.readSync(i.key, i.window)));
    return this.d.hot.read(items).catch(() => items.map((i) => this.local.readSync(i.key, i.window)));
  }

  /** A counter on this node's own (one machine: the only) counters. */
  readLocal(key: string, window: HotWindow): number {
    return this.local.readSync(key, window);
  }

  /** A usage row was committed: a served call settles its reservation at its real cost. */
  settleRow(row: SettledRow): void {
    const r = this.pending.get(row.traceId);
    if (!r) return;
    const cost = row.costUsd !== null && row.costUsd > 0 && Number.isFinite(row.costUsd) ? toNano(row.costUsd) : 0;
    r.spent += cost;
    if (row.status < 400) this.release(row.traceId);
  }

  /** The request ended without a served reply (refused, every target failed): the reservation goes back. */
  release(traceId: string): void {
    const r = this.pending.get(traceId);
    if (!r) return;
    this.pending.delete(traceId);
    const delta = r.spent - r.reserved;
    if (delta !== 0) this.adjust(r, delta);
  }

  /** Reservations waiting (tests, metrics). */
  get inFlight(): number {
    return this.pending.size;
  }

  close(): void {
    if (this.sweeper) clearInterval(this.sweeper);
  }

  private checksFor(auth: AuthInfo, req: HotAdmitRequest): Check[] {
    const s = this.d.settings.get();
    const key = auth.key;
    const checks: Check[] = [];
    const ipLimit = req.relay ? s.relayRequestsPerMinutePerIp : 0;
    const keyLimit = req.relay && key ? s.relayRequestsPerMinutePerKey : 0;
    if (ipLimit > 0) {
      const ip = req.clientIp || auth.remoteAddress;
      checks.push({ code: 'relay_rate_limit_ip', op: { key: `relay-ip:${ip}`, window: MINUTE, limit: ipLimit, add: 1 }, message: `Relay rate limit reached for this client address (${ipLimit} requests per minute).` });
    }
    if (!key) return checks;
    if (keyLimit > 0) {
      checks.push({ code: 'relay_rate_limit_key', op: { key: `relay-key:${key.id}`, window: MINUTE, limit: keyLimit, add: 1 }, message: `Relay rate limit reached for this API key (${keyLimit} requests per minute).` });
    }
    const daily = this.d.dailyLimitOf(key);
    if (daily > 0) {
      checks.push({
        code: 'daily_request_limit',
        op: { key: `requests:${key.id}`, window: DAY, limit: daily, add: 1 },
        message: `This API key reached its daily request limit (${daily} requests per UTC day); it resets at 00:00 UTC.`,
        announce: { quota: 'requests_per_day', keyId: key.id, scope: 'global', period: 'day' },
      });
    }
    const providerScope = `provider:${req.provider}`;
    const modelScope = `model:${canonical(req.provider, req.model)}`;
    for (const l of key.tokenLimits ?? []) {
      if (l.limit <= 0 || (l.scope !== 'global' && l.scope !== providerScope && l.scope !== modelScope)) continue;
      checks.push({
        code: 'token_limit',
        op: { key: `tokens:${key.id}|${l.period}|${l.scope}`, window: { kind: 'period', period: l.period }, limit: l.limit, add: 0 },
        message: `This API key reached its ${l.period === 'day' ? 'daily' : 'monthly'} token limit ${scopeWords(l.scope)} (${l.limit} tokens).`,
        extra: { scope: l.scope, period: l.period },
      });
    }
    const budget = this.budgetCheck(key, req);
    if (budget) checks.push(budget);
    return checks;
  }

  private budgetCheck(key: KeyRecord, req: HotAdmitRequest): Check | undefined {
    const b: UsdBudget | null | undefined = key.budget;
    if (!b || !req.budget) return undefined;
    const estimate = estimateNano(this.d.price?.(req.provider, req.model), req.budget.call, this.d.maxOutput?.(req.provider, req.model));
    return {
      code: 'budget_exceeded',
      op: { key: budgetCounter(key.id), window: budgetWindow(b), limit: toNano(b.usd), add: estimate },
      message: `This API key reached its ${b.period === 'day' ? 'daily' : 'monthly'} budget ($${b.usd}); this request's reservation (up to $${usd(estimate)}) does not fit.`,
      extra: { period: b.period, budget_usd: b.usd, reserve_usd: usd(estimate) },
    };
  }

  private track(key: KeyRecord, check: Check, traceId: string, fallback: boolean): void {
    if (!this.subscribed && this.d.onRecord) {
      this.subscribed = true;
      this.d.onRecord((row) => this.settleRow(row));
    }
    this.pending.set(traceId, { keyId: key.id, budget: key.budget!, reserved: check.op.add, spent: 0, at: Date.now(), fallback });
    this.sweeper ??= setInterval(() => this.sweep(), 30_000);
    this.sweeper.unref();
  }

  /** Releases reservations whose call outlived any deadline (a stream that never reported its end). */
  private sweep(): void {
    const limit = Date.now() - this.d.settings.get().requestDeadlineMs - 60_000;
    for (const [traceId, r] of this.pending) if (r.at < limit) this.release(traceId);
  }

  private adjust(r: Reservation, delta: number): void {
    const key = budgetCounter(r.keyId);
    const window = budgetWindow(r.budget);
    const before = () => this.local.readSync(key, window);
    if (!this.d.hot.shared) {
      const after = this.local.addSync(key, window, delta);
      this.budgetCrossing(r, after - delta, after);
      return;
    }
    const onLocal = () => {
      const b = before();
      this.local.addSync(key, window, delta);
      this.noteOutage(key, window, delta);
      this.budgetCrossing(r, b, b + delta);
    };
    if (!this.d.hot.health().healthy) return onLocal();
    this.d.hot.add(key, window, delta).then((after) => this.budgetCrossing(r, after - delta, after), onLocal);
  }

  /** 80% of a budget reached by real spending: announced by the node whose reconciliation crossed it. */
  private budgetCrossing(r: Reservation, before: number, after: number): void {
    const limit = toNano(r.budget.usd);
    for (const t of this.d.thresholds) {
      if (t >= 1) continue;
      if (before < t * limit && after >= t * limit) {
        this.d.announce({ apiKeyId: r.keyId, quota: 'budget_usd', scope: 'global', period: r.budget.period, limit: r.budget.usd, used: usd(after), threshold: t });
      }
    }
  }

  private refuse(check: Check, outcome: CounterOutcome): never {
    const retryAfter = Math.max(1, Math.ceil(outcome.retryAfterMs / 1000));
    if (check.code === 'budget_exceeded') {
      const b = check.extra as { period: string; budget_usd: number };
      const used = outcome.before[outcome.refused] ?? 0;
      const stamp = periodStamp(b.period as 'day' | 'month', Date.now());
      const flag = `budget-announced:${check.op.key}:${stamp}`;
      const once = this.d.hot.shared && this.d.hot.health().healthy ? this.d.hot.setOnce(flag, 32 * 86_400_000) : this.local.setOnce(flag, 32 * 86_400_000);
      once
        .then((first) => {
          if (first) this.d.announce({ apiKeyId: check.op.key.slice(7), quota: 'budget_usd', scope: 'global', period: b.period, limit: b.budget_usd, used: usd(used), threshold: 1 });
        })
        .catch(() => undefined);
    }
    throw new RouterError(429, check.message, {
      code: check.code,
      type: 'rate_limit_error',
      extra: { limit: check.code === 'budget_exceeded' ? (check.extra as { budget_usd: number }).budget_usd : check.op.limit, retry_after: retryAfter, ...(check.code === 'budget_exceeded' ? {} : check.extra) },
      headers: { 'Retry-After': String(retryAfter) },
    });
  }

  /** Announces thresholds crossed by this node's add (before < t x limit <= after). */
  private crossings(c: Check, before: number, after: number, limit = c.op.limit): void {
    const a = c.announce;
    if (!a || limit <= 0) return;
    for (const t of this.d.thresholds) {
      if (before < t * limit && after >= t * limit) this.d.announce({ apiKeyId: a.keyId, quota: a.quota, scope: a.scope, period: a.period, limit, used: after, threshold: t });
    }
  }

  /** This node's share of a limit while Redis is unreachable: what was left, split across the live nodes. */
  private share(op: CounterOp): CounterOp {
    if (op.limit < 0) return op;
    const nodes = Math.max(1, this.d.hot.health().liveNodes);
    if (op.window.kind === 'sliding') return { ...op, limit: Math.max(1, Math.floor(op.limit / nodes)) };
    const seen = this.lastSeen.get(op.key);
    const used = seen && seen.stamp === periodStamp(op.window.period, Date.now()) ? seen.used : 0;
    return { ...op, limit: Math.floor(Math.max(0, op.limit - used) / nodes) };
  }

  private remember(ops: readonly CounterOp[], outcome: CounterOutcome): void {
    const now = Date.now();
    ops.forEach((op, i) => {
      if (op.window.kind !== 'period') return;
      const added = outcome.allowed ? op.add : 0;
      this.lastSeen.set(op.key, { stamp: periodStamp(op.window.period, now), used: outcome.before[i]! + added });
    });
    if (this.lastSeen.size > 50_000) this.lastSeen.clear();
  }

  private noteOutage(key: string, window: HotWindow, amount: number): void {
    const e = this.outage.get(key);
    if (e) e.amount += amount;
    else this.outage.set(key, { window, amount });
  }

  /** Redis is back: what this node counted meanwhile is added there, and its own counters start over. */
  private async recover(): Promise<void> {
    const entries = [...this.outage.entries()].filter(([, e]) => e.amount !== 0);
    this.outage.clear();
    this.local = new LocalHotState(`${this.d.hot.nodeId}-fallback`);
    if (entries.length === 0) return;
    try {
      await this.d.hot.counters(entries.map(([key, e]) => ({ key, window: e.window, limit: -1, add: e.amount })));
      this.d.log?.info('redis back: counts taken during the outage were added', { counters: entries.length });
    } catch {
      for (const [key, e] of entries) this.noteOutage(key, e.window, e.amount);
    }
  }
}
