/**
 * quota.exceeded once per threshold per period, model-scope restriction, and counters written behind
 * (batched, flushed on close) surviving a restart.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { canonicalModel } from '../../src/daemon/quotas/index.js';
import { globMatch } from '../../src/shared/glob.js';
import { QuotaService } from '../../src/daemon/quotas/index.js';
import { type Env, T0, keyAuth, makeEnv, refusal, sessionAuth } from './helpers.js';
import type { RouterEvent } from '../../src/daemon/events/types.js';
import { cpuTimeOf } from '../support/timing.js';

const OPENAI = { provider: 'openai', model: 'gpt-4o', relay: false, clientIp: '' };
const MIDNIGHT = Date.UTC(2025, 2, 11);
const APRIL = Date.UTC(2025, 3, 1);

let env: Env;
beforeEach(() => {
  env = makeEnv();
});
afterEach(() => env.close());

const auth = (id: string) => keyAuth(env.keys.get(id)!);
// quota.warning events land here too: their data has period and threshold.
const data = () => env.seen.map((e) => e.data as RouterEvent<'quota.exceeded'>['data'] & { period?: string; threshold?: number });

describe('quota.exceeded', () => {
  it('daily requests: once at 80% and once at 100%, nothing when refused, re-armed the next day', async () => {
    const id = (await env.keys.create('k', ['proxy'], { dailyRequestLimit: 10 })).id;
    for (let i = 1; i <= 7; i++) env.quotas.admit(auth(id), OPENAI);
    expect(env.seen).toEqual([]);
    env.quotas.admit(auth(id), OPENAI); // 8 = 80%
    expect(data()).toEqual([
      { api_key_id: id, quota: 'requests_per_day', scope: 'global', period: 'day', window: 'day', limit: 10, used: 8, threshold: 0.8 },
    ]);
    env.quotas.admit(auth(id), OPENAI);
    expect(env.seen).toHaveLength(1);
    env.quotas.admit(auth(id), OPENAI); // 10 = 100%
    expect(data()[1]).toEqual({ api_key_id: id, quota: 'requests_per_day', scope: 'global', period: 'day', window: 'day', limit: 10, used: 10, threshold: 1 });
    refusal(() => env.quotas.admit(auth(id), OPENAI));
    expect(env.seen).toHaveLength(2);
    expect(env.seen[0]!.event).toBe('quota.exceeded');

    env.clock.now = MIDNIGHT;
    for (let i = 1; i <= 8; i++) env.quotas.admit(auth(id), OPENAI);
    expect(env.seen).toHaveLength(3);
    expect(data()[2]).toMatchObject({ used: 8, threshold: 0.8 });
  });

  it('tokens: each threshold once per scope and period, a jump past both emits both, usage past the limit emits nothing more', async () => {
    const id = (await env.keys.create('k', ['proxy'], {
      tokenLimits: [
        { scope: 'global', period: 'day', limit: 1000 },
        { scope: 'provider:openai', period: 'month', limit: 1000 },
      ],
    })).id;
    const rec = (tokens: number, provider = 'anthropic') => env.quotas.recordTokens(auth(id), { provider, model: 'm', tokens });
    rec(500);
    rec(299);
    expect(env.seen).toEqual([]);
    rec(1); // 800
    expect(data()).toEqual([
      { api_key_id: id, quota: 'tokens', scope: 'global', period: 'day', window: 'day', limit: 1000, used: 800, threshold: 0.8 },
    ]);
    rec(150);
    rec(50); // 1000
    expect(data()[1]).toMatchObject({ scope: 'global', period: 'day', used: 1000, threshold: 1 });
    rec(500);
    expect(env.seen).toHaveLength(2);

    rec(1200, 'openai'); // month scope: 0 -> 1200 crosses both thresholds at once; global day is past both already
    expect(data().slice(2)).toEqual([
      { api_key_id: id, quota: 'tokens', scope: 'provider:openai', period: 'month', window: 'month', limit: 1000, used: 1200, threshold: 0.8 },
      { api_key_id: id, quota: 'tokens', scope: 'provider:openai', period: 'month', window: 'month', limit: 1000, used: 1200, threshold: 1 },
    ]);
    env.clock.now = MIDNIGHT; // day re-arms, month does not
    rec(900, 'openai');
    expect(data().slice(4)).toEqual([expect.objectContaining({ scope: 'global', period: 'day', used: 900, threshold: 0.8 })]);
    env.clock.now = APRIL;
    rec(800, 'openai');
    expect(data().slice(5).map((d) => [d.scope, d.period, d.threshold])).toEqual([
      ['global', 'day', 0.8],
      ['provider:openai', 'month', 0.8],
    ]);
  });

  it('a restart does not announce a threshold reached before it', async () => {
    const id = (await env.keys.create('k', ['proxy'], { dailyRequestLimit: 5, tokenLimits: [{ scope: 'global', period: 'month', limit: 100 }] })).id;
    for (let i = 0; i < 4; i++) env.quotas.admit(auth(id), OPENAI); // 80%
    env.quotas.recordTokens(auth(id), { ...OPENAI, tokens: 85 }); // 80%
    expect(data().map((d) => [d.quota, d.threshold])).toEqual([
      ['requests_per_day', 0.8],
      ['tokens', 0.8],
    ]);
    env.restart();
    env.quotas.admit(auth(id), OPENAI);
    env.quotas.recordTokens(auth(id), { ...OPENAI, tokens: 10 });
    expect(data().slice(2)).toEqual([expect.objectContaining({ quota: 'requests_per_day', used: 5, threshold: 1 })]);
    env.quotas.recordTokens(auth(id), { ...OPENAI, tokens: 5 });
    expect(data().slice(3)).toEqual([expect.objectContaining({ quota: 'tokens', used: 100, threshold: 1 })]);
  });
});

describe('model scopes', () => {
  it('a key with model:<glob> scopes may use only matching models (403 model_not_allowed)', async () => {
    const id = (await env.keys.create('k', ['proxy', 'model:openai/*', 'model:anthropic/claude-3-5-*'])).id;
    env.quotas.allowedModel(auth(id), 'openai/gpt-4o');
    env.quotas.allowedModel(auth(id), 'openai/ft:gpt-4o:org/x');
    env.quotas.allowedModel(auth(id), 'anthropic/claude-3-5-sonnet-latest');
    for (const model of ['anthropic/claude-3-opus', 'gemini/gemini-2.0-flash', 'openai', 'my-combo']) {
      const err = refusal(() => env.quotas.allowedModel(auth(id), model));
      expect(err.status).toBe(403);
      expect(err.code).toBe('model_not_allowed');
      expect(err.type).toBe('permission_error');
    }
  });

  it('keys without model scopes, and keyless callers, may use any model; model:* allows all', async () => {
    const plain = (await env.keys.create('k', ['proxy'])).id;
    const all = (await env.keys.create('k', ['proxy', 'model:*'])).id;
    for (const m of ['openai/gpt-4o', 'combo', 'a/b/c']) {
      env.quotas.allowedModel(auth(plain), m);
      env.quotas.allowedModel(auth(all), m);
      env.quotas.allowedModel(sessionAuth(), m);
    }
  });

  it('globMatch: `*` matches any run (including / and nothing), everything else literally', async () => {
    const table: Array<[string, string, boolean]> = [
      ['openai/*', 'openai/gpt-4o', true],
      ['openai/*', 'openai/', true],
      ['openai/*', 'openrouter/x', false],
      ['*/gpt-4o', 'openrouter/openai/gpt-4o', true],
      ['*gpt*', 'openai/gpt-4o-mini', true],
      ['openai/gpt-4o', 'openai/gpt-4o-mini', false],
      ['openai/gpt-4o', 'openai/gpt-4o', true],
      ['openai/gpt-4.o', 'openai/gpt-4xo', false], // `.` is literal
      ['a*b*c', 'abc', true],
      ['a*b*c', 'acb', false],
      ['', '', true],
      ['*', '', true],
    ];
    for (const [p, v, want] of table) expect(globMatch(p, v), `${p} ~ ${v}`).toBe(want);
    // No catastrophic backtracking on adversarial patterns.
    const ms = await cpuTimeOf(() => expect(globMatch('*a'.repeat(100) + 'b', 'a'.repeat(512))).toBe(false));
    expect(ms).toBeLessThan(200);
  });

  it('canonicalModel prefixes the provider once', () => {
    expect(canonicalModel('openai', 'gpt-4o')).toBe('openai/gpt-4o');
    expect(canonicalModel('openai', 'openai/gpt-4o')).toBe('openai/gpt-4o');
    expect(canonicalModel('openrouter', 'anthropic/claude')).toBe('openrouter/anthropic/claude');
  });
});

describe('write-behind persistence', () => {
  const rows = () => env.db.prepare('SELECT api_key_id, counter, period, period_start, used FROM quota_counters ORDER BY counter, period').all();

  it('no database write per request: counters reach the table on flush only', async () => {
    const id = (await env.keys.create('k', ['proxy'], { tokenLimits: [{ scope: 'model:openai/gpt-4o', period: 'month', limit: 1000 }] })).id;
    for (let i = 0; i < 25; i++) env.quotas.admit(auth(id), OPENAI);
    env.quotas.recordTokens(auth(id), { ...OPENAI, tokens: 42 });
    expect(rows()).toEqual([]);
    env.quotas.flush();
    expect(rows()).toEqual([
      { api_key_id: id, counter: 'requests', period: 'day', period_start: '2025-03-10', used: 25 },
      { api_key_id: id, counter: 'tokens:model:openai/gpt-4o', period: 'month', period_start: '2025-03', used: 42 },
    ]);
    env.quotas.admit(auth(id), OPENAI);
    env.quotas.flush();
    expect(rows()).toHaveLength(2);
    expect((rows()[0] as { used: number }).used).toBe(26);
  });

  it('daily request counts and token usage survive a restart (flushed on close, read back at start)', async () => {
    const id = (await env.keys.create('k', ['proxy'], {
      dailyRequestLimit: 5,
      tokenLimits: [
        { scope: 'global', period: 'day', limit: 1000 },
        { scope: 'provider:openai', period: 'month', limit: 5000 },
      ],
    })).id;
    for (let i = 0; i < 3; i++) env.quotas.admit(auth(id), OPENAI);
    env.quotas.recordTokens(auth(id), { ...OPENAI, tokens: 700 });
    env.restart();
    const snap = env.quotas.snapshot(id)!;
    expect(snap.requests).toMatchObject({ used: 3, limit: 5, remaining: 2 });
    expect(snap.tokens.map((t) => [t.scope, t.period, t.used, t.remaining])).toEqual([
      ['global', 'day', 700, 300],
      ['provider:openai', 'month', 700, 4300],
    ]);
    env.quotas.admit(auth(id), OPENAI);
    env.quotas.admit(auth(id), OPENAI);
    expect(refusal(() => env.quotas.admit(auth(id), OPENAI)).code).toBe('daily_request_limit');

    // After midnight the day counters start over (and old windows are pruned); the month counter stays.
    env.clock.now = MIDNIGHT + 1000;
    env.restart();
    expect(env.quotas.snapshot(id)!.requests.used).toBe(0);
    expect(env.quotas.snapshot(id)!.tokens.map((t) => t.used)).toEqual([0, 700]);
    expect(rows()).toEqual([expect.objectContaining({ counter: 'tokens:provider:openai', period_start: '2025-03', used: 700 })]);
  });

  it('counters of a deleted key are dropped, not written', async () => {
    const id = (await env.keys.create('k', ['proxy'], { dailyRequestLimit: 5 })).id;
    env.quotas.admit(auth(id), OPENAI);
    env.quotas.flush();
    env.quotas.admit(auth(id), OPENAI);
    await env.keys.remove(id);
    env.quotas.flush();
    expect(rows()).toEqual([]);
  });

  it('flushes on its own timer', async () => {
    const id = (await env.keys.create('k', ['proxy'])).id;
    const q = new QuotaService({ db: env.db, settings: env.settings, keys: env.keys, events: env.events, now: () => T0, flushIntervalMs: 10 });
    try {
      q.admit(auth(id), OPENAI);
      await new Promise((r) => setTimeout(r, 60));
      expect(rows()).toEqual([expect.objectContaining({ api_key_id: id, counter: 'requests', used: 1 })]);
    } finally {
      q.close();
    }
  });
});
