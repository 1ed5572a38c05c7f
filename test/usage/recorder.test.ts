/**
 * The usage recorder in-process: rows stay in memory until a flush (no disk write per request), the queue
 * drops its oldest rows at the bound and says so, events carry the spec's shapes, request.failed waits
 * for the request's last attempt, estimation runs off the request path, retention prunes old rows.
 */
import { EventEmitter } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { countTokens } from 'gpt-tokenizer';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import type { AnyRouterEvent } from '../../src/daemon/events/types.js';
import { Logger } from '../../src/daemon/logger.js';
import type { Outcome } from '../../src/daemon/proxy/outcome.js';
import { recordOutcome } from '../../src/daemon/proxy/outcome.js';
import type { Services } from '../../src/daemon/services.js';
import { TokenEstimator } from '../../src/daemon/usage/estimate.js';
import { UsageService } from '../../src/daemon/usage/service.js';
import { countText } from '../../src/daemon/usage/token-count.js';
import { cpuTimeOf } from '../support/timing.js';

let home: string;
let services: Services;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-usage-rec-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0, log: new Logger() });
});
afterAll(() => {
  if (services) closeServices(services);
  rmSync(home, { recursive: true, force: true });
});
afterEach(async () => {
  await services.usage.flush();
  services.db.exec('DELETE FROM usage_log');
});

let traceSeq = 0;
/** A synthetic outcome as the proxy builds it. */
function outcome(over: Partial<Outcome> & Record<string, unknown> = {}): Outcome {
  return {
    traceId: `trace-${++traceSeq}`,
    call: { clientFormat: 'openai-chat', raw: { model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }, model: 'openai/gpt-4o', stream: false, endpoint: '/v1/chat/completions' },
    target: { provider: { id: 'openai' }, model: 'gpt-4o', publicModel: 'openai/gpt-4o', connectionId: 'conn-1' },
    auth: { via: 'api-key', key: { id: 'key-1' }, loopback: true, remoteAddress: '127.0.0.1' },
    t0: performance.now() - 5,
    status: 200,
    usage: { inputTokens: 10, outputTokens: 5 },
    upstreamMs: 3,
    ...over,
  } as unknown as Outcome;
}

const rowCount = () => (services.db.prepare('SELECT COUNT(*) AS n FROM usage_log').get() as { n: number }).n;

function captureEvents(): { events: AnyRouterEvent[]; stop: () => void } {
  const events: AnyRouterEvent[] = [];
  const stop = services.events.onAny((e) => void events.push(e));
  return { events, stop };
}

describe('queue and flush', () => {
  it('keeps rows in memory until a flush writes them in one go', async () => {
    for (let i = 0; i < 5; i++) recordOutcome(services, outcome());
    expect(rowCount()).toBe(0);
    expect(services.usage.stats().queued).toBe(5);
    expect(await services.usage.flush()).toBe(5);
    expect(rowCount()).toBe(5);
    const row = services.db.prepare('SELECT * FROM usage_log LIMIT 1').get() as Record<string, unknown>;
    expect(row).toMatchObject({ provider: 'openai', model: 'gpt-4o', requested_model: 'openai/gpt-4o', api_key_id: 'key-1', connection_id: 'conn-1', tokens_in: 10, tokens_out: 5, status: 200, estimated: 0, streamed: 0 });
    expect(row.cost_usd).toBeCloseTo((10 * 2.5 + 5 * 10) / 1e6, 12);
  });

  it('drops the oldest rows when the bound is hit, counts and logs it', async () => {
    const lines: string[] = [];
    const log = new Logger();
    log.warn = (msg: string, data?: Record<string, unknown>) => void lines.push(`${msg} ${JSON.stringify(data)}`);
    const small = new UsageService({ db: services.db, settings: services.settings, events: services.events, log, capacity: 3, flushIntervalMs: 60_000 });
    try {
      const traces: string[] = [];
      for (let i = 0; i < 5; i++) {
        const o = outcome();
        traces.push(o.traceId);
        small.recordOutcome(o);
      }
      expect(small.stats()).toMatchObject({ queued: 3, dropped: 2 });
      expect(await small.flush()).toBe(3);
      const stored = (services.db.prepare('SELECT trace_id FROM usage_log ORDER BY id').all() as Array<{ trace_id: string }>).map((r) => r.trace_id);
      expect(stored).toEqual(traces.slice(2));
      expect(lines.some((l) => /dropped/.test(l) && /"dropped":2/.test(l))).toBe(true);
    } finally {
      small.close();
    }
  });

  it('flushes by itself once a batch is full', async () => {
    const small = new UsageService({ db: services.db, settings: services.settings, events: services.events, log: new Logger(), batchSize: 4, flushIntervalMs: 60_000 });
    try {
      for (let i = 0; i < 4; i++) small.recordOutcome(outcome());
      expect(rowCount()).toBe(0);
      await new Promise((r) => setImmediate(r));
      expect(rowCount()).toBe(4);
    } finally {
      small.close();
    }
  });

  it('close() writes what is queued (graceful stop)', () => {
    const other = new UsageService({ db: services.db, settings: services.settings, events: services.events, log: new Logger(), flushIntervalMs: 60_000 });
    for (let i = 0; i < 3; i++) other.recordOutcome(outcome());
    other.close();
    expect(rowCount()).toBe(3);
    other.recordOutcome(outcome());
    expect(other.stats().queued).toBe(0);
  });

  it('stores request headers sanitized: no control characters, 256 characters at most', async () => {
    recordOutcome(
      services,
      outcome({ client: { userAgent: `evil\r\nINFO forged${'u'.repeat(400)}`, forwardedFor: '198.51.100.4,\u0000 10.0.0.1\n' } }),
    );
    await services.usage.flush();
    const row = services.db.prepare('SELECT user_agent, forwarded_for FROM usage_log').get() as { user_agent: string; forwarded_for: string };
    expect(row.user_agent).toMatch(/^evilINFO forgedu+$/);
    expect(row.user_agent).toHaveLength(256);
    expect(row.forwarded_for).toBe('198.51.100.4, 10.0.0.1');
  });

  it('recordOutcome never throws, even for a malformed outcome', () => {
    expect(() => recordOutcome(services, {} as Outcome)).not.toThrow();
  });

  it('does nothing when disabled (ROUTER_USAGE_DISABLED=1)', () => {
    const off = new UsageService({ db: services.db, settings: services.settings, events: services.events, log: new Logger(), enabled: false });
    off.recordOutcome(outcome());
    expect(off.stats().queued).toBe(0);
    off.close();
  });
});

describe('events', () => {
  it('request.completed carries the spec shape', () => {
    const { events, stop } = captureEvents();
    const o = outcome({ usage: { inputTokens: 1000, outputTokens: 100 } });
    recordOutcome(services, o);
    stop();
    expect(events).toEqual([
      {
        event: 'request.completed',
        timestamp: expect.any(String),
        data: { trace_id: o.traceId, api_key_id: 'key-1', provider: 'openai', provider_id: 'openai', model: 'openai/gpt-4o', status: 200, tokens_in: 1000, tokens_out: 100, cost_usd: (1000 * 2.5 + 100 * 10) / 1e6, cost_source: 'computed', price_version: 'router@2026-11' },
      },
    ]);
  });

  it('request.failed waits until the request can make no further attempt, and counts attempts', async () => {
    const tracker = services.usage.inflight;
    const { events, stop } = captureEvents();
    tracker.attached = true;
    try {
      // A proxied HTTP request is open; its attempts start after it.
      const res = new EventEmitter() as never as import('node:http').ServerResponse;
      tracker.track({ url: '/v1/chat/completions' } as never, res);
      const t0 = performance.now();
      recordOutcome(services, outcome({ traceId: 'fail-1', t0, status: 503, error: 'upstream down', usage: undefined }));
      recordOutcome(services, outcome({ traceId: 'fail-1', t0, status: 502, error: '[ECONNRESET]: reset', usage: undefined }));
      await new Promise((r) => setTimeout(r, 20));
      expect(events.filter((e) => e.event === 'request.failed')).toEqual([]);
      (res as unknown as EventEmitter).emit('close');
      await new Promise((r) => setTimeout(r, 20));
      expect(events.filter((e) => e.event === 'request.failed').map((e) => e.data)).toEqual([
        { trace_id: 'fail-1', api_key_id: 'key-1', provider: 'openai', provider_id: 'openai', model: 'openai/gpt-4o', status: 502, error_code: 'bad_gateway', error_message: '[ECONNRESET]: reset', attempts: 2 },
      ]);
    } finally {
      tracker.attached = false;
      stop();
    }
  });

  it('a failed attempt followed by a successful one is not a failed request', async () => {
    const tracker = services.usage.inflight;
    const { events, stop } = captureEvents();
    tracker.attached = true;
    try {
      const res = new EventEmitter() as never as import('node:http').ServerResponse;
      tracker.track({ url: '/v1/messages' } as never, res);
      const t0 = performance.now();
      recordOutcome(services, outcome({ traceId: 'failover-1', t0, status: 429, error: 'rate limited', usage: undefined }));
      recordOutcome(services, outcome({ traceId: 'failover-1', t0 }));
      (res as unknown as EventEmitter).emit('close');
      await new Promise((r) => setTimeout(r, 20));
      expect(events.map((e) => e.event)).toEqual(['request.completed']);
    } finally {
      tracker.attached = false;
      stop();
    }
  });
});

describe('estimation', () => {
  it('estimates a reply without usage off the request path and marks the row', async () => {
    const { events, stop } = captureEvents();
    const content = 'Count the tokens of this sentence, please.';
    const o = outcome({
      usage: {},
      streamed: true,
      call: { clientFormat: 'anthropic', raw: { model: 'anthropic/claude-haiku-4-5', max_tokens: 5, system: 'Be brief.', messages: [{ role: 'user', content }] }, model: 'anthropic/claude-haiku-4-5', stream: true, endpoint: '/v1/messages' },
      target: { provider: { id: 'anthropic' }, model: 'claude-haiku-4-5', publicModel: 'anthropic/claude-haiku-4-5' } as never,
      outputText: 'A short answer.',
    });
    recordOutcome(services, o);
    // Nothing was recorded synchronously: the estimate comes later.
    expect(services.usage.stats()).toMatchObject({ queued: 0, estimating: 1 });
    expect(events).toEqual([]);
    await services.usage.settle();
    stop();
    await services.usage.flush();
    const row = services.db.prepare('SELECT * FROM usage_log WHERE trace_id = ?').get(o.traceId) as Record<string, number>;
    const expectedIn = countTokens(`Be brief.\n${content}`) + 3;
    expect(row).toMatchObject({ estimated: 1, streamed: 1, tokens_in: expectedIn, tokens_out: countTokens('A short answer.') });
    expect(row.cost_usd).toBeCloseTo((expectedIn * 1 + row.tokens_out! * 5) / 1e6, 12);
    expect(events.map((e) => e.event)).toEqual(['request.completed']);
  });

  it('close() counts pending estimations with the character heuristic so no row is lost', () => {
    const other = new UsageService({ db: services.db, settings: services.settings, events: services.events, log: new Logger(), flushIntervalMs: 60_000 });
    other.recordOutcome(outcome({ usage: undefined, call: { clientFormat: 'openai-chat', raw: { messages: [{ role: 'user', content: 'x'.repeat(400) }] }, model: 'openai/gpt-4o', stream: false, endpoint: '/v1/chat/completions' } }));
    other.close();
    const row = services.db.prepare('SELECT tokens_in, estimated FROM usage_log').get() as { tokens_in: number; estimated: number };
    expect(row).toEqual({ tokens_in: 100 + 3, estimated: 1 });
  });

  it('the worker thread (built daemon) counts exactly like gpt-tokenizer', async () => {
    const est = new TokenEstimator(new URL('../../dist/daemon/usage/estimate-worker.js', import.meta.url));
    try {
      const texts = ['Hello, world!', 'The quick brown fox jumps over the lazy dog.'.repeat(50), ''];
      expect(await est.count(texts)).toEqual(texts.map((t) => (t ? countTokens(t) : 0)));
    } finally {
      est.close();
    }
  });

  it('long runs without whitespace are counted in linear time', async () => {
    const blob = 'x'.repeat(200_000);
    let n = 0;
    const ms = await cpuTimeOf(() => (n = countText(blob, countTokens)));
    expect(ms).toBeLessThan(2_000);
    expect(n).toBeGreaterThan(0);
  });
});

describe('retention', () => {
  const insertAt = (ts: number) =>
    services.db
      .prepare("INSERT INTO usage_log (ts, trace_id, endpoint, provider, model, status, latency_ms) VALUES (?, 't', '/v1/chat/completions', 'openai', 'gpt-4o', 200, 1)")
      .run(ts);
  const DAY = 86_400_000;

  it('prunes rows older than usageRetentionDays (default 30) at start and when the setting changes', async () => {
    const now = Date.now();
    insertAt(now - 40 * DAY);
    insertAt(now - 31 * DAY);
    insertAt(now - 20 * DAY);
    insertAt(now - 1000);
    expect(services.settings.get().usageRetentionDays).toBe(30);
    // A service built on this database prunes at construction (daemon start).
    const started = new UsageService({ db: services.db, settings: services.settings, events: services.events, log: new Logger() });
    started.close();
    expect(rowCount()).toBe(2);
    await services.settings.update({ usageRetentionDays: 7 });
    try {
      expect(rowCount()).toBe(1);
    } finally {
      await services.settings.update({ usageRetentionDays: 30 });
    }
  });

  it('prunes in chunks, however many rows are old', async () => {
    const old = Date.now() - 90 * DAY;
    const insert = services.db.prepare("INSERT INTO usage_log (ts, trace_id, endpoint, provider, model, status, latency_ms) VALUES (?, 't', 'e', 'p', 'm', 200, 1)");
    services.db.transaction(() => {
      for (let i = 0; i < 12_000; i++) insert.run(old + i);
    })();
    expect(await services.usage.prune()).toBe(12_000);
    expect(rowCount()).toBe(0);
  });
});
