/**
 * QuotaService at the edges of every limit: daily requests (per key and the default setting), token limits
 * per scope and period, relay per-minute limits per key and per IP, with the 429 code and Retry-After.
 */
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { toErrorReply } from '../../src/daemon/http/errors.js';
import type { KeyLimits, TokenLimit } from '../../src/daemon/keys/store.js';
import { type Env, T0, keyAuth, makeEnv, refusal, sessionAuth } from './helpers.js';

const OPENAI = { provider: 'openai', model: 'gpt-4o', relay: false, clientIp: '' };
const MIDNIGHT = Date.UTC(2025, 2, 11);
const APRIL = Date.UTC(2025, 3, 1);

let env: Env;
beforeEach(() => {
  env = makeEnv();
});
afterEach(() => env.close());

async function newKey(limits: Partial<KeyLimits> = {}, scopes = ['proxy']) {
  const id = (await env.keys.create('k', scopes, limits)).id;
  /** Fresh auth each call, as the pipeline would build it for the next request (sees PATCHed limits). */
  return () => keyAuth(env.keys.get(id)!);
}

function admitN(auth: () => ReturnType<typeof keyAuth>, n: number, req = OPENAI): void {
  for (let i = 0; i < n; i++) env.quotas.admit(auth(), req);
}

describe('daily request limit', () => {
  it('allows the Nth request of the UTC day and refuses the N+1th with 429 daily_request_limit and Retry-After to midnight', async () => {
    const auth = await newKey({ dailyRequestLimit: 3 });
    admitN(auth, 3);
    const err = refusal(() => env.quotas.admit(auth(), OPENAI));
    expect(err.status).toBe(429);
    expect(err.code).toBe('daily_request_limit');
    expect(err.type).toBe('rate_limit_error');
    expect(err.headers).toEqual({ 'Retry-After': String((MIDNIGHT - T0) / 1000) }); // 7200
    const reply = toErrorReply(err);
    expect(reply.body.error).toMatchObject({ type: 'rate_limit_error', code: 'daily_request_limit', limit: 3, retry_after: 7200 });
    expect(reply.headers).toEqual({ 'Retry-After': '7200' });
  });

  it('rounds Retry-After up and resets exactly at UTC midnight', async () => {
    const auth = await newKey({ dailyRequestLimit: 1 });
    admitN(auth, 1);
    env.clock.now = MIDNIGHT - 1500;
    expect(refusal(() => env.quotas.admit(auth(), OPENAI)).headers).toEqual({ 'Retry-After': '2' });
    env.clock.now = MIDNIGHT - 1;
    expect(refusal(() => env.quotas.admit(auth(), OPENAI)).headers).toEqual({ 'Retry-After': '1' });
    env.clock.now = MIDNIGHT;
    admitN(auth, 1);
    expect(refusal(() => env.quotas.admit(auth(), OPENAI)).headers).toEqual({ 'Retry-After': '86400' });
  });

  it('refused requests are not counted', async () => {
    const auth = await newKey({ dailyRequestLimit: 2 });
    admitN(auth, 2);
    for (let i = 0; i < 5; i++) refusal(() => env.quotas.admit(auth(), OPENAI));
    await env.keys.update(auth().key!.id, { dailyRequestLimit: 3 });
    admitN(auth, 1);
    expect(refusal(() => env.quotas.admit(auth(), OPENAI)).code).toBe('daily_request_limit');
    expect(env.quotas.snapshot(auth().key!.id)!.requests).toMatchObject({ used: 3, limit: 3, remaining: 0, source: 'key' });
  });

  it('uses the defaultDailyRequestLimit setting unless the key overrides it (0 = unlimited either way)', async () => {
    const byDefault = await newKey();
    const override = await newKey({ dailyRequestLimit: 4 });
    const unlimited = await newKey({ dailyRequestLimit: 0 });
    // Default 0: unlimited.
    admitN(byDefault, 50);
    await env.settings.update({ defaultDailyRequestLimit: 52 });
    admitN(byDefault, 2);
    expect(refusal(() => env.quotas.admit(byDefault(), OPENAI)).code).toBe('daily_request_limit');
    expect(env.quotas.snapshot(byDefault().key!.id)!.requests).toMatchObject({ used: 52, limit: 52, source: 'default' });

    admitN(override, 4);
    expect(refusal(() => env.quotas.admit(override(), OPENAI)).code).toBe('daily_request_limit');
    admitN(unlimited, 100);
    expect(env.quotas.snapshot(unlimited().key!.id)!.requests).toMatchObject({ used: 100, limit: 0, remaining: null, source: 'key' });

    // Back to the default (null) on the override key: 4 used, default 52.
    await env.keys.update(override().key!.id, { dailyRequestLimit: null });
    admitN(override, 48);
    expect(refusal(() => env.quotas.admit(override(), OPENAI)).code).toBe('daily_request_limit');
  });

  it('callers without an API key have no daily limit', async () => {
    await env.settings.update({ defaultDailyRequestLimit: 1 });
    for (let i = 0; i < 5; i++) env.quotas.admit(sessionAuth(), OPENAI);
  });
});

describe('token limits', () => {
  const limits = (...l: TokenLimit[]) => ({ tokenLimits: l });

  it('global per day: allowed below the limit, refused once used reaches it, Retry-After to midnight', async () => {
    const auth = await newKey(limits({ scope: 'global', period: 'day', limit: 1000 }));
    env.quotas.admit(auth(), OPENAI);
    env.quotas.recordTokens(auth(), { provider: 'openai', model: 'gpt-4o', tokens: 999 });
    env.quotas.admit(auth(), { ...OPENAI, provider: 'anthropic', model: 'claude-3-5-haiku' });
    env.quotas.recordTokens(auth(), { provider: 'anthropic', model: 'claude-3-5-haiku', tokens: 1 });
    const err = refusal(() => env.quotas.admit(auth(), OPENAI));
    expect(err.status).toBe(429);
    expect(err.code).toBe('token_limit');
    expect(err.headers).toEqual({ 'Retry-After': '7200' });
    expect(toErrorReply(err).body.error).toMatchObject({ type: 'rate_limit_error', scope: 'global', period: 'day', limit: 1000 });
    env.clock.now = MIDNIGHT;
    env.quotas.admit(auth(), OPENAI);
  });

  it('provider scope counts and refuses only that provider', async () => {
    const auth = await newKey(limits({ scope: 'provider:openai', period: 'day', limit: 100 }));
    env.quotas.recordTokens(auth(), { provider: 'anthropic', model: 'claude-3-5-haiku', tokens: 500 });
    env.quotas.admit(auth(), OPENAI);
    env.quotas.recordTokens(auth(), { provider: 'openai', model: 'gpt-4o-mini', tokens: 99 });
    env.quotas.admit(auth(), OPENAI);
    env.quotas.recordTokens(auth(), { provider: 'openai', model: 'gpt-4o', tokens: 1 });
    expect(refusal(() => env.quotas.admit(auth(), { ...OPENAI, model: 'o3' })).code).toBe('token_limit');
    env.quotas.admit(auth(), { ...OPENAI, provider: 'anthropic', model: 'claude-3-5-haiku' });
  });

  it('model scope per month: exact model only, refused at the limit until the next UTC month', async () => {
    const auth = await newKey(limits({ scope: 'model:openai/gpt-4o', period: 'month', limit: 500 }));
    env.quotas.recordTokens(auth(), { provider: 'openai', model: 'gpt-4o-mini', tokens: 10_000 });
    env.quotas.recordTokens(auth(), { provider: 'openai', model: 'gpt-4o', tokens: 300 });
    // A `<provider>/`-prefixed model id counts against the same scope.
    env.quotas.recordTokens(auth(), { provider: 'openai', model: 'openai/gpt-4o', tokens: 199 });
    env.quotas.admit(auth(), OPENAI);
    env.quotas.recordTokens(auth(), { provider: 'openai', model: 'gpt-4o', tokens: 1 });
    const err = refusal(() => env.quotas.admit(auth(), OPENAI));
    expect(err.code).toBe('token_limit');
    expect(err.headers).toEqual({ 'Retry-After': String((APRIL - T0) / 1000) });
    env.quotas.admit(auth(), { ...OPENAI, model: 'gpt-4o-mini' });
    env.clock.now = MIDNIGHT; // a new day does not reset a monthly limit
    expect(refusal(() => env.quotas.admit(auth(), OPENAI)).code).toBe('token_limit');
    env.clock.now = APRIL;
    env.quotas.admit(auth(), OPENAI);
  });

  it('day and month limits on the same scope count independently', async () => {
    const auth = await newKey(limits({ scope: 'global', period: 'day', limit: 100 }, { scope: 'global', period: 'month', limit: 150 }));
    env.quotas.recordTokens(auth(), { provider: 'openai', model: 'gpt-4o', tokens: 100 });
    const day = refusal(() => env.quotas.admit(auth(), OPENAI));
    expect(toErrorReply(day).body.error).toMatchObject({ code: 'token_limit', period: 'day' });
    env.clock.now = MIDNIGHT;
    env.quotas.admit(auth(), OPENAI);
    env.quotas.recordTokens(auth(), { provider: 'openai', model: 'gpt-4o', tokens: 50 });
    const month = refusal(() => env.quotas.admit(auth(), OPENAI));
    expect(toErrorReply(month).body.error).toMatchObject({ code: 'token_limit', period: 'month' });
    expect(month.headers).toEqual({ 'Retry-After': String((APRIL - MIDNIGHT) / 1000) });
  });

  it('a limit of 0 means no limit; checkTokens checks a failover target without counting a request', async () => {
    const auth = await newKey({ dailyRequestLimit: 1, tokenLimits: [{ scope: 'global', period: 'day', limit: 0 }, { scope: 'provider:groq', period: 'day', limit: 10 }] });
    env.quotas.recordTokens(auth(), { provider: 'openai', model: 'gpt-4o', tokens: 1_000_000 });
    env.quotas.recordTokens(auth(), { provider: 'groq', model: 'llama', tokens: 10 });
    env.quotas.admit(auth(), OPENAI);
    env.quotas.checkTokens(auth(), { provider: 'openai', model: 'gpt-4o' });
    expect(refusal(() => env.quotas.checkTokens(auth(), { provider: 'groq', model: 'llama' })).code).toBe('token_limit');
    expect(env.quotas.snapshot(auth().key!.id)!.requests.used).toBe(1);
  });
});

describe('relay per-minute limits', () => {
  const MINUTE = Date.UTC(2025, 2, 10, 22, 0, 0); // aligned to a window start
  const relay = (clientIp: string) => ({ ...OPENAI, relay: true, clientIp });

  beforeEach(async () => {
    env.clock.now = MINUTE;
    await env.settings.update({ relayRequestsPerMinutePerKey: 3, relayRequestsPerMinutePerIp: 5 });
  });

  it('per key: the Nth request in a minute is allowed, the N+1th refused with relay_rate_limit_key and Retry-After', async () => {
    const auth = await newKey();
    admitN(auth, 3, relay('198.51.100.1'));
    const err = refusal(() => env.quotas.admit(auth(), relay('198.51.100.2')));
    expect(err.status).toBe(429);
    expect(err.code).toBe('relay_rate_limit_key');
    // Sliding window: the 3 requests of this window weigh 3 * (1 - e/60s) in the next one, which drops
    // to 2 (room for one more) 20 s into it: 60 s + 20 s.
    expect(err.headers).toEqual({ 'Retry-After': '80' });
    env.clock.now = MINUTE + 79_999;
    expect(refusal(() => env.quotas.admit(auth(), relay('198.51.100.2'))).code).toBe('relay_rate_limit_key');
    env.clock.now = MINUTE + 80_000;
    env.quotas.admit(auth(), relay('198.51.100.2'));
    // Non-relay requests of the same key are not rate limited per minute.
    admitN(auth, 20);
  });

  it('per IP: counts every key and keyless caller from one address; other addresses are unaffected', async () => {
    const a = await newKey();
    const b = await newKey();
    admitN(a, 3, relay('198.51.100.9'));
    env.quotas.admit(sessionAuth(), relay('198.51.100.9'));
    admitN(b, 1, relay('198.51.100.9'));
    const err = refusal(() => env.quotas.admit(b(), relay('198.51.100.9')));
    expect(err.code).toBe('relay_rate_limit_ip');
    expect(err.headers).toEqual({ 'Retry-After': '72' }); // next window, 5 * (1 - e/60s) <= 4 from e = 12 s
    expect(toErrorReply(err).body.error).toMatchObject({ type: 'rate_limit_error', code: 'relay_rate_limit_ip', limit: 5, retry_after: 72 });
    env.quotas.admit(b(), relay('198.51.100.10'));
    // clientIp '' falls back to the socket address of the caller.
    expect(refusal(() => env.quotas.admit(keyAuth(b().key!, '198.51.100.9'), relay(''))).code).toBe('relay_rate_limit_ip');
  });

  it('a refusal by one limiter counts nothing in the others; 0 turns a relay limit off', async () => {
    const a = await newKey({ dailyRequestLimit: 10 });
    const others = await newKey();
    admitN(others, 3, relay('198.51.100.20'));
    admitN(await newKey(), 2, relay('198.51.100.20'));
    for (let i = 0; i < 3; i++) expect(refusal(() => env.quotas.admit(a(), relay('198.51.100.20'))).code).toBe('relay_rate_limit_ip');
    expect(env.quotas.snapshot(a().key!.id)!.requests.used).toBe(0);
    expect(env.quotas.snapshot(a().key!.id)!.relay).toEqual({ perKeyPerMinute: 3, remaining: 3 });
    await env.settings.update({ relayRequestsPerMinutePerKey: 0, relayRequestsPerMinutePerIp: 0 });
    admitN(a, 10, relay('198.51.100.20'));
    expect(refusal(() => env.quotas.admit(a(), relay('198.51.100.20'))).code).toBe('daily_request_limit');
  });
});
