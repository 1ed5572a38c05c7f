import { beforeEach, describe, expect, it } from 'vitest';
import { toErrorReply } from '../../src/daemon/http/errors.js';
import { ANY_MODEL, CooldownStore } from '../../src/daemon/routing/cooldowns.js';
import { allUnavailableError, modelCooldownError } from '../../src/daemon/routing/errors.js';

const T0 = 1_700_000_000_000;

describe('CooldownStore', () => {
  let now: number;
  let store: CooldownStore;

  beforeEach(() => {
    now = T0;
    store = new CooldownStore({ now: () => now });
  });

  it('cools one (connection, model) pair for the given seconds', () => {
    store.set('c1', 'gpt-4o', 60, '429');
    expect(store.isCooling('c1', 'gpt-4o')).toBe(true);
    expect(store.isCooling('c1', 'gpt-4o-mini')).toBe(false);
    expect(store.isCooling('c2', 'gpt-4o')).toBe(false);
    expect(store.remaining('c1', 'gpt-4o')).toBe(60);
    now += 59_001;
    expect(store.remaining('c1', 'gpt-4o')).toBe(1);
    now += 999;
    expect(store.isCooling('c1', 'gpt-4o')).toBe(false);
    expect(store.remaining('c1', 'gpt-4o')).toBe(0);
  });

  it('clears on success', () => {
    store.set('c1', 'm', 60, '429');
    store.clear('c1', 'm');
    expect(store.isCooling('c1', 'm')).toBe(false);
  });

  it('keeps the longer of two cooldowns', () => {
    store.set('c1', 'm', 3600, 'quota');
    store.set('c1', 'm', 5, 'burst');
    expect(store.remaining('c1', 'm')).toBe(3600);
    store.set('c1', 'm', 7200, 'longer');
    expect(store.list()[0]).toMatchObject({ reason: 'longer', remainingSeconds: 7200 });
  });

  it('clamps durations to 1 s .. 24 h', () => {
    store.set('c1', 'a', 0, '');
    store.set('c1', 'b', 1e9, '');
    store.set('c1', 'c', Number.NaN, '');
    store.set('c1', 'd', 0.2, '');
    expect(store.remaining('c1', 'a')).toBe(1);
    expect(store.remaining('c1', 'b')).toBe(86_400);
    expect(store.remaining('c1', 'c')).toBe(1);
    expect(store.remaining('c1', 'd')).toBe(1);
  });

  it('an any-model cooldown covers every model of the connection', () => {
    store.set('c1', ANY_MODEL, 300, 'auth');
    expect(store.isCooling('c1', 'gpt-4o')).toBe(true);
    expect(store.remaining('c1', 'claude')).toBe(300);
    store.clear('c1', 'gpt-4o');
    expect(store.isCooling('c1', 'gpt-4o')).toBe(true);
    store.clear('c1', ANY_MODEL);
    expect(store.isCooling('c1', 'gpt-4o')).toBe(false);
  });

  it('clearConnection ends every cooldown of one connection', () => {
    store.set('c1', 'a', 60, '');
    store.set('c1', ANY_MODEL, 60, '');
    store.set('c2', 'a', 60, '');
    store.clearConnection('c1');
    expect(store.list().map((e) => e.connectionId)).toEqual(['c2']);
  });

  it('earliestReset gives the soonest reset among the connections, 0 when one is free', () => {
    store.set('c1', 'm', 120, '');
    store.set('c2', 'm', 45, '');
    store.set('c3', 'other', 10, '');
    expect(store.earliestReset('m', ['c1', 'c2'])).toBe(45);
    expect(store.earliestReset('m', ['c1', 'c2', 'c3'])).toBe(0);
    expect(store.earliestReset('m', [])).toBe(0);
    now += 45_000;
    expect(store.earliestReset('m', ['c1', 'c2'])).toBe(0);
    expect(store.earliestReset('m', ['c1'])).toBe(75);
  });

  it('list shows active cooldowns soonest first and drops expired ones', () => {
    store.set('c1', 'm', 100, 'slow');
    store.set('c2', 'm', 10, 'fast');
    store.set('c3', 'm', 1, 'gone');
    now += 1_000;
    expect(store.list()).toEqual([
      { connectionId: 'c2', model: 'm', until: T0 + 10_000, reason: 'fast', remainingSeconds: 9 },
      { connectionId: 'c1', model: 'm', until: T0 + 100_000, reason: 'slow', remainingSeconds: 99 },
    ]);
  });

  it('snapshot/restore survives a restart, dropping entries expired meanwhile and malformed ones', () => {
    store.set('c1', 'm', 30, 'short');
    store.set('c2', 'm', 600, 'long');
    const saved = JSON.parse(JSON.stringify(store.snapshot()));
    now += 60_000;
    const restarted = new CooldownStore({ now: () => now });
    restarted.restore([...saved, { connectionId: 'x' } as never, null as never]);
    expect(restarted.isCooling('c1', 'm')).toBe(false);
    expect(restarted.remaining('c2', 'm')).toBe(540);
    expect(restarted.snapshot()).toEqual([{ connectionId: 'c2', model: 'm', until: T0 + 600_000, reason: 'long' }]);
  });
});

describe('modelCooldownError', () => {
  it('builds the exact 429 body with model and Retry-After', () => {
    const reply = toErrorReply(modelCooldownError('gpt-4o', 125));
    expect(reply.status).toBe(429);
    expect(reply.headers).toEqual({ 'Retry-After': '125' });
    expect(reply.body).toEqual({
      error: {
        message: 'All credentials for model gpt-4o are cooling down (retry after 2m 5s).',
        type: 'rate_limit_error',
        code: 'model_cooldown',
        model: 'gpt-4o',
        reset_seconds: 125,
      },
    });
  });

  it('leaves the model out when unknown and rounds the seconds up', () => {
    const reply = toErrorReply(modelCooldownError(undefined, 0.3));
    expect(reply.body.error).not.toHaveProperty('model');
    expect(reply.body.error.reset_seconds).toBe(1);
    expect(reply.headers).toEqual({ 'Retry-After': '1' });
  });
});

describe('allUnavailableError', () => {
  it('passes the upstream status through with the human retry text and Retry-After', () => {
    const error = allUnavailableError(429, '[429]: Rate limit reached', 125);
    const reply = toErrorReply(error);
    expect(reply.status).toBe(429);
    expect(reply.body.error.message).toBe('[429]: Rate limit reached (retry after 2m 5s)');
    expect(reply.headers).toEqual({ 'Retry-After': '125' });
  });

  it('omits the retry text and header when the wait is unknown', () => {
    const reply = toErrorReply(allUnavailableError(503, 'Overloaded'));
    expect(reply.status).toBe(503);
    expect(reply.body.error.message).toBe('Overloaded');
    expect(reply.headers).toBeUndefined();
  });

  it('turns a non-error status (e.g. 0 for a network failure) into 502', () => {
    expect(allUnavailableError(0, '[FETCH_FAILED]: fetch failed', 1).status).toBe(502);
    expect(allUnavailableError(200, 'odd').status).toBe(502);
  });
});
