/**
 * The provider circuit across models (spec "States": circuit breaker per provider): a provider answering
 * 500 to every model opens its own circuit, so even a model never tried is refused with 503
 * `provider_circuit_open`; one failing model in a healthy provider opens only that model's circuit and
 * every other model keeps being served.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let mock: MockUpstream;
let key: string;

async function addConnection(provider: string, baseUrl: string): Promise<void> {
  const res = await app.request(
    'http://router.test/api/providers',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-router-cli-token': services.cliToken },
      body: JSON.stringify({ provider, apiKey: `sk-${provider}-circuit`, providerSpecificData: { baseUrl } }),
    },
    { remoteAddress: '127.0.0.1' },
  );
  expect(res.status).toBe(201);
}

beforeAll(async () => {
  mock = await startMockUpstream();
  home = mkdtempSync(join(tmpdir(), 'router-provider-circuit-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
  key = (await services.keys.create('caller', ['proxy'])).key;
  await addConnection('openai', mock.openaiBase);
  await addConnection('groq', mock.openaiBase);
});
afterEach(() => mock.reset());
afterAll(async () => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
  await mock?.close();
});

async function chat(model: string) {
  const res = await app.request(
    'http://router.test/v1/chat/completions',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
      body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
    },
    { remoteAddress: '127.0.0.1' },
  );
  return { status: res.status, json: (await res.json()) as any };
}

describe('provider circuit across models', () => {
  it('a provider answering 500 to every model opens its circuit: an untried model gets 503 provider_circuit_open', async () => {
    mock.handle((req) => (req.headers.authorization === 'Bearer sk-openai-circuit' ? { type: 'status', status: 500, message: 'down' } : undefined));
    const threshold = services.resilience.breakers.settings.failureThreshold;
    for (let i = 0; i < threshold; i++) expect((await chat(`openai/model-${i}`)).status).toBe(500);
    const before = mock.requests.length;
    const refused = await chat('openai/never-tried');
    expect(refused.status).toBe(503);
    expect(refused.json.error).toMatchObject({ code: 'provider_circuit_open', provider: 'openai' });
    expect(refused.json.error.message).toMatch(/^Provider openai is/);
    expect(mock.requests.length).toBe(before);
  });

  it('one failing model in a healthy provider: only its own circuit opens, the other models are all served', async () => {
    mock.handle((req) => (req.model === 'bad' ? { type: 'status', status: 500, message: 'model broken' } : undefined));
    const statuses: number[] = [];
    for (let i = 0; i < 20; i++) {
      statuses.push((await chat('groq/bad')).status);
      expect((await chat(`groq/good-${i % 3}`)).status).toBe(200);
    }
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThan(0);
    expect(services.resilience.breakers.state('groq')).toBe('closed');
    const modelCircuit = await chat('groq/bad');
    expect(modelCircuit.json.error.message).toMatch(/^Model bad of provider groq/);
  });
});
