import Anthropic from '@anthropic-ai/sdk';
import OpenAI, { toFile } from 'openai';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from './upstream.js';

/** The mock's native batch APIs, driven by the official SDKs (what they accept is what the mock sends). */

let mock: MockUpstream;

beforeAll(async () => {
  mock = await startMockUpstream();
});
afterEach(() => mock.reset());
afterAll(() => mock.close());

describe('OpenAI Files + Batches', () => {
  it('takes a JSONL upload, runs the batch after one in_progress poll, serves output and error files', async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: mock.openaiBase, maxRetries: 0 });
    mock.handle((req) => (req.endpoint === 'openai.chat' && req.json?.messages?.[0]?.content === 'bad' ? { type: 'status', status: 400, message: 'Bad' } : undefined));
    const line = (id: string, content: string) => JSON.stringify({ custom_id: id, method: 'POST', url: '/v1/chat/completions', body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content }] } });
    const file = await client.files.create({ file: await toFile(Buffer.from(`${line('a', 'hi')}\n${line('b', 'bad')}\n`), 'in.jsonl'), purpose: 'batch' });
    expect(file).toMatchObject({ object: 'file', purpose: 'batch', filename: 'in.jsonl' });
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    expect(batch.status).toBe('validating');
    expect((await client.batches.retrieve(batch.id)).status).toBe('in_progress');
    const done = await client.batches.retrieve(batch.id);
    expect(done).toMatchObject({ status: 'completed', request_counts: { total: 2, completed: 1, failed: 1 } });
    const out = (await (await client.files.content(done.output_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(out).toEqual([expect.objectContaining({ custom_id: 'a', error: null, response: expect.objectContaining({ status_code: 200 }) })]);
    expect(out[0].response.body.choices[0].message.content).toBe('Hello from the mock.');
    const err = (await (await client.files.content(done.error_file_id!)).text()).trim().split('\n').map((l) => JSON.parse(l));
    expect(err[0]).toMatchObject({ custom_id: 'b', response: { status_code: 400, body: { error: { message: 'Bad' } } } });
    expect(mock.batches.answered).toEqual([
      { provider: 'openai', custom_id: 'a' },
      { provider: 'openai', custom_id: 'b' },
    ]);
  });

  it('lists batches newest first with their metadata, paged by after', async () => {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: mock.openaiBase, maxRetries: 0 });
    const file = await client.files.create({ file: await toFile(Buffer.from('{"custom_id":"a","method":"POST","url":"/v1/chat/completions","body":{"model":"m","messages":[]}}\n'), 'in.jsonl'), purpose: 'batch' });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) ids.push((await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { n: String(i) } })).id);
    const first = await client.batches.list({ limit: 2 });
    expect(first.data.map((b) => [b.id, b.metadata?.n])).toEqual([[ids[2], '2'], [ids[1], '1']]);
    expect(first.hasNextPage()).toBe(true);
    const all = [];
    for await (const b of client.batches.list({ limit: 2 })) all.push(b.id);
    expect(all).toEqual([...ids].reverse());
  });
});

describe('Anthropic Message Batches', () => {
  it('lists batches newest first, paged by after_id', async () => {
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, maxRetries: 0 });
    const ids: string[] = [];
    for (let i = 0; i < 3; i++) {
      ids.push((await client.messages.batches.create({ requests: [{ custom_id: `r${i}`, params: { model: 'claude-haiku-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] } }] })).id);
    }
    const all = [];
    for await (const b of client.messages.batches.list({ limit: 2 })) all.push([b.id, b.request_counts.processing]);
    expect(all).toEqual([...ids].reverse().map((id) => [id, 1]));
  });

  it('creates, polls until ended, and streams results the SDK decodes', async () => {
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, maxRetries: 0 });
    mock.handle((req) => (req.endpoint === 'anthropic.messages' && req.json?.messages?.[0]?.content === 'bad' ? { type: 'status', status: 400, message: 'Bad' } : undefined));
    const params = (content: string) => ({ model: 'claude-haiku-4-5', max_tokens: 64, messages: [{ role: 'user' as const, content }] });
    const batch = await client.messages.batches.create({ requests: [{ custom_id: 'ok', params: params('hi') }, { custom_id: 'no', params: params('bad') }] });
    expect(batch).toMatchObject({ type: 'message_batch', processing_status: 'in_progress' });
    expect((await client.messages.batches.retrieve(batch.id)).processing_status).toBe('in_progress');
    const ended = await client.messages.batches.retrieve(batch.id);
    expect(ended).toMatchObject({ processing_status: 'ended', request_counts: { succeeded: 1, errored: 1 } });
    const results = [];
    for await (const r of await client.messages.batches.results(batch.id)) results.push(r);
    expect(results[0]).toMatchObject({ custom_id: 'ok', result: { type: 'succeeded', message: { type: 'message', content: [{ type: 'text', text: 'Hello from the mock.' }] } } });
    expect(results[1]).toMatchObject({ custom_id: 'no', result: { type: 'errored', error: { type: 'error', error: { type: 'invalid_request_error', message: 'Bad' } } } });
  });

  it('cancels: the batch ends with every request canceled', async () => {
    const client = new Anthropic({ apiKey: 'sk-ant-test', baseURL: mock.url, maxRetries: 0 });
    mock.batches.pollsBeforeEnd = 100;
    const batch = await client.messages.batches.create({ requests: [{ custom_id: 'x', params: { model: 'claude-haiku-4-5', max_tokens: 8, messages: [{ role: 'user', content: 'x' }] } }] });
    expect((await client.messages.batches.cancel(batch.id)).processing_status).toBe('canceling');
    const ended = await client.messages.batches.retrieve(batch.id);
    expect(ended).toMatchObject({ processing_status: 'ended', request_counts: { canceled: 1 } });
    const results = [];
    for await (const r of await client.messages.batches.results(batch.id)) results.push(r);
    expect(results).toEqual([{ custom_id: 'x', result: { type: 'canceled' } }]);
  });
});
