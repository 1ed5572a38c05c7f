import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { WebhookService } from '../../src/daemon/webhooks/service.js';
import { fakeResolver, startDaemon, startReceiver, type Receiver, type TestDaemon } from './helpers.js';
import { ALLOWED_URLS, BLOCKED_URLS } from './ssrf-table.js';

// The public-destination check is ON here (allowPrivateWebhookDestinations false), except where a test
// turns it on to prove the same request would otherwise reach the loopback receiver.
let d: TestDaemon;
let rx: Receiver;
let ws: WebhookService;

beforeAll(async () => {
  d = await startDaemon(false);
  rx = await startReceiver();
  // `hooks.example.com` looks public but resolves to the loopback receiver. The resolver is injected: no
  // real name reliably resolves to 127.0.0.1 on every machine (/etc/hosts names are localhost-style and
  // already refused by the static check, and public "resolves to 127.0.0.1" services need network).
  ws = d.useWebhooks({
    policy: { retryDelaysMs: [10, 10, 10], timeoutMs: 10_000 }, // the product's attempt timeout: a loopback answer can take seconds under load
    resolve: fakeResolver({
      'hooks.example.com': ['127.0.0.1'],
      'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
      'mapped.example.com': ['::ffff:127.0.0.1'],
      'meta.example.com': ['169.254.169.254'],
    }),
  });
});
afterAll(async () => {
  d?.close();
  await rx?.close();
});

async function withPrivateAllowed<T>(fn: () => Promise<T>): Promise<T> {
  await d.services.settings.update({ allowPrivateWebhookDestinations: true });
  try {
    return await fn();
  } finally {
    await d.services.settings.update({ allowPrivateWebhookDestinations: false });
  }
}

describe('create', () => {
  it.each(BLOCKED_URLS)('refuses %s (%s) with 400', async (url) => {
    for (const kind of ['custom', 'slack', 'discord']) {
      const res = await d.api('POST', '/api/webhooks', { url, kind });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('bad_request');
      expect(res.body.error.message).toMatch(/url/);
    }
  });

  it.each(ALLOWED_URLS)('accepts %s', async (url, kind) => {
    const res = await d.api('POST', '/api/webhooks', { url, kind });
    expect(res.status).toBe(201);
  });

  it('exempts telegram (its url is a chat id)', async () => {
    expect((await d.api('POST', '/api/webhooks', { url: '-100200300', kind: 'telegram' })).status).toBe(201);
  });
});

describe('update', () => {
  it.each(BLOCKED_URLS)('refuses %s (%s) with 400 and keeps the old url', async (url) => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: 'https://example.com/ok' });
    const res = await d.api('PUT', `/api/webhooks/${w.id}`, { url });
    expect(res.status).toBe(400);
    expect((await d.api('GET', `/api/webhooks/${w.id}`)).body.url).toBe('https://example.com/ok');
  });

  it.each(ALLOWED_URLS)('accepts %s', async (url, kind) => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: 'https://example.com/ok' });
    expect((await d.api('PUT', `/api/webhooks/${w.id}`, { url, kind })).status).toBe(200);
  });
});

describe('test endpoint', () => {
  it.each(BLOCKED_URLS.filter(([u]) => /^https?:\/\//.test(u)))('does not send to %s (%s)', async (url) => {
    // stored while private destinations were allowed, then the setting was turned off
    const id = await withPrivateAllowed(async () => {
      const res = await d.api('POST', '/api/webhooks', { url });
      return res.status === 201 ? (res.body.id as string) : ws.store.create({ url, kind: 'custom', events: ['*'] }).record.id;
    });
    const res = await d.api('POST', `/api/webhooks/${id}/test`);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ delivered: false, status: 0, responseBody: '' });
    expect(res.body.error).toMatch(/not (public|allowed|a valid URL)/);
  });

  it('blocks a webhook stored pointing at the loopback receiver, which it never reaches', async () => {
    const id = await withPrivateAllowed(async () => (await d.api('POST', '/api/webhooks', { url: rx.url })).body.id);
    const before = rx.requests.length;
    const res = await d.api('POST', `/api/webhooks/${id}/test`);
    expect(res.body).toEqual({ delivered: false, status: 0, responseBody: '', error: expect.stringMatching(/127\.0\.0\.1.*loopback/) });
    expect(rx.requests.length).toBe(before);
    await withPrivateAllowed(async () => {
      expect((await d.api('POST', `/api/webhooks/${id}/test`)).body.delivered).toBe(true);
    });
  });
});

describe('delivery-time check on the resolved address', () => {
  it.each(['hooks', 'mixed', 'mapped', 'meta'])('blocks %s.example.com (public-looking, resolves to a private address)', async (name) => {
    const url = `http://${name}.example.com:${rx.port}/hook`;
    const created = await d.api('POST', '/api/webhooks', { url });
    expect(created.status).toBe(201); // the name itself is fine; only its addresses are not
    const before = rx.requests.length;
    const res = await d.api('POST', `/api/webhooks/${created.body.id}/test`);
    expect(res.body).toMatchObject({ delivered: false, status: 0, responseBody: '' });
    expect(res.body.error).toMatch(/resolves to .* not public/);
    expect(rx.requests.length).toBe(before);
    await d.api('DELETE', `/api/webhooks/${created.body.id}`);
  });

  it('blocks event deliveries too: one attempt (no retry), failure +1, last_status 0', async () => {
    for (const w of ws.store.list()) ws.store.remove(w.id);
    const { body: w } = await d.api('POST', '/api/webhooks', { url: `http://hooks.example.com:${rx.port}/hook` });
    const attempts: number[] = [];
    const orig = ws.store.recordAttempt.bind(ws.store);
    ws.store.recordAttempt = (id, status, at) => (attempts.push(status), orig(id, status, at));
    const before = rx.requests.length;
    d.services.events.emit('request.completed', {
      trace_id: 't', api_key_id: 'k', provider: 'p', model: 'm', status: 200, tokens_in: 1, tokens_out: 1, cost_usd: 0, cost_source: 'computed', price_version: null,
    });
    await ws.idle();
    ws.store.recordAttempt = orig;
    expect(attempts).toEqual([0]);
    expect(rx.requests.length).toBe(before);
    expect((await d.api('GET', `/api/webhooks/${w.id}`)).body).toMatchObject({ failure_count: 1, last_status: 0 });
  });

  it('with private destinations allowed, the same name reaches the receiver through the resolved address', async () => {
    const { body: w } = await d.api('POST', '/api/webhooks', { url: `http://hooks.example.com:${rx.port}/hook` });
    await withPrivateAllowed(async () => {
      const res = await d.api('POST', `/api/webhooks/${w.id}/test`);
      expect(res.body).toMatchObject({ delivered: true, status: 200 });
    });
    expect(rx.requests.at(-1)!.headers.host).toBe(`hooks.example.com:${rx.port}`);
  });
});
