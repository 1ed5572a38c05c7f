import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { chatLine, fileLines, jsonl, sdk, upload, userText, waitBatch } from './helpers.js';

/**
 * Native mode: a batch whose lines all go to one provider with a batch API is submitted there (the mock
 * speaks OpenAI's Files + Batches and Anthropic's Message Batches) and polled; results come back in
 * OpenAI's output format, priced at the batch rate.
 */

let mock: MockUpstream;
let router: RouterProcess;
let key: string;
let keyId: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  const created = await router.manage('POST', '/api/keys', { name: 'native', scopes: ['proxy'] });
  key = created.json.key;
  keyId = created.json.id;
  await router.addConnection({ provider: 'openai', apiKey: 'sk-openai-upstream', providerSpecificData: { baseUrl: mock.openaiBase } });
  await router.addConnection({ provider: 'anthropic', apiKey: 'sk-ant-upstream', providerSpecificData: { baseUrl: mock.anthropicBase } });
  await router.addConnection({ provider: 'groq', apiKey: 'gsk-upstream', providerSpecificData: { baseUrl: mock.openaiBase } });
  expect((await router.manage('PATCH', '/api/settings', { batchPollIntervalMs: 100 })).status).toBe(200);
}, 30_000);
afterEach(() => mock.reset());
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

async function logs(): Promise<any[]> {
  await new Promise((r) => setTimeout(r, 300));
  return (await router.manage('GET', `/api/logs?key=${keyId}&limit=500`)).json.logs;
}

describe('native mode against OpenAI', () => {
  it('uploads the lines as a file, creates a provider batch, polls it and maps the results back', async () => {
    mock.handle((req) => (req.endpoint === 'openai.chat' && userText(req.json) === 'break') ? { type: 'status', status: 400, message: 'Bad line' } : undefined);
    const client = sdk(router, key);
    const lines = [chatLine('n-1', 'openai/gpt-4o-mini', 'one'), chatLine('n-2', 'openai/gpt-4o-mini', 'break'), chatLine('n-3', 'openai/gpt-4o-mini', 'three')];
    const file = await upload(client, jsonl(lines));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', mode: 'native' } as never);
    expect((batch as any).mode).toBe('native');
    const done = await waitBatch(client, batch.id);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 3, completed: 2, failed: 1 });

    // Router went through the provider's batch API, never its chat endpoint.
    const paths = mock.requests.map((r) => `${r.method} ${r.path}`);
    expect(paths).toContain('POST /v1/files');
    expect(paths).toContain('POST /v1/batches');
    expect(paths.some((p) => /^GET \/v1\/batches\/batch_mock/.test(p))).toBe(true);
    expect(mock.requests.filter((r) => r.endpoint === 'openai.chat')).toHaveLength(0);
    expect(mock.requests.find((r) => r.path === '/v1/batches')!.headers.authorization).toBe('Bearer sk-openai-upstream');
    // The uploaded file carries the provider's model id.
    const uploaded = [...mock.batches.files.values()].find((f) => f.purpose === 'batch')!;
    expect(JSON.parse(uploaded.content.split('\n')[0]!).body.model).toBe('gpt-4o-mini');

    const output = await fileLines(client, done.output_file_id);
    expect(output.map((l) => l.custom_id)).toEqual(['n-1', 'n-3']);
    expect(output[0]).toMatchObject({ response: { status_code: 200, body: { object: 'chat.completion' } }, error: null });
    const errors = await fileLines(client, done.error_file_id);
    expect(errors).toEqual([expect.objectContaining({ custom_id: 'n-2', response: expect.objectContaining({ status_code: 400 }) })]);

    // A usage row per answered line, priced at half the list price.
    const rows = (await logs()).filter((r) => r.provider === 'openai');
    expect(rows.filter((r) => r.status === 200)).toHaveLength(2);
    const ok = rows.find((r) => r.status === 200);
    const full = (ok.tokensIn * 0.15 + ok.tokensOut * 0.6) / 1e6;
    expect(ok.costUsd).toBeCloseTo(full / 2, 10);
  }, 30_000);

  it('auto falls back to local when the lines span providers; native refuses with the reason', async () => {
    const client = sdk(router, key);
    const file = await upload(client, jsonl([chatLine('a', 'openai/gpt-4o-mini', 'x'), chatLine('b', 'groq/llama-3', 'y')]));
    const refused = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', mode: 'native' } as never).catch((e) => e);
    expect(refused.status).toBe(400);
    expect(refused.message).toContain('cannot run natively');
    const auto = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', mode: 'auto' } as never);
    expect((auto as any).mode).toBe('local');
    const done = await waitBatch(client, auto.id);
    expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
    expect(mock.requests.filter((r) => r.endpoint === 'openai.chat')).toHaveLength(2);
  }, 30_000);
});

describe('native mode against Anthropic', () => {
  it('submits a Message Batch with translated requests and maps its results into chat completions', async () => {
    mock.handle((req) => (req.endpoint === 'anthropic.messages' && userText(req.json) === 'fail') ? { type: 'status', status: 400, message: 'Nope' } : undefined);
    const client = sdk(router, key);
    const lines = [
      chatLine('a-1', 'anthropic/claude-sonnet-4-5', 'hello', { max_tokens: 50 }),
      chatLine('a-2', 'anthropic/claude-sonnet-4-5', 'fail', { max_tokens: 50 }),
    ];
    const file = await upload(client, jsonl(lines));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', mode: 'auto' } as never);
    expect((batch as any).mode).toBe('native');
    const done = await waitBatch(client, batch.id);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 2, completed: 1, failed: 1 });

    const create = mock.requests.find((r) => r.method === 'POST' && r.path === '/v1/messages/batches')!;
    expect(create.headers['x-api-key'] ?? create.headers.authorization).toContain('sk-ant-upstream');
    expect(create.json.requests[0]).toMatchObject({ custom_id: 'a-1', params: { model: 'claude-sonnet-4-5', max_tokens: 50, messages: [{ role: 'user' }] } });
    expect(mock.requests.some((r) => r.path.endsWith('/results'))).toBe(true);
    expect(mock.requests.filter((r) => r.endpoint === 'anthropic.messages')).toHaveLength(0);

    const [ok] = await fileLines(client, done.output_file_id);
    expect(ok).toMatchObject({ custom_id: 'a-1', response: { status_code: 200, body: { object: 'chat.completion', choices: [{ message: { role: 'assistant', content: 'Hello from the mock.' } }] } } });
    expect(ok.response.body.usage.prompt_tokens).toBeGreaterThan(0);
    const [err] = await fileLines(client, done.error_file_id);
    expect(err).toMatchObject({ custom_id: 'a-2', response: { status_code: 400, body: { error: { message: 'Nope', type: 'invalid_request_error' } } } });

    const rows = (await logs()).filter((r) => r.provider === 'anthropic' && r.status === 200);
    expect(rows).toHaveLength(1);
    expect(rows[0].costUsd).toBeGreaterThan(0);
  }, 30_000);

  it('cancel reaches the provider batch', async () => {
    mock.batches.pollsBeforeEnd = 1000;
    const client = sdk(router, key);
    const file = await upload(client, jsonl([chatLine('c1', 'anthropic/claude-sonnet-4-5', 'x', { max_tokens: 10 })]));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', mode: 'native' } as never);
    await waitBatch(client, batch.id, (b) => b.status === 'in_progress');
    await new Promise((r) => setTimeout(r, 300));
    await client.batches.cancel(batch.id);
    const done = await waitBatch(client, batch.id);
    expect(done.status).toBe('cancelled');
    expect(mock.requests.some((r) => r.method === 'POST' && /\/v1\/messages\/batches\/[^/]+\/cancel$/.test(r.path))).toBe(true);
    const errors = await fileLines(client, done.error_file_id);
    expect(errors).toEqual([expect.objectContaining({ custom_id: 'c1', response: null, error: expect.objectContaining({ code: 'batch_cancelled' }) })]);
  }, 30_000);
});
