/**
 * The memory engine's own model calls (remote embeddings, extraction/summary chat) take the same
 * executor as client requests: the circuit breaker and account cooldowns apply, each call writes a
 * usage row, and a failure's message never carries the upstream credential.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import { callModel, remoteEmbed } from '../../src/daemon/memory/upstream.js';
import type { Services } from '../../src/daemon/services.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import type { Behavior } from '../mocks/types.js';

const SECRET = 'sk-openai-SECRET-memory-0123456789';
let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let mock: MockUpstream;

beforeAll(async () => {
  mock = await startMockUpstream();
  home = mkdtempSync(join(tmpdir(), 'router-memory-policy-'));
  services = await bootServices({ home, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
  const res = await app.request(
    'http://router.test/api/providers',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-router-cli-token': services.cliToken },
      body: JSON.stringify({ provider: 'openai', apiKey: SECRET, providerSpecificData: { baseUrl: mock.openaiBase } }),
    },
    { remoteAddress: '127.0.0.1' },
  );
  expect(res.status).toBe(201);
});
afterEach(() => mock.reset());
afterAll(async () => {
  if (services) closeServices(services);
  if (home) rmSync(home, { recursive: true, force: true });
  await mock?.close();
});

function answer(model: string, behavior: Behavior): void {
  mock.handle((req) => (req.model === model ? behavior : undefined));
}
const hitsFor = (model: string) => mock.requests.filter((r) => r.model === model).length;

async function rowsFor(model: string): Promise<any[]> {
  const res = await app.request('http://router.test/api/logs?limit=500', { headers: { 'x-router-cli-token': services.cliToken } }, { remoteAddress: '127.0.0.1' });
  return ((await res.json()) as { logs: any[] }).logs.filter((l) => l.model === model);
}

const CALLS = [
  { name: 'remote embeddings', run: (model: string) => remoteEmbed(services, `openai/${model}`, ['hello']) },
  { name: 'extraction chat', run: (model: string) => callModel(services, `openai/${model}`, 'system', 'user') },
];

describe.each(CALLS)('memory $name', ({ run }) => {
  it('writes a usage row', async () => {
    const model = `mem-usage-${CALLS.findIndex((c) => c.run === run)}`;
    await run(model);
    await expect.poll(async () => (await rowsFor(model)).length).toBe(1);
    expect((await rowsFor(model))[0]).toMatchObject({ provider: 'openai', status: 200 });
  });

  it('5xx replies open the circuit, then no upstream call is made', async () => {
    const model = `mem-breaker-${CALLS.findIndex((c) => c.run === run)}`;
    answer(model, { type: 'status', status: 500, message: 'down' });
    for (let i = 0; i < services.resilience.breakers.settings.failureThreshold; i++) await expect(run(model)).rejects.toThrow();
    const before = hitsFor(model);
    await expect(run(model)).rejects.toThrow(/circuit open/);
    expect(hitsFor(model)).toBe(before);
  });

  it('a 429 cools the account, then no upstream call is made', async () => {
    const model = `mem-cooldown-${CALLS.findIndex((c) => c.run === run)}`;
    answer(model, { type: 'status', status: 429, message: 'slow down', headers: { 'retry-after': '120' } });
    await expect(run(model)).rejects.toThrow();
    const before = hitsFor(model);
    await expect(run(model)).rejects.toThrow(/cooling down/);
    expect(hitsFor(model)).toBe(before);
  });

  it('a failure never carries the credential', async () => {
    const model = `mem-redact-${CALLS.findIndex((c) => c.run === run)}`;
    answer(model, { type: 'status', status: 400, message: `Incorrect API key provided: ${SECRET}` });
    const err = (await run(model).catch((e: unknown) => e)) as Error;
    expect(err).toBeInstanceOf(Error);
    expect(err.message).not.toContain(SECRET);
  });
});
