/**
 * Circuit breakers end to end: closed -> open after `breakerFailureThreshold` 5xx/network failures (503
 * with the spec's exact body and headers, no upstream call), open -> half-open after `breakerCooldownMs`
 * (one probe), probe success -> closed, probe failure -> open again; a combo skips a provider whose
 * circuit is open; events reach a webhook receiver.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, onTestFinished } from 'vitest';
import { chat, clearResilience, combo, content, hits, script, settings, setup, sleep, startReceiver, until, type Env, type Receiver } from './helpers.js';

const THRESHOLD = 2;
const COOLDOWN_MS = 600;

let env: Env;
let rx: Receiver;

beforeAll(async () => {
  env = await setup({ providers: ['openai', 'groq', 'deepseek'] });
  rx = await startReceiver();
  await settings(env, { breakerFailureThreshold: THRESHOLD, breakerCooldownMs: COOLDOWN_MS, allowPrivateWebhookDestinations: true });
  const w = await env.router.manage('POST', '/api/webhooks', { url: rx.url, events: ['provider.error', 'provider.recovered', 'combo.switched'] });
  expect(w.status).toBe(201);
});
afterAll(async () => {
  await env?.stop();
  await rx?.close();
});
beforeEach(() => {
  script(env.mock);
  rx.events.length = 0;
});
afterEach(async () => {
  env.mock.reset();
  await clearResilience(env);
});

async function breakers(): Promise<any[]> {
  return (await env.router.manage('GET', '/api/resilience')).json.breakers;
}

/**
 * For this test, circuits stay open for ten minutes (then back to COOLDOWN_MS): a test that reads an open
 * circuit must not depend on doing so within COOLDOWN_MS, which a loaded machine does not promise.
 */
async function longOpenPeriod(): Promise<number> {
  const cooldown = 600_000;
  await settings(env, { breakerFailureThreshold: THRESHOLD, breakerCooldownMs: cooldown, allowPrivateWebhookDestinations: true });
  onTestFinished(() => settings(env, { breakerFailureThreshold: THRESHOLD, breakerCooldownMs: COOLDOWN_MS, allowPrivateWebhookDestinations: true }));
  return cooldown;
}

/** Sends requests to `model` until the provider's circuit opens (asserting each failure passes through). */
async function openCircuit(model: string, upstreamModel: string): Promise<void> {
  script(env.mock, { [upstreamModel]: { type: 'status', status: 500, message: 'down' } });
  for (let i = 0; i < THRESHOLD; i++) {
    const r = await chat(env, model);
    expect(r.status, r.text).toBe(500);
  }
}

describe('breaker transitions', () => {
  it('closed -> open after the threshold: 503 with the exact body and headers, upstream not called', async () => {
    const cooldownMs = await longOpenPeriod();
    const openedFrom = Date.now(); // the circuit opens after this
    await openCircuit('openai/m1', 'm1');
    expect(hits(env.mock, 'm1')).toHaveLength(THRESHOLD);
    const r = await chat(env, 'openai/m1');
    expect(r.status).toBe(503);
    // Seconds left of the open period, as of this refusal.
    const retryAfter = r.json.error.retry_after;
    expect(retryAfter).toBeLessThanOrEqual(Math.ceil(cooldownMs / 1000));
    expect(retryAfter).toBeGreaterThanOrEqual(Math.floor((openedFrom + cooldownMs - Date.now()) / 1000));
    expect(r.json).toEqual({
      error: {
        message: expect.any(String),
        type: 'server_error',
        code: 'provider_circuit_open',
        provider: 'openai',
        retry_after: retryAfter,
      },
    });
    expect(r.json.error.message).not.toMatch(/\/|at .*\(/); // sanitized: no paths, no stack
    expect(r.headers.get('retry-after')).toBe(String(retryAfter));
    expect(r.headers.get('x-service-provider-breaker')).toBe('open');
    expect(hits(env.mock, 'm1')).toHaveLength(THRESHOLD);
    // A 5xx opened the circuit of this model only: the provider's other models keep serving, streaming too.
    const other = await fetch(`${env.router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${env.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/other', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(other.status).toBe(200);
    await other.text();
    expect(r.json.error.message).toMatch(/Model m1 of provider openai/);
    const list = await breakers();
    expect(list.filter((x) => x.provider === 'openai')).toHaveLength(1);
    const b = list.find((x) => x.provider === 'openai');
    expect(b).toMatchObject({ provider: 'openai', model: 'm1', state: 'open', consecutiveFailures: THRESHOLD });
    expect(Date.parse(b.openUntil)).toBeGreaterThan(Date.now());
  });

  it('network failures and timeouts count like 5xx; 4xx and 429 do not', async () => {
    await combo(env, { name: 'br-timeout', models: ['groq/t1'], targetTimeoutMs: 300 });
    script(env.mock, { n1: { type: 'drop-mid-stream' }, t1: { type: 'hang' }, q1: { type: 'status', status: 429 }, c1: { type: 'status', status: 400 } });
    // 400 and 429 (several, on another provider) never open the circuit.
    for (let i = 0; i < THRESHOLD + 1; i++) {
      expect((await chat(env, 'deepseek/c1')).status).toBe(400);
      await env.router.manage('DELETE', '/api/resilience/model-cooldowns');
      expect((await chat(env, 'deepseek/q1')).status).toBe(429);
    }
    expect((await breakers()).find((x) => x.provider === 'deepseek')).toBeUndefined();
    // One dropped connection + one timeout open groq's circuit.
    expect((await chat(env, 'groq/n1')).status).toBe(502);
    expect((await chat(env, 'br-timeout')).status).toBe(502);
    const r = await chat(env, 'groq/n1');
    expect(r.status).toBe(503);
    expect(r.json.error).toMatchObject({ code: 'provider_circuit_open', provider: 'groq' });
    // The provider cannot be reached: its own circuit is open and every model of it is refused, uncalled.
    const any = await chat(env, 'groq/any-model');
    expect(any.status).toBe(503);
    expect(any.json.error.message).toMatch(/^Provider groq is temporarily unavailable/);
    expect(hits(env.mock, 'any-model')).toHaveLength(0);
    expect((await breakers()).find((x) => x.provider === 'groq')).toMatchObject({ state: 'open' });
    expect((await breakers()).find((x) => x.provider === 'groq').model).toBeUndefined();
  });

  it('open -> half-open after the cooldown: one probe succeeds and closes the circuit', async () => {
    await openCircuit('openai/m2', 'm2');
    expect((await chat(env, 'openai/m2')).status).toBe(503);
    await sleep(COOLDOWN_MS + 50);
    expect((await breakers()).find((x) => x.provider === 'openai')).toMatchObject({ state: 'half-open', openUntil: null });
    env.mock.reset();
    script(env.mock);
    const probe = await chat(env, 'openai/m2');
    expect(probe.status, probe.text).toBe(200);
    expect(content(probe)).toBe('served by m2');
    expect((await breakers()).find((x) => x.provider === 'openai')).toBeUndefined();
    expect((await chat(env, 'openai/m2')).status).toBe(200);
  });

  it('half-open lets exactly one probe through; concurrent requests get 503 until it answers', async () => {
    await openCircuit('openai/m3', 'm3');
    await sleep(COOLDOWN_MS + 50);
    env.mock.reset();
    script(env.mock, { m3: { type: 'delay', ms: 300, then: { type: 'text', text: 'probe ok' } } });
    const probe = chat(env, 'openai/m3');
    await sleep(100);
    const during = await chat(env, 'openai/m3');
    expect(during.status).toBe(503);
    expect(during.json.error.code).toBe('provider_circuit_open');
    expect(during.headers.get('x-service-provider-breaker')).toBe('open');
    expect(content(await probe)).toBe('probe ok');
    expect(hits(env.mock, 'm3')).toHaveLength(1);
    expect((await chat(env, 'openai/m3')).status).toBe(200);
  });

  it('a failed probe reopens the circuit for another cooldown', async () => {
    await openCircuit('openai/m4', 'm4');
    await sleep(COOLDOWN_MS + 50);
    const probe = await chat(env, 'openai/m4');
    expect(probe.status).toBe(500);
    const again = await chat(env, 'openai/m4');
    expect(again.status).toBe(503);
    expect(hits(env.mock, 'm4')).toHaveLength(THRESHOLD + 1);
    expect((await breakers()).find((x) => x.provider === 'openai')).toMatchObject({ state: 'open' });
  });

  it('POST /api/resilience/reset closes a circuit at once', async () => {
    await openCircuit('openai/m5', 'm5');
    expect((await chat(env, 'openai/m5')).status).toBe(503);
    expect((await env.router.manage('POST', '/api/resilience/reset', { provider: 'openai' })).status).toBe(200);
    env.mock.reset();
    script(env.mock);
    expect((await chat(env, 'openai/m5')).status).toBe(200);
  });
});

describe('breakers inside combos', () => {
  it('a provider whose circuit is open is skipped without a call; the next target serves', async () => {
    await combo(env, { name: 'br-skip', models: ['openai/s1', 'groq/s2'] });
    await openCircuit('openai/s1', 's1');
    const before = hits(env.mock, 's1').length;
    const r = await chat(env, 'br-skip');
    expect(content(r)).toBe('served by s2');
    expect(hits(env.mock, 's1')).toHaveLength(before);
  });

  it('a combo of models on ONE provider: a failing model opens its own circuit, the others keep serving', async () => {
    await combo(env, { name: 'br-same', strategy: 'priority', models: ['openai/sa', 'openai/sb', 'openai/sc'] });
    script(env.mock, { sa: { type: 'status', status: 503, message: 'overloaded' } });
    await longOpenPeriod();
    // Concurrent requests, so failures of sa land back to back (this used to open the whole provider).
    const replies = await Promise.all(Array.from({ length: 12 }, () => chat(env, 'br-same')));
    for (const r of replies) expect(content(r), r.text).toBe('served by sb');
    const open = (await breakers()).filter((x) => x.provider === 'openai');
    expect(open).toEqual([expect.objectContaining({ provider: 'openai', model: 'sa', state: 'open' })]);
    // With sa's circuit open it is skipped without a call; sb still serves.
    const calls = hits(env.mock, 'sa').length;
    expect(calls).toBeLessThanOrEqual(12);
    for (let i = 0; i < 5; i++) expect(content(await chat(env, 'br-same'))).toBe('served by sb');
    expect(hits(env.mock, 'sa')).toHaveLength(calls);
    // A reset of the provider closes its model circuits too.
    expect((await env.router.manage('POST', '/api/resilience/reset', { provider: 'openai' })).status).toBe(200);
    expect((await breakers()).filter((x) => x.provider === 'openai')).toEqual([]);
  });

  it('every target with an open circuit: 503 provider_circuit_open before any call', async () => {
    await combo(env, { name: 'br-allopen', models: ['openai/o1', 'groq/o2'] });
    await openCircuit('openai/o1', 'o1');
    await openCircuit('groq/o2', 'o2');
    const r = await chat(env, 'br-allopen');
    expect(r.status).toBe(503);
    expect(r.json.error.code).toBe('provider_circuit_open');
    expect(r.headers.get('x-service-provider-breaker')).toBe('open');
  });

  it('a half-open provider later in a combo still gets its probe when the first target fails', async () => {
    await combo(env, { name: 'br-probe-late', models: ['openai/p1', 'groq/p2'] });
    await openCircuit('groq/p2', 'p2');
    await sleep(COOLDOWN_MS + 50);
    env.mock.reset();
    // p1's connection drops (a network failure); p2 has recovered.
    script(env.mock, { p1: { type: 'drop-mid-stream' } });
    const r = await chat(env, 'br-probe-late');
    expect(r.status, r.text).toBe(200);
    expect(content(r)).toBe('served by p2');
    expect((await breakers()).find((x) => x.provider === 'groq')).toBeUndefined();
  });

  it('planning a half-open provider that is never tried does not use up its probe', async () => {
    await combo(env, { name: 'br-probe-unused', models: ['openai/u1', 'groq/u2'] });
    await openCircuit('groq/u2', 'u2');
    await sleep(COOLDOWN_MS + 50);
    env.mock.reset();
    script(env.mock);
    // u1 serves; u2 (half-open) was planned as the fallback but never called.
    expect(content(await chat(env, 'br-probe-unused'))).toBe('served by u1');
    // The probe slot is still free: a direct request probes u2 and closes the circuit.
    const direct = await chat(env, 'groq/u2');
    expect(direct.status, direct.text).toBe(200);
    expect((await breakers()).find((x) => x.provider === 'groq')).toBeUndefined();
  });
});

describe('events reach a webhook receiver', () => {
  it('provider.error per counted failure, provider.recovered after the probe, combo.switched on failover', async () => {
    await combo(env, { name: 'br-events', models: ['deepseek/e1', 'groq/e2'] });
    script(env.mock, { e1: { type: 'status', status: 502 } });
    // Request 1: e1 fails (502, counted), e2 serves: the combo's primary becomes groq/e2.
    expect(content(await chat(env, 'br-events'))).toBe('served by e2');
    // Request 2: e1 fails again (threshold reached: open), e2 serves.
    expect(content(await chat(env, 'br-events'))).toBe('served by e2');
    await sleep(COOLDOWN_MS + 50);
    env.mock.reset();
    script(env.mock);
    // Request 3: deepseek half-open, e1 probes and serves: recovered; the primary switches back.
    expect(content(await chat(env, 'br-events'))).toBe('served by e1');

    await until(() => rx.events.some((e) => e.event === 'provider.recovered') && rx.events.filter((e) => e.event === 'combo.switched').length >= 2);
    const errors = rx.events.filter((e) => e.event === 'provider.error').map((e) => e.data);
    expect(errors).toEqual([
      { provider: 'deepseek', provider_id: 'deepseek', model: 'e1', status: 502, consecutive_failures: 1, circuit_state: 'closed' },
      { provider: 'deepseek', provider_id: 'deepseek', model: 'e1', status: 502, consecutive_failures: 2, circuit_state: 'open' },
    ]);
    const recovered = rx.events.filter((e) => e.event === 'provider.recovered').map((e) => e.data);
    expect(recovered).toEqual([expect.objectContaining({ provider: 'deepseek', model: 'e1', circuit_state: 'closed', previous_state: 'half_open' })]);
    // From the first 502 to the probe's success: the cooldown and a little more, in whole seconds.
    expect(recovered[0].downtime_seconds).toBeGreaterThanOrEqual(Math.round(COOLDOWN_MS / 1000));
    expect(recovered[0].downtime_seconds).toBeLessThanOrEqual(5);
    const switched = rx.events.filter((e) => e.event === 'combo.switched').map((e) => e.data);
    expect(switched).toEqual([
      { combo: 'br-events', from: null, to: 'groq/e2', reason: 'failover' },
      { combo: 'br-events', from: 'groq/e2', to: 'deepseek/e1', reason: 'strategy' },
    ]);
    const one = rx.events[0]!;
    expect(one.headers['x-webhook-event']).toBe(one.event);
    expect(String(one.headers['x-webhook-signature'])).toMatch(/^sha256=[0-9a-f]{64}$/);
  });
  it('combo.switched names an open circuit or a cooldown when the first choice was left out for it', async () => {
    await combo(env, { name: 'br-why', models: ['deepseek/w1', 'groq/w2'] });
    await combo(env, { name: 'br-why2', models: ['openai/w3', 'groq/w4'] });
    expect(content(await chat(env, 'br-why'))).toBe('served by w1');
    expect(content(await chat(env, 'br-why2'))).toBe('served by w3');
    await openCircuit('deepseek/w1', 'w1');
    script(env.mock, { w3: { type: 'status', status: 429, headers: { 'retry-after': '30' } } });
    expect((await chat(env, 'openai/w3')).status).toBe(429);
    expect(content(await chat(env, 'br-why'))).toBe('served by w2');
    expect(content(await chat(env, 'br-why2'))).toBe('served by w4');
    await until(() => rx.events.filter((e) => e.event === 'combo.switched').length >= 4);
    const switched = rx.events.filter((e) => e.event === 'combo.switched').map((e) => e.data);
    expect(switched).toEqual([
      { combo: 'br-why', from: null, to: 'deepseek/w1', reason: 'strategy' },
      { combo: 'br-why2', from: null, to: 'openai/w3', reason: 'strategy' },
      { combo: 'br-why', from: 'deepseek/w1', to: 'groq/w2', reason: 'circuit_open' },
      { combo: 'br-why2', from: 'openai/w3', to: 'groq/w4', reason: 'cooldown' },
    ]);
  });
});
