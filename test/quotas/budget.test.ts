/**
 * USD budgets per key on one machine (the in-process hot-state adapter): estimate-then-reconcile at the
 * edges. A reservation is taken at admission, refused with 429 budget_exceeded when it does not fit, and
 * reconciled to the real cost by the call's usage row; a request that served nothing gives it back.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { EventBus } from '../../src/daemon/events/bus.js';
import type { RouterEvent } from '../../src/daemon/events/types.js';
import { toErrorReply } from '../../src/daemon/http/errors.js';
import { KeyStore } from '../../src/daemon/keys/store.js';
import { loadKeysSync, SqlKeyRepository } from '../../src/daemon/keys/sql-repository.js';
import { SqliteDriver } from '../../src/daemon/store/sqlite-driver.js';
import { estimateNano, NANO_PER_USD } from '../../src/daemon/quotas/budget.js';
import type { SettledRow } from '../../src/daemon/quotas/hot-quotas.js';
import { QuotaService } from '../../src/daemon/quotas/index.js';
import { loadSettingsSync, SqlSettingsRepository } from '../../src/daemon/settings/sql-repository.js';
import '../../src/daemon/settings-sections.js';
import { SettingsStore } from '../../src/daemon/settings/store.js';
import { closeDatabase, openDatabase, type Db } from '../../src/daemon/store/db.js';
import { migrate } from '../../src/daemon/store/migrate.js';
import { computeCost } from '../../src/daemon/usage/pricing.js';
import { T0, keyAuth, refusal } from './helpers.js';

const PRICE = { input: 2.5, output: 10 }; // USD per million tokens
const CALL = { clientFormat: 'openai-chat' as const, raw: { model: 'gpt-4o', max_tokens: 100, messages: [{ role: 'user', content: 'hello there' }] }, model: 'gpt-4o' };
const RESERVE = estimateNano(PRICE, CALL, undefined) / NANO_PER_USD;

let dir: string;
let db: Db;
let keys: KeyStore;
let quotas: QuotaService;
let rows: Array<(row: SettledRow) => void>;
let seen: RouterEvent<'quota.exceeded'>[];
const clock = { now: T0 };

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'router-budget-'));
  db = openDatabase(join(dir, 'router.db'));
  migrate(db);
  const storage = new SqliteDriver(db);
  keys = new KeyStore(new SqlKeyRepository(storage), loadKeysSync(storage));
  const events = new EventBus();
  seen = [];
  rows = [];
  events.on('quota.exceeded', (e) => void seen.push(e));
  quotas = new QuotaService({
    db,
    settings: new SettingsStore(new SqlSettingsRepository(storage), loadSettingsSync(storage)),
    keys,
    events,
    now: () => clock.now,
    flushIntervalMs: 0,
    price: (provider, model) => (provider === 'openai' && model === 'gpt-4o' ? PRICE : undefined),
    onRecord: (fn) => void rows.push(fn),
  });
});
afterEach(() => {
  quotas.close();
  closeDatabase(db);
  rmSync(dir, { recursive: true, force: true });
});

let traces = 0;
function admit(keyId: string, model = 'gpt-4o') {
  const traceId = `t${++traces}`;
  quotas.admit(keyAuth(keys.get(keyId)!), { provider: 'openai', model, relay: false, clientIp: '', budget: { traceId, call: { ...CALL, model } } });
  return traceId;
}
const settle = (traceId: string, costUsd: number | null, status = 200) => {
  for (const fn of rows) fn({ traceId, status, costUsd });
};
/** quota.exceeded data as QuotaService sends it: the documented fields plus period and threshold. */
const events = () => seen.map((e) => e.data as RouterEvent<'quota.exceeded'>['data'] & { period: string; threshold: number });
const used = (keyId: string) => quotas.snapshot(keyId)!.budget!.usedUsd;

describe('USD budget per key (one machine)', () => {
  it('the estimate is above the real cost of a call (prompt at 2 chars per token, full output cap)', async () => {
    // The mock upstream counts ceil(body bytes / 4) input tokens; the cap bounds the output.
    const inputTokens = Math.ceil(JSON.stringify(CALL.raw).length / 4);
    const worst = computeCost(PRICE, { inputTokens: inputTokens * 2, outputTokens: 100 });
    expect(RESERVE).toBeGreaterThan(computeCost(PRICE, { inputTokens, outputTokens: 100 }));
    expect(RESERVE).toBeLessThan(worst * 2);
    expect(estimateNano(undefined, CALL, undefined)).toBe(0); // unpriced: nothing to count
  });

  it('reserves at admission, refuses what does not fit with 429 budget_exceeded, and reconciles to the real cost', async () => {
    const id = (await keys.create('k', ['proxy'], { budget: { period: 'day', usd: RESERVE * 2.5 } })).id;
    const t1 = admit(id);
    const t2 = admit(id);
    expect(used(id)).toBeCloseTo(RESERVE * 2, 5);
    // Two reservations in flight: a third does not fit (2.5 x one reservation).
    const err = refusal(() => admit(id));
    expect(err.status).toBe(429);
    expect(toErrorReply(err).body.error).toMatchObject({ type: 'rate_limit_error', code: 'budget_exceeded', limit: RESERVE * 2.5 });
    expect(err.headers!['Retry-After']).toBe(String((Date.UTC(2025, 2, 11) - T0) / 1000));
    // The calls cost less than reserved: reconciliation gives the difference back.
    settle(t1, RESERVE / 4);
    settle(t2, RESERVE / 4);
    expect(used(id)).toBeCloseTo(RESERVE / 2, 5);
    expect(quotas.hot.inFlight).toBe(0);
    admit(id);
    admit(id);
    expect(() => admit(id)).toThrow(/budget/);
  });

  it('a failed attempt does not settle; the request end gives the reservation back (minus what failures cost)', async () => {
    const id = (await keys.create('k', ['proxy'], { budget: { period: 'month', usd: 1 } })).id;
    const t = admit(id);
    settle(t, 0, 502);
    expect(used(id)).toBeCloseTo(RESERVE, 5);
    quotas.release(t);
    expect(used(id)).toBe(0);
    quotas.release(t); // twice is harmless
    expect(used(id)).toBe(0);
  });

  it('announces quota.exceeded budget_usd once per period on refusal, and at 80% of real spending', async () => {
    const id = (await keys.create('k', ['proxy'], { budget: { period: 'day', usd: RESERVE * 1.5 } })).id;
    const t = admit(id);
    settle(t, RESERVE * 1.25); // 83% spent: crosses 80%
    expect(events().map((e) => [e.quota, e.threshold])).toEqual([['budget_usd', 0.8]]);
    expect(() => admit(id)).toThrow(/budget/);
    expect(() => admit(id)).toThrow(/budget/);
    await new Promise((r) => setTimeout(r, 10));
    expect(events().map((e) => [e.quota, e.threshold])).toEqual([['budget_usd', 0.8], ['budget_usd', 1]]);
    expect(events()[1]).toMatchObject({ api_key_id: id, period: 'day', limit: RESERVE * 1.5 });
  });

  it('a key without a budget reserves nothing; other limits refusing first take no reservation', async () => {
    const free = (await keys.create('free')).id;
    admit(free);
    expect(quotas.hot.inFlight).toBe(0);
    const both = (await keys.create('both', ['proxy'], { dailyRequestLimit: 1, budget: { period: 'day', usd: 1 } })).id;
    admit(both);
    expect(refusal(() => admit(both)).code).toBe('daily_request_limit');
    expect(used(both)).toBeCloseTo(RESERVE, 5);
  });

  it('the budget period rolls over at UTC midnight', async () => {
    const id = (await keys.create('k', ['proxy'], { budget: { period: 'day', usd: RESERVE * 1.5 } })).id;
    admit(id);
    expect(() => admit(id)).toThrow(/budget/);
    clock.now = Date.UTC(2025, 2, 11, 0, 0, 1);
    admit(id);
    clock.now = T0;
  });
});
