import { createHmac } from 'node:crypto';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { AnyRouterEvent } from '../../src/daemon/events/types.js';
import { buildPayload, summarize } from '../../src/daemon/webhooks/format.js';
import { FAST, startDaemon, startReceiver, type Receiver, type TestDaemon } from './helpers.js';

const completed = {
  trace_id: 'tr-9',
  api_key_id: 'key-1',
  provider: 'anthropic',
  model: 'claude-sonnet-4',
  status: 200,
  tokens_in: 1200,
  tokens_out: 340,
  cost_usd: 0.0123,
  cost_source: 'computed' as const,
  price_version: 'router@2026-11',
};

let d: TestDaemon;
let rx: Receiver;
beforeEach(async () => {
  d = await startDaemon(true);
  rx = await startReceiver();
});
afterEach(async () => {
  delete process.env.ROUTER_TELEGRAM_API_BASE;
  d?.close();
  await rx?.close();
});

describe('kind payloads over HTTP', () => {
  it('slack gets {text} with a readable summary, signed like every delivery', async () => {
    d.useWebhooks({ policy: FAST });
    const { body: w } = await d.api('POST', '/api/webhooks', { url: rx.url, kind: 'slack' });
    d.services.events.emit('request.completed', completed);
    await d.services.webhooks.idle();
    const req = rx.requests[0]!;
    expect(JSON.parse(req.body)).toEqual({
      text: '[router] request.completed: anthropic/claude-sonnet-4 -> 200, 1200 in / 340 out tokens, $0.0123 (trace tr-9)',
    });
    expect(req.headers['content-type']).toBe('application/json');
    expect(req.headers['x-webhook-signature']).toBe(`sha256=${createHmac('sha256', w.secret).update(req.body).digest('hex')}`);
  });

  it('discord gets {content}; a 204 reply is success', async () => {
    d.useWebhooks({ policy: FAST });
    const { body: w } = await d.api('POST', '/api/webhooks', { url: rx.url, kind: 'discord' });
    rx.reply({ status: 204 });
    d.services.events.emit('provider.error', { provider: 'openai', status: 429, consecutive_failures: 4, circuit_state: 'open' });
    await d.services.webhooks.idle();
    expect(JSON.parse(rx.requests[0]!.body)).toEqual({
      content: '[router] provider.error: openai returned 429; 4 consecutive failures, circuit open',
    });
    expect(d.services.webhooks.store.get(w.id)).toMatchObject({ last_status: 204, failure_count: 0 });
  });

  it('telegram posts {chat_id, text} to <base>/bot<token>/sendMessage (base from ROUTER_TELEGRAM_API_BASE)', async () => {
    process.env.ROUTER_TELEGRAM_API_BASE = `http://127.0.0.1:${rx.port}/`;
    d.useWebhooks({ policy: FAST });
    const patched = await d.api('PATCH', '/api/settings', { telegramBotToken: '123456789:AAH-secret_token' });
    expect(patched.status).toBe(200);
    expect(patched.body.telegramBotToken).toBe('123456789:...');
    const { body: w } = await d.api('POST', '/api/webhooks', { url: '-1001234567890', kind: 'telegram' });
    rx.reply({ status: 200, body: '{"ok":true}' });
    const res = await d.api('POST', `/api/webhooks/${w.id}/test`);
    expect(res.body).toEqual({ delivered: true, status: 200, responseBody: '{"ok":true}', error: '' });
    const req = rx.requests[0]!;
    expect(req.path).toBe('/bot123456789:AAH-secret_token/sendMessage');
    expect(JSON.parse(req.body)).toEqual({ chat_id: '-1001234567890', text: `[router] test.ping: Test ping from router (webhook ${w.id})` });
  });

  it('telegram without a bot token fails with a clear error and no request', async () => {
    d.useWebhooks({ policy: FAST, telegramApiBase: `http://127.0.0.1:${rx.port}` });
    const { body: w } = await d.api('POST', '/api/webhooks', { url: '@channel_name', kind: 'telegram' });
    const res = await d.api('POST', `/api/webhooks/${w.id}/test`);
    expect(res.body).toMatchObject({ delivered: false, status: 0, responseBody: '' });
    expect(res.body.error).toMatch(/telegramBotToken is not set/);
    expect(rx.requests).toHaveLength(0);
  });

  it('telegram is exempt from the destination check (its API base may be local for tests)', async () => {
    await d.services.settings.update({ allowPrivateWebhookDestinations: false, telegramBotToken: '42:tok' });
    d.useWebhooks({ policy: FAST, telegramApiBase: `http://127.0.0.1:${rx.port}` });
    const { body: w } = await d.api('POST', '/api/webhooks', { url: '777', kind: 'telegram' });
    expect((await d.api('POST', `/api/webhooks/${w.id}/test`)).body.delivered).toBe(true);
  });
});

describe('settings: telegramBotToken', () => {
  it('is stored encrypted (never in plain text in the database); a plain value from before is encrypted at start', async () => {
    await import('../../src/daemon/settings-sections.js');
    const { SettingsStore } = await import('../../src/daemon/settings/store.js');
    const { SqlSettingsRepository } = await import('../../src/daemon/settings/sql-repository.js');
    const { SqliteDriver } = await import('../../src/daemon/store/sqlite-driver.js');
    const load = (keyFile?: string) => SettingsStore.create(new SqlSettingsRepository(new SqliteDriver(d.services.db)), { keyFile });
    const { statePaths } = await import('../../src/shared/paths.js');
    const db = d.services.db;
    const raw = () => (db.prepare("SELECT value FROM settings WHERE key = 'telegramBotToken'").get() as { value: string } | undefined)?.value ?? '';
    await d.api('PATCH', '/api/settings', { telegramBotToken: '555666777:PlainSecretValue' });
    expect(raw()).not.toContain('PlainSecretValue');
    expect(JSON.parse(raw())).toEqual({ enc: expect.any(String) });
    const keyFile = statePaths(d.home).secretKey;
    expect((await load(keyFile)).get().telegramBotToken).toBe('555666777:PlainSecretValue');
    // Without the key it cannot be read: it falls back to unset rather than to ciphertext.
    expect((await load()).get().telegramBotToken).toBe('');
    // A row written in plain text (older versions) is read, then encrypted in place.
    db.prepare("UPDATE settings SET value = ? WHERE key = 'telegramBotToken'").run(JSON.stringify('888:OlderPlainToken'));
    expect((await load(keyFile)).get().telegramBotToken).toBe('888:OlderPlainToken');
    expect(raw()).not.toContain('OlderPlainToken');
    await d.api('PATCH', '/api/settings', { telegramBotToken: '' });
    expect(raw()).toBe('""');
  });

  it('is masked in GET and PATCH replies; echoing the mask keeps the token', async () => {
    expect((await d.api('GET', '/api/settings')).body.telegramBotToken).toBe('');
    await d.api('PATCH', '/api/settings', { telegramBotToken: '987654321:ZZZsecret' });
    const got = await d.api('GET', '/api/settings');
    expect(got.body.telegramBotToken).toBe('987654321:...');
    const echo = await d.api('PATCH', '/api/settings', { telegramBotToken: got.body.telegramBotToken, requireLogin: true });
    expect(echo.status).toBe(200);
    expect(d.services.settings.get().telegramBotToken).toBe('987654321:ZZZsecret');
    expect((await d.api('PATCH', '/api/settings', { telegramBotToken: '111:...' })).status).toBe(400);
    expect((await d.api('PATCH', '/api/settings', { telegramBotToken: 'no colon' })).status).toBe(400);
    await d.api('PATCH', '/api/settings', { telegramBotToken: '' });
    expect(d.services.settings.get().telegramBotToken).toBe('');
  });
});

describe('summaries', () => {
  const ts = '2025-01-01T00:00:00.000Z';
  const cases: Array<[AnyRouterEvent, string]> = [
    [
      { event: 'request.failed', timestamp: ts, data: { trace_id: 't', api_key_id: null, provider: null, model: 'fast', status: 502, error_code: 'bad_gateway', error_message: 'all targets failed', attempts: 3 } },
      '[router] request.failed: fast -> 502 bad_gateway: all targets failed (3 attempts, trace t)',
    ],
    [
      { event: 'provider.recovered', timestamp: ts, data: { provider: 'groq', circuit_state: 'closed', previous_state: 'half_open', consecutive_failures: 5, downtime_seconds: 61 } },
      '[router] provider.recovered: groq is healthy again after 61s (circuit half_open -> closed)',
    ],
    [
      { event: 'quota.exceeded', timestamp: ts, data: { api_key_id: 'k1', quota: 'tokens', scope: 'model:openai/gpt-4o', limit: 1000, used: 1200, window: 'day' } },
      '[router] quota.exceeded: key k1 used 1200 of 1000 tokens per day (model:openai/gpt-4o)',
    ],
    [
      { event: 'combo.switched', timestamp: ts, data: { combo: 'fast', from: 'openai/gpt-4o', to: 'groq/llama-3.3-70b', reason: 'failover' } },
      '[router] combo.switched: combo fast switched openai/gpt-4o -> groq/llama-3.3-70b (failover)',
    ],
  ];
  it.each(cases)('summarizes %#', (ev, text) => expect(summarize(ev)).toBe(text));

  it('falls back to raw data when a field is missing', () => {
    const ev = { event: 'request.completed', timestamp: ts, data: { model: 'x' } } as unknown as AnyRouterEvent;
    expect(summarize(ev)).toBe('[router] request.completed: {"model":"x"}');
  });

  it('caps discord content at 2000 and telegram text at 4096 characters', () => {
    const long: AnyRouterEvent = { event: 'test.ping', timestamp: ts, data: { message: 'm'.repeat(10_000), webhookId: 'w' } };
    const discord = JSON.parse(buildPayload('discord', 'u', long, { botToken: '', apiBase: '' }).body);
    expect(discord.content).toHaveLength(2000);
    const tg = JSON.parse(buildPayload('telegram', '1', long, { botToken: '1:a', apiBase: 'https://api.telegram.org/' }).body);
    expect(tg.text).toHaveLength(4096);
    expect(buildPayload('telegram', '1', long, { botToken: '1:a', apiBase: 'https://api.telegram.org/' }).url).toBe('https://api.telegram.org/bot1:a/sendMessage');
  });

  it('custom gets exactly {event, timestamp, data}', () => {
    const ev: AnyRouterEvent = { event: 'test.ping', timestamp: ts, data: { message: 'hi', webhookId: 'w' } };
    expect(buildPayload('custom', 'https://e.com/', ev, { botToken: '', apiBase: '' }).body).toBe(
      '{"event":"test.ping","timestamp":"2025-01-01T00:00:00.000Z","data":{"message":"hi","webhookId":"w"}}',
    );
  });
});
