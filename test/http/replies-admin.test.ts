/**
 * Real replies of the daemon's administration routes (system, auth, settings, webhooks, usage, pricing,
 * catalog, backups) parse with the reply schema their route declares (test/support/reply-contract.ts).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../mocks/upstream.js';
import { checkReply } from '../support/reply-contract.js';
import { chatAs, type RouterProcess, startRouter } from '../support/router-daemon.js';

let router: RouterProcess;
let mock: MockUpstream;
let receiver: Server;
let receiverUrl: string;

beforeAll(async () => {
  router = await startRouter();
  mock = await startMockUpstream();
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('ok'));
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
}, 60_000);
afterAll(async () => {
  await router?.stop();
  await mock?.close();
  await new Promise((resolve) => receiver?.close(resolve));
});

const check = (method: string, path: string, body?: unknown, opts?: Parameters<typeof checkReply>[4]) => checkReply(router, method, path, body, opts);

describe('administration replies parse with their route schema', () => {
  it('system', async () => {
    await check('GET', '/api/health', undefined, { anonymous: true });
    const doc = await check('GET', '/api/openapi.json', undefined, { anonymous: true });
    expect(Object.keys(doc.paths).length).toBeGreaterThan(100);
    await check('GET', '/api/system/status');
    await check('GET', '/api/cluster');
    await check('GET', '/api/doctor');
    const metrics = await check('GET', '/metrics');
    expect(metrics).toContain('# HELP');
  });

  it('auth', async () => {
    await check('GET', '/api/auth/status');
    await check('PATCH', '/api/settings', { requireLogin: false });
    await check('POST', '/api/auth/session', {}, { anonymous: true });
    await check('PATCH', '/api/settings', { requireLogin: true });
    await check('PUT', '/api/auth/password', { password: 'contract-password-1' });
    const login = await check('POST', '/api/auth/login', { password: 'contract-password-1' }, { anonymous: true });
    expect(login.ok).toBe(true);
    await check('POST', '/api/auth/logout', {});
  });

  it('settings', async () => {
    await check('GET', '/api/settings');
    await check('GET', '/api/settings/schema');
    await check('PATCH', '/api/settings', { allowPrivateWebhookDestinations: true });
    await check('GET', '/api/settings/compression');
    await check('PUT', '/api/settings/compression', {});
    await check('POST', '/api/settings/proxy/test', { target: receiverUrl });
  });

  it('webhooks', async () => {
    const w = await check('POST', '/api/webhooks', { url: receiverUrl, description: 'contract' });
    await check('GET', '/api/webhooks');
    await check('GET', `/api/webhooks/${w.id}`);
    await check('PUT', `/api/webhooks/${w.id}`, { url: receiverUrl, events: ['request.failed'] });
    const t = await check('POST', `/api/webhooks/${w.id}/test`);
    expect(t.delivered).toBe(true);
    const d = await check('GET', `/api/webhooks/${w.id}/deliveries`);
    expect(d.deliveries.length).toBe(1);
    await check('DELETE', `/api/webhooks/${w.id}`);
  });
});

describe('usage, pricing and catalog replies parse with their route schema', () => {
  it('usage and the request log, with traffic', async () => {
    await router.addConnection({ provider: 'openai', apiKey: 'sk-up-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
    const key = await router.createKey();
    expect((await chatAs(router.url, key, 'openai/gpt-4o-mini')).status).toBe(200);
    await expect.poll(async () => (await router.manage('GET', '/api/logs')).json.logs.length).toBeGreaterThan(0);
    const logs = await check('GET', '/api/logs?limit=5');
    expect(logs.logs[0].model).toBe('gpt-4o-mini');
    const summary = await check('GET', '/api/usage/summary');
    expect(summary.requests).toBeGreaterThan(0);
    const rows = await check('GET', '/api/usage/breakdown?by=model');
    expect(rows.rows.length).toBeGreaterThan(0);
    await check('GET', '/api/usage/breakdown?by=key');
    await check('GET', '/api/usage/timeseries?bucket=minute');
    const grouped = await check('GET', '/api/usage/timeseries?bucket=minute&groupBy=provider');
    expect(grouped.series.length).toBeGreaterThan(0);
    const t = await check('GET', '/api/telemetry/summary');
    expect(t.providers.length).toBeGreaterThan(0);
  });

  it('pricing', async () => {
    const list = await check('GET', '/api/pricing?provider=openai');
    expect(list.pricing.length).toBeGreaterThan(0);
    await check('GET', '/api/pricing/openai/gpt-4o-mini');
    await check('PUT', '/api/pricing/openai/gpt-4o-mini', { input: 1, output: 2, perImage: { 'hd/*': 0.1 } });
    await check('DELETE', '/api/pricing/openai/gpt-4o-mini');
  });

  it('catalog', async () => {
    const c = await check('GET', '/api/catalog/models?provider=openai');
    expect(c.models.length).toBeGreaterThan(0);
    await check('PATCH', '/api/settings', { catalogUrl: `${mock.openaiBase}/not-a-catalog.json` });
    const u = await check('POST', '/api/catalog/update');
    expect(u.updated).toBe(false);
  });
});
