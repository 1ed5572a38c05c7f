import { randomUUID } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startDaemon, startReceiver, FAST, type Receiver, type TestDaemon } from './helpers.js';

let d: TestDaemon;
let rx: Receiver;
beforeEach(async () => {
  d = await startDaemon(true);
  d.useWebhooks({ policy: FAST });
  rx = await startReceiver();
});
afterEach(async () => {
  d?.close();
  await rx?.close();
});

const FIELDS = ['id', 'url', 'kind', 'events', 'enabled', 'description', 'created_at', 'last_triggered_at', 'last_status', 'failure_count', 'secret'];

describe('webhook CRUD', () => {
  it('creates with defaults and a generated secret shown whole once', async () => {
    const res = await d.api('POST', '/api/webhooks', { url: rx.url });
    expect(res.status).toBe(201);
    const w = res.body;
    expect(Object.keys(w).sort()).toEqual([...FIELDS].sort());
    expect(w.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(w).toMatchObject({ url: rx.url, kind: 'custom', events: ['*'], enabled: 1, description: null, last_triggered_at: null, last_status: null, failure_count: 0 });
    expect(w.secret).toMatch(/^whsec_[0-9a-f]{48}$/);
    expect(new Date(w.created_at).toISOString()).toBe(w.created_at);

    const masked = `${w.secret.slice(0, 10)}...`;
    const list = await d.api('GET', '/api/webhooks');
    expect(list.status).toBe(200);
    expect(list.body.webhooks).toHaveLength(1);
    expect(list.body.webhooks[0].secret).toBe(masked);
    const one = await d.api('GET', `/api/webhooks/${w.id}`);
    expect(one.body.secret).toBe(masked);
    expect(one.body).toMatchObject({ id: w.id, url: rx.url });
  });

  it('keeps the secret encrypted at rest', async () => {
    const { body } = await d.api('POST', '/api/webhooks', { url: rx.url, secret: 'my-own-secret-value-123' });
    expect(body.secret).toBe('my-own-secret-value-123');
    const row = d.services.db.prepare('SELECT * FROM webhooks WHERE id = ?').get(body.id) as Record<string, string>;
    expect(JSON.stringify(row)).not.toContain('my-own-secret-value-123');
    expect(row.secret_enc).toMatch(/^v1\./);
  });

  it('creates with every field', async () => {
    const res = await d.api('POST', '/api/webhooks', {
      url: rx.url,
      kind: 'discord',
      events: ['request.failed', 'provider.error', 'request.failed'],
      description: 'ops channel',
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ kind: 'discord', events: ['request.failed', 'provider.error'], description: 'ops channel' });
  });

  it.each([
    [{}, 'url'],
    [{ url: '' }, 'url'],
    [{ url: `https://example.com/${'a'.repeat(2000)}` }, 'url'],
    [{ url: 'https://example.com/', kind: 'teams' }, 'kind'],
    [{ url: 'https://example.com/', events: [] }, 'events'],
    [{ url: 'https://example.com/', events: 'request.completed' }, 'events'],
    [{ url: 'https://example.com/', secret: 'short' }, 'secret'],
    [{ url: 'https://example.com/', unknown: 1 }, 'body'],
    [{ url: 'not a url' }, 'url'],
    [{ url: 'https://example.com/', kind: 'telegram' }, 'url'],
  ])('rejects %j with a 400 standard body', async (payload, field) => {
    const res = await d.api('POST', '/api/webhooks', payload);
    expect(res.status).toBe(400);
    expect(res.body.error).toMatchObject({ type: 'invalid_request_error', code: 'bad_request' });
    expect(res.body.error.message).toContain(field === 'body' ? 'Invalid' : field);
  });

  it('accepts a url of exactly 2000 characters', async () => {
    const url = `https://example.com/${'a'.repeat(2000 - 20)}`;
    expect(url).toHaveLength(2000);
    expect((await d.api('POST', '/api/webhooks', { url })).status).toBe(201);
  });

  it('accepts telegram chat ids without a URL check', async () => {
    for (const chat of ['-1001234567890', '123456', '@my_channel']) {
      const res = await d.api('POST', '/api/webhooks', { url: chat, kind: 'telegram' });
      expect(res.status).toBe(201);
    }
  });

  it('404s unknown and non-uuid ids on every route', async () => {
    for (const id of [randomUUID(), 'not-a-uuid', '1']) {
      expect((await d.api('GET', `/api/webhooks/${id}`)).status).toBe(404);
      expect((await d.api('PUT', `/api/webhooks/${id}`, { description: 'x' })).status).toBe(404);
      expect((await d.api('DELETE', `/api/webhooks/${id}`)).status).toBe(404);
      const t = await d.api('POST', `/api/webhooks/${id}/test`);
      expect(t.status).toBe(404);
      expect(t.body.error.code).toBe('not_found');
    }
  });

  it('updates any field, including a new secret; the masked echo keeps the secret', async () => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: rx.url });
    const upd = await d.api('PUT', `/api/webhooks/${w.id}`, { events: ['quota.exceeded'], description: 'd', kind: 'slack' });
    expect(upd.status).toBe(200);
    expect(upd.body).toMatchObject({ events: ['quota.exceeded'], description: 'd', kind: 'slack', secret: `${w.secret.slice(0, 10)}...` });
    // full-object echo of a GET reply: read-only fields and the masked secret are ignored
    const echo = await d.api('PUT', `/api/webhooks/${w.id}`, { ...upd.body, description: 'again' });
    expect(echo.status).toBe(200);
    expect(d.services.webhooks.store.secretOf(w.id)).toBe(w.secret);
    const rotated = await d.api('PUT', `/api/webhooks/${w.id}`, { secret: 'whsec_rotated_secret_0001' });
    expect(rotated.body.secret).toBe('whsec_rota...');
    expect(d.services.webhooks.store.secretOf(w.id)).toBe('whsec_rotated_secret_0001');
    expect((await d.api('PUT', `/api/webhooks/${w.id}`, { secret: 'tiny' })).status).toBe(400);
    expect((await d.api('PUT', `/api/webhooks/${w.id}`, { url: '' })).status).toBe(400);
    expect((await d.api('PUT', `/api/webhooks/${w.id}`, { nope: true })).status).toBe(400);
    const cleared = await d.api('PUT', `/api/webhooks/${w.id}`, { description: null });
    expect(cleared.body.description).toBeNull();
  });

  it('switching kind re-checks the url against the new kind', async () => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: '-100123', kind: 'telegram' });
    expect((await d.api('PUT', `/api/webhooks/${w.id}`, { kind: 'custom' })).status).toBe(400);
    expect((await d.api('PUT', `/api/webhooks/${w.id}`, { kind: 'custom', url: rx.url })).status).toBe(200);
  });

  it('disables and re-enables by PUT (boolean or 0/1); re-enabling resets failure_count', async () => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: rx.url });
    rx.reply({ status: 404 });
    for (let i = 0; i < 10; i++) {
      d.services.events.emit('test.ping', { message: 'm', webhookId: w.id });
      await d.services.webhooks.idle();
    }
    let got = await d.api('GET', `/api/webhooks/${w.id}`);
    expect(got.body).toMatchObject({ enabled: 0, failure_count: 10, last_status: 404 });
    const re = await d.api('PUT', `/api/webhooks/${w.id}`, { enabled: true });
    expect(re.body).toMatchObject({ enabled: 1, failure_count: 0 });
    rx.reply({ status: 200 });
    d.services.events.emit('test.ping', { message: 'm', webhookId: w.id });
    await d.services.webhooks.idle();
    got = await d.api('GET', `/api/webhooks/${w.id}`);
    expect(got.body).toMatchObject({ enabled: 1, failure_count: 0, last_status: 200 });
    expect((await d.api('PUT', `/api/webhooks/${w.id}`, { enabled: 0 })).body.enabled).toBe(0);
    expect((await d.api('PUT', `/api/webhooks/${w.id}`, { enabled: 1 })).body.enabled).toBe(1);
    expect((await d.api('PUT', `/api/webhooks/${w.id}`, { enabled: 'yes' })).status).toBe(400);
  });

  it('deletes', async () => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: rx.url });
    const del = await d.api('DELETE', `/api/webhooks/${w.id}`);
    expect(del.status).toBe(204);
    expect((await d.api('GET', `/api/webhooks/${w.id}`)).status).toBe(404);
    expect((await d.api('GET', '/api/webhooks')).body.webhooks).toEqual([]);
  });

  it('requires management auth', async () => {
    const { buildApp } = await import('../../src/daemon/boot.js');
    const app = buildApp(d.services);
    const res = await app.request('/api/webhooks', {}, { remoteAddress: '127.0.0.1' } as never);
    expect(res.status).toBe(401);
  });

  it('appears in the OpenAPI document with the management tier', async () => {
    const res = await d.api('GET', '/api/openapi.json');
    expect(Object.keys(res.body.paths)).toEqual(expect.arrayContaining(['/api/webhooks', '/api/webhooks/{id}', '/api/webhooks/{id}/test', '/api/webhooks/{id}/deliveries']));
    const route = d.services.routeTable.filter((r) => r.path.startsWith('/api/webhooks'));
    expect(route).toHaveLength(7);
    expect(new Set(route.map((r) => r.tier))).toEqual(new Set(['management']));
  });

  it('persists across a restart of the services', async () => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: rx.url });
    const { WebhookStore } = await import('../../src/daemon/webhooks/store.js');
    const again = new WebhookStore(d.services.db, d.services.paths.secretKey);
    expect(again.get(w.id)).toMatchObject({ url: rx.url, events: ['*'], enabled: 1 });
    expect(again.secretOf(w.id)).toBe(w.secret);
  });
});

describe('test endpoint', () => {
  it('sends one signed test.ping and returns the reply', async () => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: rx.url, events: ['quota.exceeded'] });
    rx.reply({ status: 200, body: 'pong' });
    const res = await d.api('POST', `/api/webhooks/${w.id}/test`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ delivered: true, status: 200, responseBody: 'pong', error: '' });
    expect(rx.requests).toHaveLength(1);
    const sent = JSON.parse(rx.requests[0]!.body);
    expect(sent.event).toBe('test.ping');
    expect(sent.data).toEqual({ message: expect.any(String), webhookId: w.id });
    expect(rx.requests[0]!.headers['x-webhook-event']).toBe('test.ping');
    const after = (await d.api('GET', `/api/webhooks/${w.id}`)).body;
    expect(after.last_status).toBe(200);
    expect(after.last_triggered_at).not.toBeNull();
  });

  it('captures only the first 2048 bytes of the reply', async () => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: rx.url });
    rx.reply({ status: 200, body: 'x'.repeat(2000) + 'y'.repeat(100_000) });
    const res = await d.api('POST', `/api/webhooks/${w.id}/test`);
    expect(res.body.responseBody).toHaveLength(2048);
    expect(res.body.responseBody).toBe('x'.repeat(2000) + 'y'.repeat(48));
  });

  it('does not retry: one attempt on 500, and reports it', async () => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: rx.url });
    rx.reply({ status: 500, body: 'boom' });
    const res = await d.api('POST', `/api/webhooks/${w.id}/test`);
    expect(res.body).toEqual({ delivered: false, status: 500, responseBody: 'boom', error: 'receiver replied 500' });
    await new Promise((r) => setTimeout(r, 100));
    expect(rx.requests).toHaveLength(1);
    // a manual test is an attempt, not part of the failure streak
    expect((await d.api('GET', `/api/webhooks/${w.id}`)).body).toMatchObject({ last_status: 500, failure_count: 0 });
  });

  it('reports a network error as status 0', async () => {
    const dead = await startReceiver();
    await dead.close();
    const { body: w } = await d.api('POST', '/api/webhooks', { url: dead.url });
    const res = await d.api('POST', `/api/webhooks/${w.id}/test`);
    expect(res.body).toMatchObject({ delivered: false, status: 0, responseBody: '' });
    expect(res.body.error).toMatch(/network error/);
  });

  it('works on a disabled webhook (checking a receiver before re-enabling it)', async () => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: rx.url });
    await d.api('PUT', `/api/webhooks/${w.id}`, { enabled: false });
    expect((await d.api('POST', `/api/webhooks/${w.id}/test`)).body.delivered).toBe(true);
  });
});

describe('delivery history', () => {
  it('lists each attempt newest first (retries and tests included), 404 for an unknown webhook, gone with the webhook', async () => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: rx.url, events: ['provider.error'] });
    expect((await d.api('GET', `/api/webhooks/${w.id}/deliveries`)).body).toEqual({ deliveries: [] });
    rx.reply({ status: 503 }, { status: 200 });
    d.services.events.emit('provider.error', { provider: 'openai', status: 503, consecutive_failures: 3, circuit_state: 'open' });
    await d.services.webhooks.idle();
    await d.api('POST', `/api/webhooks/${w.id}/test`);
    const { status, body } = await d.api('GET', `/api/webhooks/${w.id}/deliveries`);
    expect(status).toBe(200);
    expect(body.deliveries).toMatchObject([
      { event: 'test.ping', attempt: 1, status: 200, ok: true, error: '', test: true },
      { event: 'provider.error', attempt: 2, status: 200, ok: true, test: false },
      { event: 'provider.error', attempt: 1, status: 503, ok: false, test: false },
    ]);
    expect(body.deliveries[2].error).not.toBe('');
    expect(new Date(body.deliveries[0].at).toISOString()).toBe(body.deliveries[0].at);
    expect((await d.api('GET', `/api/webhooks/${randomUUID()}/deliveries`)).status).toBe(404);
    expect((await d.api('DELETE', `/api/webhooks/${w.id}`)).status).toBe(204);
    expect(d.services.webhooks.deliveries(w.id)).toEqual([]);
  });
});
