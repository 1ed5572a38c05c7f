import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { writeStaticModel } from './helpers.js';

let router: RouterProcess;
let mock: MockUpstream;
let modelDir: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  modelDir = mkdtempSync(join(tmpdir(), 'router-static-e2e-'));
  writeStaticModel(modelDir);
  router = await startRouter();
});
afterAll(async () => {
  await router?.stop();
  await mock.close();
  rmSync(modelDir, { recursive: true, force: true });
});

describe('memory in the real daemon process', () => {
  it('a key with injection on: the upstream receives the memories, the client messages are untouched', async () => {
    await router.addConnection({ provider: 'openai', apiKey: 'sk-e2e-memory-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
    expect((await router.manage('PUT', '/api/memory/settings', { embeddingOrder: ['static'], staticModelPath: modelDir })).status).toBe(200);
    const k = await router.manage('POST', '/api/keys', { name: 'e2e', scopes: ['proxy'] });
    expect(k.status).toBe(201);
    expect((await router.manage('PUT', `/api/memory/keys/${k.json.id}/settings`, { inject: true })).status).toBe(200);
    const m = await router.manage('POST', '/api/memory', { key: 'dog', content: 'The user has a golden retriever called Max.', apiKeyId: k.json.id });
    expect(m.status).toBe(201);
    const status = await router.manage('GET', '/api/memory/engine-status');
    expect(status.json.embedding).toMatchObject({ source: 'static', available: true });
    expect(status.json.vectorStore).toMatchObject({ backend: 'embedded-vec', rowCount: 1, needsReindex: 0 });

    const messages = [{ role: 'user', content: 'Which animal lives with me?' }];
    const res = await fetch(`${router.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${k.json.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'openai/gpt-4o', messages }),
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('x-router-memory')).toBe('injected=1');
    const up = mock.requests.filter((r) => r.endpoint === 'openai.chat').at(-1)!;
    expect(up.json.messages[0].role).toBe('system');
    expect(up.json.messages[0].content).toContain('golden retriever called Max');
    expect(up.json.messages.slice(1)).toEqual(messages);
    const got = await router.manage('GET', `/api/memory/${m.json.id}`);
    expect(got.json.hitCount).toBe(1);
  });
});
