/**
 * Webhook deliveries through an outbound proxy keep the public-destination check (SSRF guard) on the
 * final destination: router resolves and checks the name itself and asks the proxy for the checked
 * address, so a name resolving to a private address is refused before the proxy is contacted.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpConnectProxy, type TestProxy } from '../support/proxy-servers.js';
import { fakeResolver, startDaemon, startReceiver, type Receiver, type TestDaemon } from '../webhooks/helpers.js';

let d: TestDaemon;
let rx: Receiver;
let proxy: TestProxy;

beforeAll(async () => {
  d = await startDaemon(false);
  rx = await startReceiver();
  // The proxy stands for one on another network: whatever it is asked, it connects to the local receiver.
  proxy = await startHttpConnectProxy({ forwardAllTo: `127.0.0.1:${rx.port}` });
  d.useWebhooks({
    policy: { retryDelaysMs: [], timeoutMs: 2000 },
    resolve: fakeResolver({ 'hooks.example.com': ['93.184.216.34'], 'sneaky.example.com': ['10.0.0.5'] }),
  });
  await d.services.settings.update({ outboundProxy: { url: proxy.url, noProxy: [], perProvider: {} } });
});
afterAll(async () => {
  await d?.services.settings.update({ outboundProxy: { url: '', noProxy: [], perProvider: {} } });
  d?.close();
  await Promise.all([rx?.close(), proxy?.close()]);
});

describe('webhooks through a proxy', () => {
  it('asks the proxy for the checked public address, with the original Host', async () => {
    const hook = await d.api('POST', '/api/webhooks', { url: 'http://hooks.example.com/hook', events: ['*'] });
    expect(hook.status).toBe(201);
    const test = await d.api('POST', `/api/webhooks/${hook.body.id}/test`);
    expect(test.body).toMatchObject({ delivered: true, status: 200 });
    expect(proxy.targets).toEqual(['93.184.216.34:80']);
    expect(rx.requests.at(-1)!.headers.host).toBe('hooks.example.com');
  });

  it('refuses a name that resolves to a private address; the proxy is never asked', async () => {
    const before = proxy.targets.length;
    const hook = await d.api('POST', '/api/webhooks', { url: 'http://sneaky.example.com/hook', events: ['*'] });
    expect(hook.status).toBe(201);
    const test = await d.api('POST', `/api/webhooks/${hook.body.id}/test`);
    expect(test.body.delivered).toBe(false);
    expect(test.body.error).toMatch(/resolves to 10\.0\.0\.5, which is not public/);
    expect(proxy.targets.length).toBe(before);
  });
});
