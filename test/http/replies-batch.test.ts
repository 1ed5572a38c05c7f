/**
 * Real replies of the Batch API routes (OpenAI's /v1/files and /v1/batches, and /api/batches) parse with
 * the reply schema their route declares (test/support/reply-contract.ts), on a real daemon whose batch lines
 * go to the mock upstream: an upload, a batch run to its end, its output file, a cancelled batch, deletions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type MockUpstream, startMockUpstream } from '../mocks/upstream.js';
import { type CheckOptions, checkReply } from '../support/reply-contract.js';
import { type RouterProcess, startRouter } from '../support/router-daemon.js';
import { chatLine, jsonl } from '../batch/helpers.js';

let router: RouterProcess;
let mock: MockUpstream;
let asKey: CheckOptions;

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter();
  await router.addConnection({ provider: 'openai', apiKey: 'sk-up-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
  const key = (await checkReply(router, 'POST', '/api/keys', { name: 'batch', scopes: ['proxy'] }, { status: 201 })).key;
  asKey = { anonymous: true, headers: { authorization: `Bearer ${key}` } };
}, 60_000);
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

const check = (method: string, path: string, body?: unknown, opts?: CheckOptions) => checkReply(router, method, path, body, opts);

async function upload(lines: unknown[]): Promise<{ id: string }> {
  const form = new FormData();
  form.set('purpose', 'batch');
  form.set('file', new Blob([jsonl(lines)], { type: 'application/jsonl' }), 'batch.jsonl');
  return check('POST', '/v1/files', undefined, { ...asKey, raw: form });
}

async function until(path: string, done: (b: { status: string }) => boolean, opts: CheckOptions): Promise<any> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const b = await check('GET', path, undefined, opts);
    if (done(b) || Date.now() > deadline) return b;
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('Batch API replies parse with their route schema', () => {
  it('files, a batch to its end, its output, lists and deletions', async () => {
    const file = await upload([chatLine('a', 'openai/gpt-4o-mini', 'hi'), chatLine('b', 'openai/gpt-4o-mini', 'ho')]);
    await check('GET', '/v1/files', undefined, asKey);
    await check('GET', `/v1/files/${file.id}`, undefined, asKey);
    expect(await check('GET', `/v1/files/${file.id}/content`, undefined, asKey)).toContain('"custom_id":"a"');
    const batch = await check('POST', '/v1/batches', { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h', metadata: { team: 'a' } }, asKey);
    const done = await until(`/v1/batches/${batch.id}`, (b) => b.status === 'completed', asKey);
    expect(done.status).toBe('completed');
    expect(await check('GET', `/v1/files/${done.output_file_id}/content`, undefined, asKey)).toContain('"custom_id":"b"');
    await check('GET', '/v1/batches?limit=1', undefined, asKey);
    await check('GET', '/api/batches?status=completed');
    await check('GET', `/api/batches/${batch.id}`);
    await check('DELETE', `/api/batches/${batch.id}`);
    await check('DELETE', `/v1/files/${file.id}`, undefined, asKey);
  });

  it('cancelled batches, and the finished ones deleted at once', async () => {
    const slow = mock.handle(() => ({ type: 'delay', ms: 1000 }));
    const file = await upload([chatLine('a', 'openai/gpt-4o-mini', 'hi')]);
    const one = await check('POST', '/v1/batches', { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }, asKey);
    const two = await check('POST', '/v1/batches', { input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' }, asKey);
    await check('POST', `/v1/batches/${one.id}/cancel`, undefined, asKey);
    await check('POST', `/api/batches/${two.id}/cancel`);
    slow();
    await until(`/api/batches/${one.id}`, (b) => b.status === 'cancelled', {});
    await until(`/api/batches/${two.id}`, (b) => b.status === 'cancelled', {});
    expect((await check('DELETE', '/api/batches/completed')).deleted).toBe(2);
  });
});
