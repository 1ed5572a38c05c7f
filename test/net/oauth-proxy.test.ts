/**
 * OAuth token refreshes go through the outbound proxy like upstream calls: the global setting, and a
 * connection's own `providerSpecificData.proxy` over it.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { startHttpConnectProxy, startSocks5Proxy, type TestProxy } from '../support/proxy-servers.js';

let tokenServer: Server;
let tokenUrl: string;
let services: Services;
let home: string;
let httpProxy: TestProxy;
let socksProxy: TestProxy;

beforeAll(async () => {
  tokenServer = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: 'at-new', refresh_token: 'rt-new', expires_in: 3600 }));
    });
  });
  await new Promise<void>((r) => tokenServer.listen(0, '127.0.0.1', r));
  tokenUrl = `http://127.0.0.1:${(tokenServer.address() as { port: number }).port}/v1/oauth/token`;
  [httpProxy, socksProxy] = await Promise.all([startHttpConnectProxy(), startSocks5Proxy()]);
  home = mkdtempSync(join(tmpdir(), 'router-oauth-proxy-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  await services.settings.update({ outboundProxy: { url: httpProxy.url, noProxy: [], perProvider: {} } });
});

afterAll(async () => {
  await services?.settings.update({ outboundProxy: { url: '', noProxy: [], perProvider: {} } });
  closeServices(services);
  rmSync(home, { recursive: true, force: true });
  await new Promise((r) => tokenServer.close(r));
  await Promise.all([httpProxy?.close(), socksProxy?.close()]);
});

async function addOauth(extra: Record<string, unknown> = {}) {
  return services.connections.create({
    provider: 'claude-code',
    name: 'cc',
    authKind: 'oauth',
    credential: { accessToken: 'at-old', refreshToken: 'rt-0' },
    expiresAt: new Date(Date.now() + 60_000).toISOString(),
    providerSpecificData: { baseUrl: 'http://127.0.0.1:1/v1', tokenUrl, ...extra },
  });
}

describe('token refresh through the outbound proxy', () => {
  it('uses the global proxy', async () => {
    const c = await addOauth();
    expect(await services.tokenRefresher.tick()).toBe(1);
    expect(services.connections.get(c.id)!.credential.accessToken).toBe('at-new');
    expect(httpProxy.requests).toEqual(['POST /v1/oauth/token']);
    await services.connections.remove(c.id);
  });

  it("uses the connection's own proxy over the global one", async () => {
    httpProxy.requests.length = 0;
    const c = await addOauth({ proxy: socksProxy.url });
    expect(await services.tokenRefresher.tick()).toBe(1);
    expect(socksProxy.requests).toEqual(['POST /v1/oauth/token']);
    expect(httpProxy.requests).toEqual([]);
    await services.connections.remove(c.id);
  });
});
