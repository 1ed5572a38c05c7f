import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { WebhookService } from '../../src/daemon/webhooks/service.js';
import { FAST, startDaemon, startReceiver, type Receiver, type TestDaemon } from './helpers.js';

const completed = {
  trace_id: 'trace-1',
  api_key_id: 'key-1',
  provider: 'openai',
  model: 'gpt-4o',
  status: 200,
  tokens_in: 12,
  tokens_out: 34,
  cost_usd: 0.0021,
  cost_source: 'computed' as const,
  price_version: 'router@2026-11',
};

let d: TestDaemon;
let rx: Receiver;
let ws: WebhookService;

beforeEach(async () => {
  d = await startDaemon(true); // loopback receivers allowed
  ws = d.useWebhooks({ policy: FAST });
  rx = await startReceiver();
});
afterEach(async () => {
  d?.close();
  await rx?.close();
});

async function until(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > end) throw new Error('condition not reached');
    await new Promise((r) => setTimeout(r, 5));
  }
}

function create(url = rx.url, events: string[] = ['*']) {
  return ws.store.create({ url, kind: 'custom', events });
}

describe('delivery', () => {
  it('POSTs {event, timestamp, data} with the exact headers and a verifiable signature', async () => {
    const { record, secret } = create();
    d.services.events.emit('request.completed', completed);
    await ws.idle();
    expect(rx.requests).toHaveLength(1);
    const req = rx.requests[0]!;
    expect(req.method).toBe('POST');
    expect(req.path).toBe('/hook');
    const body = JSON.parse(req.body);
    expect(Object.keys(body)).toEqual(['event', 'timestamp', 'data']);
    expect(body.event).toBe('request.completed');
    expect(body.data).toEqual({ ...completed, provider_id: completed.provider });
    expect(new Date(body.timestamp).toISOString()).toBe(body.timestamp);
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['user-agent']).toBe('Service-Webhook/1.0');
    expect(req.headers['x-webhook-event']).toBe('request.completed');
    expect(req.headers['x-webhook-timestamp']).toBe(body.timestamp);
    const expected = `sha256=${createHmac('sha256', secret).update(req.body).digest('hex')}`;
    expect(req.headers['x-webhook-signature']).toBe(expected);
    const after = ws.store.get(record.id)!;
    expect(after.last_status).toBe(200);
    expect(after.failure_count).toBe(0);
    expect(after.last_triggered_at).not.toBeNull();
  });

  it('fans out only to enabled webhooks subscribed by name or *, ignoring unknown names', async () => {
    const all = create(rx.url + '?w=all', ['*']);
    const named = create(rx.url + '?w=named', ['provider.error', 'no.such.event']);
    const other = create(rx.url + '?w=other', ['quota.exceeded']);
    const off = create(rx.url + '?w=off', ['*']);
    ws.store.update(off.record.id, { enabled: false });
    d.services.events.emit('provider.error', { provider: 'openai', status: 503, consecutive_failures: 3, circuit_state: 'open' });
    d.services.events.emit('combo.switched', { combo: 'c', from: null, to: 'openai/gpt-4o', reason: 'failover' });
    await ws.idle();
    const seen = rx.requests.map((r) => `${r.path.split('=')[1]}:${r.headers['x-webhook-event']}`).sort();
    expect(seen).toEqual(['all:combo.switched', 'all:provider.error', 'named:provider.error']);
    expect(ws.store.get(other.record.id)!.last_triggered_at).toBeNull();
    void all;
    void named;
  });

  it('retries 5xx three times with the same body, then counts one failure', async () => {
    const { record } = create();
    rx.reply({ status: 503 });
    d.services.events.emit('request.completed', completed);
    await ws.idle();
    expect(rx.requests).toHaveLength(4);
    expect(new Set(rx.requests.map((r) => r.body)).size).toBe(1);
    expect(new Set(rx.requests.map((r) => r.headers['x-webhook-signature'])).size).toBe(1);
    const rec = ws.store.get(record.id)!;
    expect(rec.failure_count).toBe(1);
    expect(rec.last_status).toBe(503);
  });

  it('succeeds on a retry after 5xx and resets failure_count to 0', async () => {
    const { record } = create();
    rx.reply({ status: 500 });
    d.services.events.emit('request.completed', completed);
    await ws.idle();
    expect(ws.store.get(record.id)!.failure_count).toBe(1);
    rx.reply({ status: 502 }, { status: 200 });
    d.services.events.emit('request.completed', completed);
    await ws.idle();
    expect(rx.requests).toHaveLength(6);
    const rec = ws.store.get(record.id)!;
    expect(rec.failure_count).toBe(0);
    expect(rec.last_status).toBe(200);
  });

  it.each([400, 401, 404, 410, 422, 429])('does not retry %i: one attempt, failure +1', async (status) => {
    const { record } = create();
    rx.reply({ status });
    d.services.events.emit('request.completed', completed);
    await ws.idle();
    expect(rx.requests).toHaveLength(1);
    expect(ws.store.get(record.id)).toMatchObject({ failure_count: 1, last_status: status });
  });

  it.each([301, 302, 307, 308])('does not follow or retry a %i redirect', async (status) => {
    const target = await startReceiver();
    try {
      const { record } = create();
      rx.reply({ status, headers: { location: target.url } });
      d.services.events.emit('request.completed', completed);
      await ws.idle();
      expect(rx.requests).toHaveLength(1);
      expect(target.requests).toHaveLength(0);
      expect(ws.store.get(record.id)).toMatchObject({ failure_count: 1, last_status: status });
    } finally {
      await target.close();
    }
  });

  it('retries network errors and records last_status 0', async () => {
    const dead = await startReceiver();
    const url = dead.url;
    await dead.close(); // nothing listens there now
    const { record } = create(url);
    const seen: number[] = [];
    const origRecord = ws.store.recordAttempt.bind(ws.store);
    ws.store.recordAttempt = (id, status, at) => (seen.push(status), origRecord(id, status, at));
    d.services.events.emit('request.completed', completed);
    await ws.idle();
    expect(seen).toEqual([0, 0, 0, 0]);
    expect(ws.store.get(record.id)).toMatchObject({ failure_count: 1, last_status: 0 });
  });

  it('times out a slow attempt (per-attempt timeout) and treats it as a network error', async () => {
    ws = d.useWebhooks({ policy: { retryDelaysMs: [10], timeoutMs: 150 } });
    const { record } = create();
    rx.reply({ status: 200, delayMs: 1000 });
    const t = Date.now();
    d.services.events.emit('request.completed', completed);
    await ws.idle();
    expect(Date.now() - t).toBeLessThan(900);
    expect(rx.requests).toHaveLength(2);
    expect(ws.store.get(record.id)).toMatchObject({ failure_count: 1, last_status: 0 });
  });

  it('updates last_triggered_at on every attempt', async () => {
    const { record } = create();
    const stamps: string[] = [];
    const orig = ws.store.recordAttempt.bind(ws.store);
    ws.store.recordAttempt = (id, status, at) => (stamps.push(at), orig(id, status, at));
    rx.reply({ status: 500 });
    d.services.events.emit('request.completed', completed);
    await ws.idle();
    expect(stamps).toHaveLength(4);
    expect(ws.store.get(record.id)!.last_triggered_at).toBe(stamps[3]);
    expect(stamps[3]! > stamps[0]!).toBe(true);
  });

  it('disables a webhook after the fan-out in which failure_count reaches 10; others keep going', async () => {
    const bad = create(rx.url + '?bad');
    const good = await startReceiver();
    try {
      const ok = create(good.url);
      rx.reply({ status: 400 });
      for (let i = 1; i <= 9; i++) {
        d.services.events.emit('request.completed', completed);
        await ws.idle();
        expect(ws.store.get(bad.record.id)).toMatchObject({ enabled: 1, failure_count: i });
      }
      d.services.events.emit('request.completed', completed);
      await ws.idle();
      expect(ws.store.get(bad.record.id)).toMatchObject({ enabled: 0, failure_count: 10 });
      d.services.events.emit('request.completed', completed);
      await ws.idle();
      expect(rx.requests).toHaveLength(10); // disabled: no 11th delivery
      expect(good.requests).toHaveLength(11);
      expect(ws.store.get(ok.record.id)).toMatchObject({ enabled: 1, failure_count: 0 });
      // persisted, not just in memory
      const row = d.services.db.prepare('SELECT enabled, failure_count FROM webhooks WHERE id = ?').get(bad.record.id);
      expect(row).toEqual({ enabled: 0, failure_count: 10 });
    } finally {
      await good.close();
    }
  });

  it('a slow receiver delays neither the emitter nor another receiver', async () => {
    const slow = await startReceiver();
    try {
      slow.reply({ status: 200, delayMs: 1500 });
      const s = create(slow.url);
      const f = create(rx.url);
      const t0 = Date.now();
      const p0 = performance.now();
      d.services.events.emit('request.completed', completed);
      expect(performance.now() - p0).toBeLessThan(20); // the emitter returned without waiting for anyone
      await until(() => ws.store.get(f.record.id)!.last_status === 200);
      // the fast receiver's delivery completed while the slow one was still holding its reply (its status is
      // not in yet); measured by that order, not by a wall time a loaded machine stretches
      expect(ws.store.get(s.record.id)!.last_status).toBeNull();
      await ws.idle();
      expect(ws.store.get(s.record.id)!.last_status).toBe(200);
      expect(Date.now() - t0).toBeGreaterThanOrEqual(1400);
    } finally {
      await slow.close();
    }
  });

  it('a failing receiver does not affect another receiver of the same event', async () => {
    const good = await startReceiver();
    try {
      rx.reply({ status: 500 });
      const bad = create(rx.url);
      const ok = create(good.url);
      d.services.events.emit('request.failed', {
        trace_id: 't',
        api_key_id: null,
        provider: 'openai',
        model: 'gpt-4o',
        status: 502,
        error_code: 'bad_gateway',
        error_message: 'upstream failed',
        attempts: 3,
      });
      await ws.idle();
      expect(good.requests).toHaveLength(1);
      expect(ws.store.get(ok.record.id)!.failure_count).toBe(0);
      expect(ws.store.get(bad.record.id)!.failure_count).toBe(1);
    } finally {
      await good.close();
    }
  });

  it('stops retrying when the webhook is deleted meanwhile, and records nothing for it', async () => {
    ws = d.useWebhooks({ policy: { retryDelaysMs: [200, 200, 200], timeoutMs: 2000 } });
    const { record } = create();
    rx.reply({ status: 500 });
    d.services.events.emit('request.completed', completed);
    await rx.waitFor(1);
    ws.store.remove(record.id);
    await ws.idle();
    expect(rx.requests).toHaveLength(1);
  });

  it('close() ends waits between retries promptly', async () => {
    ws = d.useWebhooks({ policy: { retryDelaysMs: [5000], timeoutMs: 2000 } });
    create();
    rx.reply({ status: 500 });
    d.services.events.emit('request.completed', completed);
    await rx.waitFor(1);
    const t = Date.now();
    ws.close();
    await ws.idle();
    expect(Date.now() - t).toBeLessThan(1000);
    expect(rx.requests).toHaveLength(1);
  });
});
