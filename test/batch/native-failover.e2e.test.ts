import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import type { MockRequest } from '../mocks/types.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { chatLine, fileLines, jsonl, sdk, upload, waitBatch } from './helpers.js';

/**
 * Native batches go through the executor: the submission fails over from an account the provider refuses
 * (429, rate limited) to the provider's next account, and every later call (the batch create after the
 * file upload, polls, results) goes to the account that took the batch. Before, native mode called the
 * first planned account itself, with no failover: the batch failed.
 */

let mock: MockUpstream;
let router: RouterProcess;
let key: string;

const keyOf = (r: MockRequest) => String(r.headers['x-api-key'] ?? r.headers.authorization ?? '');

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  key = (await router.manage('POST', '/api/keys', { name: 'native-failover', scopes: ['proxy'] })).json.key;
  for (const [provider, base, name, apiKey, priority] of [
    ['openai', mock.openaiBase, 'oa-a', 'sk-openai-a', 1],
    ['openai', mock.openaiBase, 'oa-b', 'sk-openai-b', 2],
    ['anthropic', mock.anthropicBase, 'an-a', 'sk-ant-a', 1],
    ['anthropic', mock.anthropicBase, 'an-b', 'sk-ant-b', 2],
  ] as const) {
    await router.addConnection({ provider, name, apiKey, priority, providerSpecificData: { baseUrl: base } });
  }
  expect((await router.manage('PATCH', '/api/settings', { batchPollIntervalMs: 100 })).status).toBe(200);
}, 30_000);
afterEach(() => mock.reset());
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

/** Account A of each provider is rate limited on every batch API call. */
function refuseAccountA(): void {
  mock.batches.gate = (req) => (keyOf(req).endsWith('-a') ? { type: 'status', status: 429, message: 'Rate limited', headers: { 'retry-after': '30' } } : undefined);
}

describe('native batches through the executor', () => {
  it('Anthropic: the Message Batch refused on account A (429) is made on account B, polled and read there', async () => {
    refuseAccountA();
    const client = sdk(router, key);
    const file = await upload(client, jsonl([chatLine('f-1', 'anthropic/claude-sonnet-4-5', 'hello', { max_tokens: 20 })]));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', mode: 'native' } as never);
    const done = await waitBatch(client, batch.id);
    expect(done.status, JSON.stringify(done.errors) + JSON.stringify(mock.requests.map((r) => [r.method, r.path, keyOf(r)]))).toBe('completed');
    expect(done.request_counts).toEqual({ total: 1, completed: 1, failed: 0 });
    const creates = mock.requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages/batches');
    expect(creates.map(keyOf)).toEqual([expect.stringContaining('sk-ant-a'), expect.stringContaining('sk-ant-b')]);
    // Every call after the submission went to the account holding the batch.
    const later = mock.requests.filter((r) => r.endpoint === 'anthropic.batches' && r.method === 'GET');
    expect(later.length).toBeGreaterThan(0);
    expect(later.every((r) => keyOf(r).includes('sk-ant-b'))).toBe(true);
    const [line] = await fileLines(client, done.output_file_id);
    expect(line).toMatchObject({ custom_id: 'f-1', response: { status_code: 200, body: { object: 'chat.completion' } } });
  }, 30_000);

  it('OpenAI: the file upload refused on account A goes to B, and the batch is made on B, where its file is', async () => {
    refuseAccountA();
    const client = sdk(router, key);
    const file = await upload(client, jsonl([chatLine('o-1', 'openai/gpt-4o-mini', 'one'), chatLine('o-2', 'openai/gpt-4o-mini', 'two')]));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', mode: 'native' } as never);
    const done = await waitBatch(client, batch.id);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    const uploads = mock.requests.filter((r) => r.method === 'POST' && r.path === '/v1/files');
    expect(uploads.map(keyOf)).toEqual(['Bearer sk-openai-a', 'Bearer sk-openai-b']);
    const rest = mock.requests.filter((r) => (r.endpoint === 'openai.batches' || r.endpoint === 'openai.files') && r.index > uploads[1]!.index);
    expect(rest.length).toBeGreaterThan(1);
    expect(rest.every((r) => keyOf(r) === 'Bearer sk-openai-b')).toBe(true);
  }, 30_000);

  it('a failure no account can cure fails the batch with the provider named', async () => {
    mock.batches.gate = () => ({ type: 'status', status: 400, message: 'Malformed batch' });
    const client = sdk(router, key);
    const file = await upload(client, jsonl([chatLine('x-1', 'anthropic/claude-sonnet-4-5', 'x', { max_tokens: 5 })]));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', mode: 'native' } as never);
    const done = await waitBatch(client, batch.id);
    expect(done.status).toBe('failed');
    expect(JSON.stringify(done.errors)).toContain('anthropic answered 400');
    // A client error is not the account's fault: no second account was asked.
    expect(mock.requests.filter((r) => r.method === 'POST' && r.path === '/v1/messages/batches')).toHaveLength(1);
  }, 30_000);
});
