/**
 * The reactive expiry check of an API-key connection (spec "Provider connection" states): after an auth
 * failure, the model list is fetched as a recovery check, and only a reply classified as an auth failure
 * (401/403, whatever the provider's error code says) marks the connection expired; any other failure
 * (a 5xx, even one whose code sounds like auth) leaves it active.
 */
import { createServer, type Server } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { confirmAuthFailure } from '../../src/daemon/resilience/attempts.js';

let server: Server;
let base: string;
let reply: { status: number; body: unknown } = { status: 200, body: { data: [] } };
let services: Services;
let home: string;

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(reply.status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(reply.body));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/v1`;
  home = mkdtempSync(join(tmpdir(), 'router-auth-confirm-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
});

afterAll(async () => {
  closeServices(services);
  rmSync(home, { recursive: true, force: true });
  await new Promise((r) => server.close(r));
});

async function checkWith(status: number, body: unknown) {
  reply = { status, body };
  const c = await services.connections.create({ provider: 'openai', name: `k${status}`, authKind: 'api-key', credential: { apiKey: 'sk-refused' }, providerSpecificData: { baseUrl: base } });
  const target = { provider: services.providers.provider('openai')!, connectionId: c.id, credential: c.credential } as Parameters<typeof confirmAuthFailure>[1];
  await confirmAuthFailure(services, target);
  const after = services.connections.get(c.id)!;
  await services.connections.remove(c.id);
  return after;
}

describe('reactive expiry of an API-key connection', () => {
  it('a 403 with a provider code of its own (account_deactivated) confirms the failure: expired', async () => {
    const after = await checkWith(403, { error: { message: 'This key belongs to a deactivated account.', type: 'invalid_request_error', code: 'account_deactivated' } });
    expect(after.testStatus).toBe('expired');
    expect(after.isActive).toBe(false);
    expect(after.lastError).toContain('deactivated account');
  });

  it('a 500 whose code sounds like auth (unauthorized) is not an auth failure: still active', async () => {
    const after = await checkWith(500, { error: { message: 'upstream auth service down', type: 'server_error', code: 'unauthorized' } });
    expect(after.isActive).toBe(true);
    expect(after.testStatus).not.toBe('expired');
  });
});
