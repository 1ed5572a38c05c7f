/**
 * Legacy completions forwarded natively (issue 14, native legacy completions): each recorded OpenAI
 * `/v1/completions` interaction (basic, streaming, streaming with usage, batched text prompts with n > 1,
 * suffix, token prompts, token batches) replayed through router to an upstream that speaks `/completions`
 * reaches the upstream as the client sent it (model id aside) and comes back equal to the direct reply.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { loadRecording } from '../mocks/recordings.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';

let home: string;
let services: Services;
let app: ReturnType<typeof buildApp>;
let mock: MockUpstream;
let key: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  home = mkdtempSync(join(tmpdir(), 'router-completions-replay-'));
  services = bootServices({ home, host: '127.0.0.1', port: 0 });
  app = buildApp(services);
  key = services.keys.create('caller', ['proxy']).key;
  const res = await app.request(
    'http://router.test/api/providers',
    {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-router-cli-token': services.cliToken },
      body: JSON.stringify({ provider: 'openai', apiKey: 'sk-openai-replay', providerSpecificData: { baseUrl: mock.openaiBase } }),
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

const FIXTURES = ['basic', 'streaming', 'streaming-usage', 'text-batch', 'suffix', 'token', 'token-batch'].map((n) => `openai/completion-${n}.yaml`);

describe.each(FIXTURES)('%s', (file) => {
  it('through router equals the direct reply, and the upstream gets the request as sent', async () => {
    const [recorded] = loadRecording(file);
    const sent = JSON.parse(recorded!.request.body!) as Record<string, unknown>;
    // Direct: the client talking to the upstream itself.
    mock.enqueue({ type: 'replay', file });
    const direct = await fetch(`${mock.openaiBase}/completions`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: recorded!.request.body });
    const directText = await direct.text();
    // Through router, with the provider prefix on the model.
    mock.enqueue({ type: 'replay', file, chunkBytes: 7 });
    const res = await app.request(
      'http://router.test/v1/completions',
      { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify({ ...sent, model: `openai/${sent.model}` }) },
      { remoteAddress: '127.0.0.1' },
    );
    const text = await res.text();
    expect(res.status).toBe(direct.status);
    expect(text).toBe(directText);
    const upstream = mock.requests.at(-1)!;
    expect(upstream.path).toBe('/v1/completions');
    expect(upstream.json).toEqual(sent);
  });
});
