import { describe, expect, it, vi } from 'vitest';
import { EventBus } from '../../src/daemon/events/bus.js';
import { EVENT_NAMES, isEventName, type AnyRouterEvent } from '../../src/daemon/events/types.js';
import { cpuTimeOf } from '../support/timing.js';

const completed = {
  trace_id: 't1',
  api_key_id: 'k1',
  provider: 'openai',
  model: 'gpt-4o',
  status: 200,
  tokens_in: 10,
  tokens_out: 5,
  cost_usd: 0.001,
  cost_source: 'computed' as const,
  price_version: 'router@2026-11',
};

describe('event bus', () => {
  it('delivers to named and any-listeners, named first, with an ISO timestamp', () => {
    const bus = new EventBus();
    const seen: string[] = [];
    bus.on('request.completed', (e) => seen.push(`named:${e.event}:${e.data.model}`));
    bus.onAny((e) => seen.push(`any:${e.event}`));
    bus.on('provider.error', () => seen.push('wrong'));
    bus.emit('request.completed', completed);
    expect(seen).toEqual(['named:request.completed:gpt-4o', 'any:request.completed']);
  });

  it('stamps timestamp once per emit as ISO 8601', () => {
    const bus = new EventBus();
    let ev: AnyRouterEvent | undefined;
    bus.onAny((e) => (ev = e));
    bus.emit('test.ping', { message: 'hi', webhookId: 'x' });
    expect(ev!.timestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(ev!.data).toEqual({ message: 'hi', webhookId: 'x' });
  });

  it('never lets a throwing or rejecting listener reach the emitter; others still run', async () => {
    const errors: unknown[] = [];
    const bus = new EventBus((err) => errors.push(err));
    const after = vi.fn();
    bus.onAny(() => {
      throw new Error('sync boom');
    });
    bus.onAny(async () => {
      throw new Error('async boom');
    });
    bus.onAny(after);
    expect(() => bus.emit('request.completed', completed)).not.toThrow();
    expect(after).toHaveBeenCalledOnce();
    await new Promise((r) => setImmediate(r));
    expect(errors.map((e) => (e as Error).message)).toEqual(['sync boom', 'async boom']);
  });

  it('survives an error handler that throws', () => {
    const bus = new EventBus(() => {
      throw new Error('handler broken');
    });
    bus.onAny(() => {
      throw new Error('x');
    });
    expect(() => bus.emit('test.ping', { message: 'm', webhookId: 'w' })).not.toThrow();
  });

  it('unsubscribes, also during an emit without disturbing it', () => {
    const bus = new EventBus();
    const calls: string[] = [];
    const offA = bus.on('quota.exceeded', () => {
      calls.push('a');
      offA();
    });
    bus.on('quota.exceeded', () => calls.push('b'));
    const data = { api_key_id: 'k', quota: 'tokens', scope: 'global', limit: 1, used: 2, window: 'day' };
    bus.emit('quota.exceeded', data);
    bus.emit('quota.exceeded', data);
    expect(calls).toEqual(['a', 'b', 'b']);
    const offAny = bus.onAny(() => calls.push('any'));
    offAny();
    bus.emit('quota.exceeded', data);
    expect(calls).toEqual(['a', 'b', 'b', 'b']);
  });

  it('reports listeners and does nothing without them', () => {
    const bus = new EventBus();
    expect(bus.hasListeners('combo.switched')).toBe(false);
    const off = bus.on('combo.switched', () => {});
    expect(bus.hasListeners('combo.switched')).toBe(true);
    expect(bus.hasListeners('provider.recovered')).toBe(false);
    off();
    expect(bus.hasListeners('combo.switched')).toBe(false);
    bus.emit('combo.switched', { combo: 'c', from: null, to: 'openai/gpt-4o', reason: 'failover' });
    bus.onAny(() => {});
    bus.clear();
    expect(bus.hasListeners('provider.recovered')).toBe(false);
  });

  it('is cheap: 100k emits with a listener well under a second', async () => {
    const ms = await cpuTimeOf(() => {
      const bus = new EventBus();
      let n = 0;
      bus.onAny(() => n++);
      for (let i = 0; i < 100_000; i++) bus.emit('request.completed', completed);
      expect(n).toBe(100_000);
    });
    expect(ms).toBeLessThan(1000);
  });

  it('an any-listener with `wants` only gets, and only counts for, the events it wants right now', () => {
    const bus = new EventBus();
    const seen: string[] = [];
    let wanted = new Set<string>(['provider.error']);
    bus.onAny((e) => seen.push(e.event), (name) => wanted.has(name));
    expect(bus.hasListeners('request.completed')).toBe(false);
    expect(bus.hasListeners('provider.error')).toBe(true);
    bus.emit('request.completed', completed);
    bus.emit('provider.error', { provider: 'openai', status: 500, consecutive_failures: 1, circuit_state: 'closed' });
    expect(seen).toEqual(['provider.error']);
    wanted = new Set(['request.completed']); // e.g. a webhook subscribed since
    bus.emit('request.completed', completed);
    expect(seen).toEqual(['provider.error', 'request.completed']);
    // A plain any-listener still wants everything.
    bus.onAny(() => {});
    expect(bus.hasListeners('quota.exceeded')).toBe(true);
  });

  it('knows the thirteen event names', () => {
    expect(EVENT_NAMES).toHaveLength(13);
    expect(isEventName('provider.recovered')).toBe(true);
    expect(isEventName('batch.completed')).toBe(true);
    expect(isEventName('batch.failed')).toBe(true);
    expect(isEventName('batch.cancelled')).toBe(true);
    expect(isEventName('connection.refreshed')).toBe(true);
    expect(isEventName('connection.expired')).toBe(true);
    expect(isEventName('nope')).toBe(false);
  });
});
