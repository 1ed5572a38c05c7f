/**
 * Several accounts (connections) of one provider, end to end: the account strategies, failover between
 * accounts, cooldowns from upstream retry hints (429 "all accounts unavailable" with retry text, then
 * 429 `model_cooldown` without any upstream call), a success clearing a cooldown, and the cooldown routes.
 * The mock tells the accounts apart by the API key each request carries.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Behavior, MockRequest } from '../mocks/upstream.js';
import { chat, clearResilience, content, script, settings, setup, sleep, type Env } from './helpers.js';

let env: Env;
let conn1: string;
let conn2: string;

beforeAll(async () => {
  env = await setup({ providers: [] });
  conn1 = (await env.router.addConnection({ provider: 'openai', name: 'one', apiKey: 'sk-one', priority: 1, providerSpecificData: { baseUrl: env.mock.openaiBase } })).id;
  conn2 = (await env.router.addConnection({ provider: 'openai', name: 'two', apiKey: 'sk-two', priority: 2, providerSpecificData: { baseUrl: env.mock.openaiBase } })).id;
});
afterAll(async () => {
  await env?.stop();
});
beforeEach(() => script(env.mock));
afterEach(async () => {
  env.mock.reset();
  await clearResilience(env);
  await settings(env, { accountStrategy: 'fill-first' });
});

const account = (req: MockRequest) => (req.headers.authorization === 'Bearer sk-one' ? 'one' : 'two');
/** Which account each chat request of `model` reached, in order. */
const accounts = (model: string) => env.mock.requests.filter((r) => r.endpoint === 'openai.chat' && r.model === model).map(account);
/** Behavior per account for one model. */
const perAccount = (one: Behavior | undefined, two: Behavior | undefined) => (req: MockRequest) => (account(req) === 'one' ? one : two);

async function cooldowns(): Promise<any[]> {
  return (await env.router.manage('GET', '/api/resilience/model-cooldowns')).json.cooldowns;
}

describe('account strategies', () => {
  it('least-used: the account with fewer served requests goes first', async () => {
    await settings(env, { accountStrategy: 'least-used' });
    for (let i = 0; i < 6; i++) expect((await chat(env, 'openai/l')).status).toBe(200);
    // Both accounts start at 0 served (this test runs first): ties go by priority, then they alternate.
    expect(accounts('l')).toEqual(['one', 'two', 'one', 'two', 'one', 'two']);
  });

  it('least-used under a burst: 20 requests planned before any reply split evenly', async () => {
    await settings(env, { accountStrategy: 'least-used' });
    script(env.mock, { lb: { type: 'delay', ms: 1500 } });
    const rs = await Promise.all(Array.from({ length: 20 }, () => chat(env, 'openai/lb')));
    expect(rs.map((r) => r.status)).toEqual(Array(20).fill(200));
    const seen = accounts('lb');
    expect(seen.filter((a) => a === 'one')).toHaveLength(10);
    expect(seen.filter((a) => a === 'two')).toHaveLength(10);
  });

  it('fill-first: the highest-priority account takes every request', async () => {
    for (let i = 0; i < 4; i++) expect((await chat(env, 'openai/f')).status).toBe(200);
    expect(accounts('f')).toEqual(['one', 'one', 'one', 'one']);
  });

  it('round-robin: accounts alternate', async () => {
    await settings(env, { accountStrategy: 'round-robin' });
    for (let i = 0; i < 6; i++) expect((await chat(env, 'openai/r')).status).toBe(200);
    const seen = accounts('r');
    expect(seen.filter((a) => a === 'one')).toHaveLength(3);
    for (let i = 1; i < seen.length; i++) expect(seen[i]).not.toBe(seen[i - 1]);
  });
});

describe('session affinity', () => {
  it('X-Router-Session keeps a session on the account that served it; it moves when that account cools', async () => {
    await settings(env, { accountStrategy: 'round-robin' });
    const send = (session: string) =>
      fetch(`${env.router.url}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json', 'x-router-session': session },
        body: JSON.stringify({ model: 'openai/sa', messages: [{ role: 'user', content: session }] }),
      }).then((r) => r.status);
    for (let i = 0; i < 3; i++) {
      expect(await send('s1')).toBe(200);
      expect(await send('s2')).toBe(200);
    }
    const bySession = (tag: string) => env.mock.requests.filter((r) => r.model === 'sa' && r.json.messages[0].content === tag).map(account);
    const s1 = bySession('s1');
    expect(new Set(s1).size).toBe(1);
    expect(new Set(bySession('s2')).size).toBe(1);
    // s1's account rate-limits: s1 fails over and stays on the other account afterwards.
    const sticky = s1[0]!;
    script(env.mock, { sa: perAccount(sticky === 'one' ? { type: 'status', status: 429, headers: { 'retry-after': '30' } } : undefined, sticky === 'two' ? { type: 'status', status: 429, headers: { 'retry-after': '30' } } : undefined) });
    expect(await send('s1')).toBe(200);
    await env.router.manage('DELETE', '/api/resilience/model-cooldowns');
    env.mock.reset();
    script(env.mock);
    expect(await send('s1')).toBe(200);
    expect(await send('s1')).toBe(200);
    expect(bySession('s1').every((a) => a !== sticky)).toBe(true);
  });
});

describe('cooldowns', () => {
  it('one account rate-limited: the same request fails over to the other; later ones skip the cooling account', async () => {
    script(env.mock, { c1: perAccount({ type: 'status', status: 429, headers: { 'retry-after': '30' } }, undefined) });
    const r = await chat(env, 'openai/c1');
    expect(r.status).toBe(200);
    expect(accounts('c1')).toEqual(['one', 'two']);
    for (let i = 0; i < 3; i++) expect((await chat(env, 'openai/c1')).status).toBe(200);
    expect(accounts('c1')).toEqual(['one', 'two', 'two', 'two', 'two']);
    // The cooldown is per (account, model): the same account still serves other models.
    expect((await chat(env, 'openai/c1-other')).status).toBe(200);
    expect(accounts('c1-other')).toEqual(['one']);
    const list = await cooldowns();
    expect(list).toEqual([expect.objectContaining({ connectionId: conn1, model: 'c1', remainingSeconds: expect.any(Number) })]);
    expect(list[0].remainingSeconds).toBeGreaterThan(25);
    expect(list[0].remainingSeconds).toBeLessThanOrEqual(30);
  });

  it('every account 429 with retry-after: the upstream 429 with retry text, then 429 model_cooldown without upstream calls', async () => {
    script(env.mock, {
      c2: perAccount({ type: 'status', status: 429, headers: { 'retry-after': '40' } }, { type: 'status', status: 429, headers: { 'retry-after': '20' } }),
    });
    const first = await chat(env, 'openai/c2');
    expect(first.status).toBe(429);
    // "All accounts unavailable": the upstream status, the message with the human retry text, Retry-After.
    expect(first.json.error.message).toMatch(/\(retry after (20|19)s\)$/);
    expect(['20', '19']).toContain(first.headers.get('retry-after'));
    expect(accounts('c2')).toEqual(['one', 'two']);

    const next = await chat(env, 'openai/c2');
    expect(next.status).toBe(429);
    expect(next.json).toEqual({
      error: {
        message: expect.stringMatching(/cooling down/),
        type: 'rate_limit_error',
        code: 'model_cooldown',
        model: 'openai/c2',
        reset_seconds: expect.any(Number),
      },
    });
    // reset_seconds is the earliest account's wait (20 s, minus the time elapsed).
    expect(next.json.error.reset_seconds).toBeGreaterThanOrEqual(18);
    expect(next.json.error.reset_seconds).toBeLessThanOrEqual(20);
    expect(next.headers.get('retry-after')).toBe(String(next.json.error.reset_seconds));
    expect(accounts('c2')).toHaveLength(2);
    // Streaming requests get the same 429 before any byte.
    const s = await chat(env, 'openai/c2', { stream: true });
    expect(s.status).toBe(429);
    expect(s.json.error.code).toBe('model_cooldown');
    expect(accounts('c2')).toHaveLength(2);
  });

  it('retry hints in the error text are honored (reset after 2m5s) and waits are capped at 24 h', async () => {
    script(env.mock, {
      c3: perAccount(
        { type: 'status', status: 429, message: 'Rate limit reached; please retry after 2m5s.' },
        { type: 'status', status: 429, headers: { 'retry-after': '999999' } },
      ),
    });
    await chat(env, 'openai/c3');
    const list = await cooldowns();
    const one = list.find((c) => c.connectionId === conn1);
    const two = list.find((c) => c.connectionId === conn2);
    expect(one.remainingSeconds).toBeGreaterThan(120);
    expect(one.remainingSeconds).toBeLessThanOrEqual(125);
    expect(two.remainingSeconds).toBeGreaterThan(86_390);
    expect(two.remainingSeconds).toBeLessThanOrEqual(86_400);
    const next = await chat(env, 'openai/c3');
    expect(next.json.error.code).toBe('model_cooldown');
    expect(next.json.error.reset_seconds).toBeGreaterThan(120);
    expect(next.json.error.reset_seconds).toBeLessThanOrEqual(125);
  });

  it('a 5xx cools an account only when it carries a retry hint', async () => {
    script(env.mock, { c4: perAccount({ type: 'status', status: 503, headers: { 'retry-after': '30' } }, { type: 'status', status: 500 }) });
    expect((await chat(env, 'openai/c4')).status).toBe(500);
    expect((await cooldowns()).map((c) => c.connectionId)).toEqual([conn1]);
  });

  it('a success clears the cooldown of its account', async () => {
    // Request A is in flight on account one (slow); meanwhile B gets a 429 from account one (cooldown 60 s)
    // and fails over to two. When A succeeds, account one's cooldown for the model is cleared.
    let calls = 0;
    env.mock.handle((req) => {
      if (req.model !== 'c5' || account(req) !== 'one') return undefined;
      return calls++ === 0
        ? { type: 'delay', ms: 400, then: { type: 'text', text: 'slow success' } }
        : { type: 'status', status: 429, headers: { 'retry-after': '60' } };
    });
    const a = chat(env, 'openai/c5');
    await sleep(100);
    const b = await chat(env, 'openai/c5');
    expect(content(b)).toBe('served by c5');
    expect((await cooldowns()).map((c) => c.connectionId)).toEqual([conn1]);
    expect(content(await a)).toBe('slow success');
    expect(await cooldowns()).toEqual([]);
    env.mock.reset();
    script(env.mock);
    expect((await chat(env, 'openai/c5')).status).toBe(200);
    expect(account(env.mock.requests.at(-1)!)).toBe('one');
  });

  it('DELETE /api/resilience/model-cooldowns clears by connection, or all', async () => {
    script(env.mock, { c6: { type: 'status', status: 429, headers: { 'retry-after': '50' } } });
    await chat(env, 'openai/c6');
    expect(await cooldowns()).toHaveLength(2);
    const one = await env.router.manage('DELETE', `/api/resilience/model-cooldowns?connectionId=${conn1}`);
    expect(one.json).toEqual({ cleared: 1 });
    expect((await cooldowns()).map((c) => c.connectionId)).toEqual([conn2]);
    const all = await env.router.manage('DELETE', '/api/resilience/model-cooldowns');
    expect(all.json).toEqual({ cleared: 1 });
    env.mock.reset();
    script(env.mock);
    expect((await chat(env, 'openai/c6')).status).toBe(200);
  });
});
