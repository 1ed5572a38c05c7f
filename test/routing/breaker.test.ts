import { beforeEach, describe, expect, it } from 'vitest';
import { toErrorReply } from '../../src/daemon/http/errors.js';
import { type BreakerEvent, CircuitBreakers } from '../../src/daemon/routing/breaker.js';
import { circuitOpenError } from '../../src/daemon/routing/errors.js';
import { classifyFailure } from '../../src/daemon/routing/provider-error.js';

const T0 = 1_700_000_000_000;

describe('CircuitBreakers', () => {
  let now: number;
  let breakers: CircuitBreakers;
  let events: BreakerEvent[];

  beforeEach(() => {
    now = T0;
    breakers = new CircuitBreakers({ now: () => now, failureThreshold: 3, cooldownMs: 30_000 });
    events = [];
    breakers.onStateChange((e) => events.push(e));
  });

  const failTimes = (n: number, provider = 'openai') => {
    for (let i = 0; i < n; i++) breakers.recordFailure(provider, 'server');
  };

  it('starts closed and allows requests', () => {
    expect(breakers.state('openai')).toBe('closed');
    expect(breakers.check('openai')).toEqual({ allowed: true, probe: false });
  });

  it('uses the documented defaults', () => {
    expect(new CircuitBreakers().settings).toEqual({ failureThreshold: 5, cooldownMs: 30_000, halfOpenProbes: 1 });
  });

  it('closed -> open after N consecutive eligible failures, and reports retry-after', () => {
    failTimes(2);
    expect(breakers.state('openai')).toBe('closed');
    failTimes(1);
    expect(breakers.state('openai')).toBe('open');
    expect(events).toEqual([{ provider: 'openai', from: 'closed', to: 'open', consecutiveFailures: 3 }]);
    expect(breakers.check('openai')).toEqual({ allowed: false, retryAfterSeconds: 30 });
    now += 29_001;
    expect(breakers.check('openai')).toEqual({ allowed: false, retryAfterSeconds: 1 });
  });

  it('a success resets the streak', () => {
    failTimes(2);
    breakers.recordSuccess('openai');
    failTimes(2);
    expect(breakers.state('openai')).toBe('closed');
    expect(events).toEqual([]);
  });

  it('ignores failures that are not breaker-eligible, without resetting the streak', () => {
    failTimes(2);
    breakers.recordFailure('openai', 'rate_limit');
    breakers.recordFailure('openai', 'auth');
    breakers.recordFailure('openai', 'client');
    breakers.recordFailure('openai', classifyFailure({ status: 408 }));
    expect(breakers.state('openai')).toBe('closed');
    breakers.recordFailure('openai', classifyFailure({ status: 502 }));
    expect(breakers.state('openai')).toBe('open');
  });

  it('keeps providers independent', () => {
    failTimes(3, 'openai');
    expect(breakers.state('anthropic')).toBe('closed');
    expect(breakers.check('anthropic').allowed).toBe(true);
  });

  it('open -> half-open after the cooldown, allowing one probe', () => {
    failTimes(3);
    now += 30_000;
    expect(breakers.state('openai')).toBe('half-open');
    expect(events.at(-1)).toEqual({ provider: 'openai', from: 'open', to: 'half-open', consecutiveFailures: 3 });
    expect(breakers.check('openai')).toEqual({ allowed: true, probe: true });
    expect(breakers.check('openai')).toEqual({ allowed: false, retryAfterSeconds: 30 });
  });

  it('half-open -> closed on probe success, firing onRecovered', () => {
    const recovered: BreakerEvent[] = [];
    breakers.onRecovered((e) => recovered.push(e));
    failTimes(3);
    now += 30_000;
    breakers.check('openai');
    breakers.recordSuccess('openai');
    expect(breakers.state('openai')).toBe('closed');
    // The streak began at T0; the probe succeeded 30 s later.
    expect(recovered).toEqual([{ provider: 'openai', from: 'half-open', to: 'closed', consecutiveFailures: 0, downtimeMs: 30_000, since: T0 }]);
    expect(events.map((e) => e.to)).toEqual(['open', 'half-open', 'closed']);
    expect(breakers.snapshot()).toEqual([]);
  });

  it('half-open -> open on probe failure with a fresh cooldown', () => {
    failTimes(3);
    now += 31_000;
    breakers.check('openai');
    breakers.recordFailure('openai', 'timeout');
    expect(breakers.state('openai')).toBe('open');
    expect(events.at(-1)).toEqual({ provider: 'openai', from: 'half-open', to: 'open', consecutiveFailures: 4 });
    expect(breakers.check('openai')).toEqual({ allowed: false, retryAfterSeconds: 30 });
  });

  it('a non-eligible probe result releases the probe slot without deciding', () => {
    failTimes(3);
    now += 30_000;
    expect(breakers.check('openai').allowed).toBe(true);
    breakers.recordFailure('openai', 'rate_limit');
    expect(breakers.state('openai')).toBe('half-open');
    expect(breakers.check('openai')).toEqual({ allowed: true, probe: true });
  });

  it('reclaims a probe slot whose result never arrived after one cooldown', () => {
    failTimes(3);
    now += 30_000;
    breakers.check('openai');
    now += 29_999;
    expect(breakers.check('openai').allowed).toBe(false);
    now += 1;
    expect(breakers.check('openai')).toEqual({ allowed: true, probe: true });
  });

  it('allows the configured number of concurrent probes', () => {
    breakers.configure({ halfOpenProbes: 2 });
    failTimes(3);
    now += 30_000;
    expect(breakers.check('openai').allowed).toBe(true);
    expect(breakers.check('openai').allowed).toBe(true);
    expect(breakers.check('openai').allowed).toBe(false);
  });

  it('ignores late successes and failures while open', () => {
    failTimes(3);
    breakers.recordSuccess('openai');
    failTimes(5);
    expect(breakers.state('openai')).toBe('open');
    expect(breakers.check('openai')).toEqual({ allowed: false, retryAfterSeconds: 30 });
    expect(events).toHaveLength(1);
  });

  it('configure changes the threshold and cooldown at runtime and validates', () => {
    breakers.configure({ failureThreshold: 1, cooldownMs: 5_000 });
    failTimes(1);
    expect(breakers.check('openai')).toEqual({ allowed: false, retryAfterSeconds: 5 });
    expect(() => breakers.configure({ failureThreshold: 0 })).toThrow(RangeError);
    expect(() => breakers.configure({ cooldownMs: 1.5 })).toThrow(RangeError);
    expect(breakers.settings.failureThreshold).toBe(1);
  });

  it('reset closes one or all circuits and emits for the ones not closed', () => {
    failTimes(3, 'a');
    failTimes(3, 'b');
    failTimes(1, 'c');
    events = [];
    breakers.reset('a');
    expect(breakers.state('a')).toBe('closed');
    expect(breakers.state('b')).toBe('open');
    breakers.reset();
    expect(breakers.state('b')).toBe('closed');
    expect(events.map((e) => `${e.provider}:${e.from}->${e.to}`)).toEqual(['a:open->closed', 'b:open->closed']);
    expect(breakers.snapshot()).toEqual([]);
  });

  it('a throwing listener does not break state handling or other listeners', () => {
    const seen: string[] = [];
    breakers.onStateChange(() => {
      throw new Error('webhook down');
    });
    breakers.onStateChange((e) => seen.push(e.to));
    failTimes(3);
    expect(breakers.state('openai')).toBe('open');
    expect(seen).toEqual(['open']);
  });

  it('unsubscribes listeners', () => {
    const off = breakers.onStateChange(() => {
      throw new Error('should not be called');
    });
    off();
    const seen: BreakerEvent[] = [];
    const offRecovered = breakers.onRecovered((e) => seen.push(e));
    offRecovered();
    failTimes(3);
    breakers.reset();
    expect(seen).toEqual([]);
  });

  describe('snapshot and restore across a restart', () => {
    it('keeps unexpired open circuits, turns expired ones half-open, keeps partial streaks', () => {
      failTimes(3, 'expired');
      now += 20_000;
      failTimes(3, 'fresh');
      failTimes(2, 'streak');
      const saved = JSON.parse(JSON.stringify(breakers.snapshot()));
      expect(saved).toHaveLength(3);

      now += 15_000; // 35 s after 'expired' opened, 15 s after 'fresh' opened
      const restarted = new CircuitBreakers({ now: () => now, failureThreshold: 3, cooldownMs: 30_000 });
      const restartedEvents: BreakerEvent[] = [];
      restarted.onStateChange((e) => restartedEvents.push(e));
      restarted.restore(saved, now);

      expect(restarted.state('expired')).toBe('half-open');
      expect(restarted.check('expired')).toEqual({ allowed: true, probe: true });
      expect(restarted.state('fresh')).toBe('open');
      expect(restarted.check('fresh')).toEqual({ allowed: false, retryAfterSeconds: 15 });
      expect(restarted.state('streak')).toBe('closed');
      restarted.recordFailure('streak', 'network');
      expect(restarted.state('streak')).toBe('open');
      expect(restartedEvents).toEqual([{ provider: 'streak', from: 'closed', to: 'open', consecutiveFailures: 3 }]);
    });

    it('restore replaces existing state and skips malformed entries', () => {
      failTimes(3, 'old');
      breakers.restore([
        { provider: 'ok', state: 'open', consecutiveFailures: 5, openUntil: now + 10_000 },
        { provider: 'bad', state: 'weird', consecutiveFailures: 1, openUntil: 0 } as never,
        null as never,
        { provider: 'clean', state: 'closed', consecutiveFailures: 0, openUntil: 0 },
      ]);
      expect(breakers.state('old')).toBe('closed');
      expect(breakers.state('ok')).toBe('open');
      expect(breakers.snapshot().map((e) => e.provider)).toEqual(['ok']);
    });
  });
});

describe('circuitOpenError', () => {
  it('builds the exact 503 body and headers', () => {
    const reply = toErrorReply(circuitOpenError('openai', 12.2));
    expect(reply.status).toBe(503);
    expect(reply.headers).toEqual({ 'Retry-After': '13', 'X-Service-Provider-Breaker': 'open' });
    expect(reply.body).toEqual({
      error: {
        message: expect.stringContaining('openai'),
        type: 'server_error',
        code: 'provider_circuit_open',
        provider: 'openai',
        retry_after: 13,
      },
    });
  });
});

describe('CircuitBreakers: provider and model circuits', () => {
  let now: number;
  let breakers: CircuitBreakers;
  let events: BreakerEvent[];

  beforeEach(() => {
    now = T0;
    breakers = new CircuitBreakers({ now: () => now, failureThreshold: 2, cooldownMs: 10_000 });
    events = [];
    breakers.onStateChange((e) => events.push(e));
  });

  it('a 5xx counts against the model: that model is refused, the provider and its other models are not', () => {
    expect(breakers.recordFailure('openai', 'server', 'a')).toMatchObject({ provider: 'openai', model: 'a', consecutiveFailures: 1, state: 'closed' });
    expect(breakers.recordFailure('openai', 'server', 'a')).toMatchObject({ model: 'a', consecutiveFailures: 2, state: 'open' });
    expect(events).toEqual([{ provider: 'openai', model: 'a', from: 'closed', to: 'open', consecutiveFailures: 2 }]);
    expect(breakers.check('openai', 'a')).toEqual({ allowed: false, retryAfterSeconds: 10, model: 'a' });
    expect(breakers.peek('openai', 'a')).toEqual({ allowed: false, retryAfterSeconds: 10, model: 'a' });
    expect(breakers.check('openai', 'b')).toEqual({ allowed: true, probe: false });
    expect(breakers.check('openai')).toEqual({ allowed: true, probe: false });
    expect(breakers.state('openai')).toBe('closed');
    expect(breakers.state('openai', 'a')).toBe('open');
  });

  it('network failures and timeouts count against the provider: every model is refused', () => {
    breakers.recordFailure('openai', 'network', 'a');
    expect(breakers.recordFailure('openai', classifyFailure({ error: Object.assign(new Error('t'), { name: 'TimeoutError' }) }), 'b')).toMatchObject({
      provider: 'openai',
      consecutiveFailures: 2,
      state: 'open',
    });
    expect(breakers.snapshot()).toEqual([{ provider: 'openai', state: 'open', consecutiveFailures: 2, openUntil: T0 + 10_000, since: T0 }]);
    for (const m of ['a', 'b', 'c']) expect(breakers.check('openai', m)).toEqual({ allowed: false, retryAfterSeconds: 10 });
  });

  it("failures of different models do not add up for the models; a success of the model resets its streak", () => {
    breakers.recordFailure('openai', 'server', 'a');
    breakers.recordSuccess('openai', 'c');
    breakers.recordFailure('openai', 'server', 'b');
    expect(breakers.state('openai', 'a')).toBe('closed');
    breakers.recordSuccess('openai', 'a');
    breakers.recordFailure('openai', 'server', 'a');
    expect(breakers.state('openai', 'a')).toBe('closed');
    breakers.recordSuccess('openai', 'c');
    breakers.recordFailure('openai', 'server', 'b');
    expect(breakers.state('openai', 'b')).toBe('open');
    expect(breakers.state('openai')).toBe('closed');
  });

  it('5xx spanning several models with no success in between open the provider circuit (every model refused)', () => {
    expect(breakers.recordFailure('openai', 'server', 'a')).toMatchObject({ model: 'a', state: 'closed' });
    expect(breakers.recordFailure('openai', 'server', 'b')).toEqual({ provider: 'openai', state: 'open', consecutiveFailures: 2, openUntil: T0 + 10_000, since: T0 });
    expect(events).toContainEqual({ provider: 'openai', from: 'closed', to: 'open', consecutiveFailures: 2 });
    for (const m of ['a', 'b', 'c']) expect(breakers.check('openai', m)).toEqual({ allowed: false, retryAfterSeconds: 10 });
    now += 10_000;
    // The half-open probe fails with another 5xx: the provider's circuit reopens.
    expect(breakers.check('openai', 'c')).toEqual({ allowed: true, probe: true });
    breakers.recordFailure('openai', 'server', 'c');
    expect(breakers.state('openai')).toBe('open');
    now += 10_000;
    expect(breakers.check('openai', 'd')).toEqual({ allowed: true, probe: true });
    breakers.recordSuccess('openai', 'd');
    expect(breakers.state('openai')).toBe('closed');
  });

  it('one model failing over and over never opens the provider circuit', () => {
    for (let i = 0; i < 10; i++) breakers.recordFailure('openai', 'server', 'a');
    expect(breakers.state('openai')).toBe('closed');
    expect(breakers.check('openai', 'b')).toEqual({ allowed: true, probe: false });
  });

  it('half-open model circuit: one probe; its success closes it (event with the model)', () => {
    breakers.recordFailure('openai', 'server', 'a');
    breakers.recordFailure('openai', 'server', 'a');
    now += 10_000;
    expect(breakers.peek('openai', 'a')).toEqual({ allowed: true, probe: true });
    expect(breakers.check('openai', 'a')).toEqual({ allowed: true, probe: true });
    expect(breakers.check('openai', 'a')).toMatchObject({ allowed: false, model: 'a' });
    expect(breakers.check('openai', 'b')).toEqual({ allowed: true, probe: false });
    breakers.recordSuccess('openai', 'a');
    expect(breakers.state('openai', 'a')).toBe('closed');
    expect(events.at(-1)).toEqual({ provider: 'openai', model: 'a', from: 'half-open', to: 'closed', consecutiveFailures: 0, downtimeMs: 10_000, since: T0 });
  });

  it("a 5xx answering the provider's half-open probe releases the provider's slot and counts for the model", () => {
    breakers.recordFailure('openai', 'network');
    breakers.recordFailure('openai', 'network');
    now += 10_000;
    expect(breakers.check('openai', 'a')).toEqual({ allowed: true, probe: true });
    expect(breakers.check('openai', 'b')).toMatchObject({ allowed: false });
    breakers.recordFailure('openai', 'server', 'a');
    expect(breakers.state('openai')).toBe('half-open');
    expect(breakers.check('openai', 'b')).toEqual({ allowed: true, probe: true });
    expect(breakers.snapshot().find((e) => e.model === 'a')).toMatchObject({ consecutiveFailures: 1, state: 'closed' });
  });

  it('a refused model does not take the provider probe slot', () => {
    breakers.recordFailure('openai', 'network');
    breakers.recordFailure('openai', 'network');
    breakers.recordFailure('openai', 'server', 'a');
    breakers.recordFailure('openai', 'server', 'a');
    now += 5_000;
    breakers.recordSuccess('openai'); // ignored: open
    now += 5_000; // both half-open now; take a's only probe, then b must still get the provider's
    expect(breakers.check('openai', 'a')).toEqual({ allowed: true, probe: true });
    expect(breakers.check('openai', 'a')).toMatchObject({ allowed: false });
    expect(breakers.check('openai', 'b')).toMatchObject({ allowed: false }); // the provider's one probe is a's
  });

  it('reset(provider) closes its model circuits; snapshot and restore keep the model', () => {
    breakers.recordFailure('openai', 'server', 'a');
    breakers.recordFailure('openai', 'server', 'a');
    breakers.recordFailure('groq', 'server', 'x');
    const snap = breakers.snapshot();
    expect(snap).toEqual([
      { provider: 'openai', model: 'a', state: 'open', consecutiveFailures: 2, openUntil: T0 + 10_000, since: T0 },
      { provider: 'groq', model: 'x', state: 'closed', consecutiveFailures: 1, openUntil: 0, since: T0 },
    ]);
    const copy = new CircuitBreakers({ now: () => now, failureThreshold: 2, cooldownMs: 10_000 });
    copy.restore(JSON.parse(JSON.stringify(snap)));
    expect(copy.snapshot()).toEqual(snap);
    expect(copy.check('openai', 'a')).toMatchObject({ allowed: false, model: 'a' });
    breakers.reset('openai');
    expect(breakers.snapshot()).toEqual([{ provider: 'groq', model: 'x', state: 'closed', consecutiveFailures: 1, openUntil: 0, since: T0 }]);
    expect(events.at(-1)).toEqual({ provider: 'openai', model: 'a', from: 'open', to: 'closed', consecutiveFailures: 0, downtimeMs: 0, since: now });
  });

  it('a circuit restored from an older snapshot (no `since`) recovers without a downtime', () => {
    breakers.restore([{ provider: 'openai', state: 'open', consecutiveFailures: 2, openUntil: T0 + 1_000 }]);
    now += 1_000;
    expect(breakers.check('openai')).toEqual({ allowed: true, probe: true });
    breakers.recordSuccess('openai');
    expect(events.at(-1)).toEqual({ provider: 'openai', from: 'half-open', to: 'closed', consecutiveFailures: 0 });
  });

  it('circuitOpenError names the model for a model circuit, same body shape', () => {
    const reply = toErrorReply(circuitOpenError('openai', 4, 'gpt-4o'));
    expect(reply.status).toBe(503);
    expect(reply.body).toEqual({ error: { message: expect.stringMatching(/^Model gpt-4o of provider openai/), type: 'server_error', code: 'provider_circuit_open', provider: 'openai', retry_after: 4 } });
  });
});
