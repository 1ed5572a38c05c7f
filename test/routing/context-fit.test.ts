/**
 * Context fit (issue 30 item 4): a combo with `contextFit: true` leaves out, without a call, the targets
 * whose context window (a provider node's declared model list here; the model catalog for built-in
 * providers) cannot hold the request's estimated input plus its max output; when none can, a 400 says the
 * request's size and the largest window on offer. Real daemon, mock upstream.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';

let mock: MockUpstream;
let router: RouterProcess;
let key: string;

const WINDOW = 1000;
const words = (n: number) => Array.from({ length: n }, (_, i) => `w${i % 97}`).join(' ');

async function chat(model: string, content: string, extra: Record<string, unknown> = {}) {
  const res = await fetch(`${router.url}/v1/chat/completions`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ model, messages: [{ role: 'user', content }], ...extra }),
  });
  const text = await res.text();
  return { status: res.status, text, json: JSON.parse(text) };
}

const chatModels = () => mock.requests.filter((r) => r.endpoint === 'openai.chat').map((r) => r.model);

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  key = await router.createKey();
  // A provider node whose one model declares a 1000-token window through its model list.
  const node = await router.manage('POST', '/api/provider-nodes', { name: 'tiny', prefix: 'tiny', type: 'openai-compatible', baseUrl: mock.openaiBase });
  expect(node.status, JSON.stringify(node.json)).toBe(201);
  const conn = await router.addConnection({ provider: node.json.id, apiKey: 'tiny-upstream-key-123456' });
  const off = mock.handle((req) =>
    req.endpoint === 'openai.models'
      ? {
          type: 'custom',
          fn: (_req, res) => {
            res.writeHead(200, { 'content-type': 'application/json' });
            res.end(JSON.stringify({ object: 'list', data: [{ id: 'tiny-1', object: 'model', owned_by: 'test', context_length: WINDOW }] }));
          },
        }
      : undefined,
  );
  const sync = await router.manage('POST', `/api/providers/${conn.id}/sync-models`);
  expect(sync.json.models).toEqual([{ id: 'tiny-1', contextLength: WINDOW }]);
  off();
  // OpenAI's gpt-4o: its window (128k) comes from the model catalog.
  await router.addConnection({ provider: 'openai', apiKey: 'sk-openai-fit', providerSpecificData: { baseUrl: mock.openaiBase } });
  const models = await router.manage('GET', '/api/models?all=true');
  expect(models.json.models.find((m: any) => m.id === 'openai/gpt-4o')?.contextLength).toBeGreaterThan(100_000);
  for (const body of [
    { name: 'fit', models: ['tiny/tiny-1', 'openai/gpt-4o'], contextFit: true },
    { name: 'fit-one', models: ['tiny/tiny-1'], contextFit: true },
    { name: 'nofit', models: ['tiny/tiny-1', 'openai/gpt-4o'] },
  ]) {
    const r = await router.manage('POST', '/api/combos', body);
    expect(r.status, JSON.stringify(r.json)).toBe(201);
  }
  mock.handle((req) => ({ type: 'text', text: `served by ${req.model}` }));
}, 60_000);

afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

describe('context fit', () => {
  it('the combo API stores the field (default false)', async () => {
    const list = (await router.manage('GET', '/api/combos')).json.combos as any[];
    expect(list.find((c) => c.name === 'fit')).toMatchObject({ contextFit: true, hedgeAfterMs: null, midStreamRecovery: null });
    expect(list.find((c) => c.name === 'nofit')).toMatchObject({ contextFit: false });
    const bad = await router.manage('POST', '/api/combos', { name: 'badfit', models: ['tiny/tiny-1'], contextFit: 'yes' });
    expect(bad.status).toBe(400);
    expect(bad.json.error.param ?? bad.json.error.message).toMatch(/contextFit/);
  });

  it('a request that fits goes to the first target', async () => {
    mock.requests.length = 0;
    const r = await chat('fit', 'hello');
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBe('served by tiny-1');
  });

  it('a request too big for the small window skips it without a call', async () => {
    mock.requests.length = 0;
    const r = await chat('fit', words(1500));
    expect(r.status, r.text).toBe(200);
    expect(r.json.choices[0].message.content).toBe('served by gpt-4o');
    expect(chatModels()).toEqual(['gpt-4o']);
  });

  it('the max output counts too: a small prompt with a large max_tokens skips the small window', async () => {
    mock.requests.length = 0;
    const r = await chat('fit', 'hello', { max_tokens: 2000 });
    expect(r.status, r.text).toBe(200);
    expect(chatModels()).toEqual(['gpt-4o']);
  });

  it('when no target fits: 400 with the request size and the largest window, no upstream call', async () => {
    mock.requests.length = 0;
    const r = await chat('fit-one', words(1500), { max_tokens: 100 });
    expect(r.status, r.text).toBe(400);
    expect(r.json.error).toMatchObject({ code: 'context_length_exceeded', type: 'invalid_request_error' });
    expect(r.json.error.message).toMatch(/needs about \d+ tokens/);
    expect(r.json.error.message).toContain(`largest context window is ${WINDOW} tokens (tiny/tiny-1)`);
    const size = Number(/needs about (\d+) tokens/.exec(r.json.error.message)![1]);
    expect(size).toBeGreaterThan(WINDOW);
    expect(chatModels()).toEqual([]);
  });

  it('without contextFit the small target is called with the oversized request', async () => {
    mock.requests.length = 0;
    const r = await chat('nofit', words(1500));
    expect(r.status, r.text).toBe(200);
    expect(chatModels()).toEqual(['tiny-1']);
  });
});
