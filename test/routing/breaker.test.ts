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
    expect(recovered).toEqual([{ provider: 'openai', from: 'half-open', to: 'closed', consecutiveFailures: 0 }]);
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
