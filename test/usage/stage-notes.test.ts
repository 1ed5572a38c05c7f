/** Facts request stages report (compression, guardrails, cache) are stored with the usage row. */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { bootServices, buildApp, closeServices } from '../../src/daemon/boot.js';
import type { Services } from '../../src/daemon/services.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';

let mock: MockUpstream;
let services: Services;

beforeAll(async () => {
  mock = await startMockUpstream();
  services = await bootServices({ home: mkdtempSync(join(tmpdir(), 'router-notes-')), host: '127.0.0.1', port: 0 });
  await services.connections.create({ provider: 'openai', name: 'o', authKind: 'api-key', credential: { apiKey: 'sk-x' }, providerSpecificData: { baseUrl: mock.openaiBase } });
  services.stages.register({
    name: 'test-notes',
    wants: (ctx) => ctx.requestHeaders.get('x-test-notes') === '1',
    onRequest: (_ir, ctx) => {
      ctx.notes.compression = { droppedTurns: 2 };
    },
  });
});

afterAll(async () => {
  closeServices(services);
  await mock.close();
});

it('stage notes reach the request log; requests without stages have none', async () => {
  const app = buildApp(services);
  const key = (await services.keys.create('k')).key;
  const send = (notes: boolean) =>
    app.request(
      '/v1/chat/completions',
      {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...(notes ? { 'x-test-notes': '1' } : {}) },
        body: JSON.stringify({ model: 'openai/gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
      },
      { remoteAddress: '127.0.0.1' },
    );
  expect((await send(true)).status).toBe(200);
  expect((await send(false)).status).toBe(200);
  const res = await app.request('/api/logs', { headers: { 'x-router-cli-token': services.cliToken } }, { remoteAddress: '127.0.0.1' });
  const { logs } = (await res.json()) as { logs: Array<{ notes: string | null }> };
  expect(logs).toHaveLength(2);
  expect(logs.map((l) => l.notes)).toEqual([null, JSON.stringify({ compression: { droppedTurns: 2 } })]);
});
