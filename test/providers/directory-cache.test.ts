/**
 * ProviderDirectory keeps built target lists between requests (no per-request rebuild of routing tables)
 * and drops them on every connection change, so routing never uses a stale account, key or base URL.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';

let home: string;
let services: Services;

beforeAll(async () => {
  home = mkdtempSync(join(tmpdir(), 'router-dir-cache-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
});
afterAll(() => {
  closeServices(services);
  rmSync(home, { recursive: true, force: true });
});

const targetsOf = (model: string) => {
  const split = services.providers.split(model)!;
  return services.providers.targets(split.def, split.model, model);
};

describe('target lists', () => {
  it('are built once and shared until a connection changes; every change is seen at once', async () => {
    const conns = services.connections;
    const a = await conns.create({ provider: 'openai', name: 'a', authKind: 'api-key', credential: { apiKey: 'sk-a' }, priority: 1, providerSpecificData: { baseUrl: 'http://127.0.0.1:1/v1' } });
    const first = targetsOf('openai/gpt-4o');
    expect(targetsOf('openai/gpt-4o')).toBe(first);
    expect(first.map((t) => [t.connectionId, t.credential.apiKey, t.baseUrl, t.model, t.publicModel])).toEqual([[a.id, 'sk-a', 'http://127.0.0.1:1/v1', 'gpt-4o', 'openai/gpt-4o']]);
    // Another model of the provider has its own list.
    expect(targetsOf('openai/gpt-4o-mini')[0]!.model).toBe('gpt-4o-mini');

    // A new account.
    const b = await conns.create({ provider: 'openai', name: 'b', authKind: 'api-key', credential: { apiKey: 'sk-b' }, priority: 2 });
    const second = targetsOf('openai/gpt-4o');
    expect(second).not.toBe(first);
    expect(second.map((t) => t.connectionId)).toEqual([a.id, b.id]);
    // A rotated key and a new base URL.
    await conns.update(a.id, { credential: { apiKey: 'sk-a2' }, providerSpecificData: { baseUrl: 'http://127.0.0.1:2/v1' } });
    expect(targetsOf('openai/gpt-4o')[0]).toMatchObject({ credential: { apiKey: 'sk-a2' }, baseUrl: 'http://127.0.0.1:2/v1' });
    // Deactivated, then removed.
    await conns.update(a.id, { isActive: false });
    expect(targetsOf('openai/gpt-4o').map((t) => t.connectionId)).toEqual([b.id]);
    await conns.remove(b.id);
    expect(() => targetsOf('openai/gpt-4o')).toThrow(/No active connection/);
  });
});
