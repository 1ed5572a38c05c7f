/**
 * OAuth connection expiry (spec "Provider connection" states, Authentication 8): proactive refresh before
 * expiry, rotation-aware, never marking a connection expired; on an upstream-confirmed auth failure the
 * refresh comes first and only a failed recovery marks the connection expired.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { confirmAuthFailure } from '../../src/daemon/resilience/attempts.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';

interface TokenCall {
  body: Record<string, string>;
}

let tokenServer: Server;
let tokenUrl: string;
let tokenCalls: TokenCall[] = [];
let tokenStatus = 200;
let mock: MockUpstream;
let services: Services;

beforeAll(async () => {
  tokenServer = createServer((req, res) => {
    let raw = '';
    req.on('data', (c) => (raw += c));
    req.on('end', () => {
      const body = JSON.parse(raw) as Record<string, string>;
      tokenCalls.push({ body });
      if (tokenStatus !== 200) {
        res.writeHead(tokenStatus, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: 'invalid_grant', error_description: 'refresh token revoked' }));
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ access_token: `at-${tokenCalls.length}`, refresh_token: `rt-${tokenCalls.length}`, expires_in: 3600 }));
    });
  });
  await new Promise<void>((r) => tokenServer.listen(0, '127.0.0.1', r));
  const addr = tokenServer.address() as { port: number };
  tokenUrl = `http://127.0.0.1:${addr.port}/v1/oauth/token`;
  mock = await startMockUpstream({ requireKey: 'at-good' });
  services = await bootServices({ home: mkdtempSync(join(tmpdir(), 'router-oauth-')), host: '127.0.0.1', port: 0 });
});

afterEach(() => {
  tokenCalls = [];
  tokenStatus = 200;
});

afterAll(async () => {
  closeServices(services);
  await mock.close();
  await new Promise((r) => tokenServer.close(r));
});

async function addOauth(expiresInMs: number, accessToken = 'at-old') {
  return services.connections.create({
    provider: 'claude-code',
    name: 'cc',
    authKind: 'oauth',
    credential: { accessToken, refreshToken: 'rt-0' },
    expiresAt: new Date(Date.now() + expiresInMs).toISOString(),
    providerSpecificData: { baseUrl: mock.anthropicBase, tokenUrl },
  });
}

describe('proactive refresh', () => {
  it('refreshes tokens about to expire, storing the rotated refresh token', async () => {
    const events: unknown[] = [];
    const off = services.events.on('connection.refreshed', (e) => events.push(e.data));
    const soon = await addOauth(60_000);
    const later = await addOauth(3 * 3600_000);
    expect(await services.tokenRefresher.tick()).toBe(1);
    expect(tokenCalls).toHaveLength(1);
    expect(tokenCalls[0]!.body).toMatchObject({ grant_type: 'refresh_token', refresh_token: 'rt-0', client_id: '9d1c250a-e61b-44d9-88ed-5944d1962f5e' });
    const after = services.connections.get(soon.id)!;
    expect(after.credential).toMatchObject({ accessToken: 'at-1', refreshToken: 'rt-1' });
    expect(Date.parse(after.expiresAt!)).toBeGreaterThan(Date.now() + 3000_000);
    expect(services.connections.get(later.id)!.credential.accessToken).toBe('at-old');
    expect(events).toEqual([{ connection_id: soon.id, provider: 'claude-code', provider_id: 'claude-code', name: 'cc', expires_at: after.expiresAt, rotated: true }]);
    expect(after.providerSpecificData.lastRefreshedAt).toBeTruthy();
    off();
    await services.connections.remove(soon.id);
    await services.connections.remove(later.id);
  });

  it('a failed proactive refresh never marks the connection expired', async () => {
    const c = await addOauth(60_000);
    tokenStatus = 400;
    await services.tokenRefresher.tick();
    const after = services.connections.get(c.id)!;
    expect(after.isActive).toBe(true);
    expect(after.testStatus).not.toBe('expired');
    expect(after.lastError).toMatch(/invalid_grant|refresh token revoked|400/);
    expect(after.lastError).not.toContain('rt-0');
    await services.connections.remove(c.id);
  });
});

describe('reactive path', () => {
  function targetOf(id: string) {
    const conn = services.connections.get(id)!;
    return { provider: services.providers.provider('claude-code')!, connectionId: id, credential: conn.credential } as any;
  }

  it('an auth failure first refreshes; a successful refresh keeps the connection active', async () => {
    const c = await addOauth(3600_000);
    await confirmAuthFailure(services, targetOf(c.id));
    const after = services.connections.get(c.id)!;
    expect(after.isActive).toBe(true);
    expect(after.credential.accessToken).toBe('at-1');
    await services.connections.remove(c.id);
  });

  it('when refresh and the recovery check fail, the connection becomes expired and inactive', async () => {
    const expired: any[] = [];
    const off = services.events.on('connection.expired', (e) => expired.push(e.data));
    const c = await addOauth(3600_000, 'at-bad');
    tokenStatus = 401;
    await confirmAuthFailure(services, targetOf(c.id));
    off();
    expect(expired).toHaveLength(1);
    expect(expired[0]).toMatchObject({ connection_id: c.id, provider: 'claude-code', name: 'cc' });
    expect(expired[0].reason).not.toContain('at-bad');
    const after = services.connections.get(c.id)!;
    expect(after.testStatus).toBe('expired');
    expect(after.isActive).toBe(false);
    await services.connections.remove(c.id);
  });

  it('a credential rotated since the failed request is never expired', async () => {
    const c = await addOauth(3600_000, 'at-bad');
    const stale = targetOf(c.id);
    await services.connections.update(c.id, { credential: { accessToken: 'at-good' } });
    tokenStatus = 401;
    await confirmAuthFailure(services, stale);
    expect(services.connections.get(c.id)!.isActive).toBe(true);
    await services.connections.remove(c.id);
  });
});
