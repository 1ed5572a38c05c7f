import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { chatLine, fileLines, jsonl, sdk, upload, userText, waitBatch } from './helpers.js';

/**
 * `completion_window` expiry as OpenAI's Batch API does it: a batch not finished within its window ends
 * `expired` (`expired_at` set), the lines answered before are in the output file, every other line is in the
 * error file with `response: null` and `error.code` `batch_expired`, and `request_counts` count them as
 * failed. The daemon runs with ROUTER_TEST_BATCH_HOUR_MS=2000 (the test clock hook: one hour of window
 * lasts two seconds), so `1h` expires two seconds after creation.
 */

const HOUR_MS = '2000';
// The SDK types completion_window as '24h' only; router takes any whole number of hours up to 168h (the casts below).
let mock: MockUpstream;
let router: RouterProcess;
let key: string;

beforeAll(async () => {
  mock = await startMockUpstream();
  router = await startRouter({ env: { ROUTER_TEST_BATCH_HOUR_MS: HOUR_MS } });
  key = await router.createKey();
  await router.addConnection({ provider: 'openai', apiKey: 'sk-openai-upstream', providerSpecificData: { baseUrl: mock.openaiBase } });
  expect((await router.manage('PATCH', '/api/settings', { batchConcurrency: 1, batchPollIntervalMs: 200 })).status).toBe(200);
}, 30_000);
afterEach(() => mock.reset());
afterAll(async () => {
  await router?.stop();
  await mock?.close();
});

const chatCalls = () => mock.requests.filter((r) => r.endpoint === 'openai.chat');

describe('a local batch whose window closes first', () => {
  it('ends expired: answered lines in the output file, the rest batch_expired in the error file, none sent after', async () => {
    mock.handle((req) => (req.endpoint === 'openai.chat' ? { type: 'delay', ms: 400, then: { type: 'text', text: `ok ${userText(req.json)}` } } : undefined));
    const client = sdk(router, key);
    const lines = Array.from({ length: 20 }, (_, i) => chatLine(`x-${i}`, 'openai/gpt-4o-mini', `line ${i}`));
    const file = await upload(client, jsonl(lines));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '1h' as '24h' });
    expect(batch.expires_at! - batch.created_at).toBe(2);
    const done = await waitBatch(client, batch.id, undefined, 20_000);
    expect(done.status).toBe('expired');
    expect(done.expired_at).toBeGreaterThanOrEqual(done.expires_at!);
    expect(done.completed_at).toBeNull();
    const sent = chatCalls().length;
    // One line in flight at a time, 400 ms each, for about two seconds: a few were answered, most were not.
    expect(sent).toBeGreaterThan(0);
    expect(sent).toBeLessThan(15);
    expect(done.request_counts).toEqual({ total: 20, completed: sent, failed: 20 - sent });

    const output = await fileLines(client, done.output_file_id);
    expect(output.map((l) => l.custom_id)).toEqual(lines.slice(0, sent).map((l) => l.custom_id));
    expect(output[0].response.body.choices[0].message.content).toBe('ok line 0');
    const errors = await fileLines(client, done.error_file_id);
    expect(errors.map((l) => l.custom_id)).toEqual(lines.slice(sent).map((l) => l.custom_id));
    expect(errors[0]).toMatchObject({
      custom_id: `x-${sent}`,
      response: null,
      error: { code: 'batch_expired', message: 'This request could not be executed before the completion window expired.' },
    });
    expect(errors[0].id).toMatch(/^batch_req_/);
    // Nothing goes out once the batch has ended.
    await new Promise((r) => setTimeout(r, 600));
    expect(chatCalls().length).toBe(sent);
  }, 30_000);

  it('a batch whose window passed while the daemon was down expires at the next start without sending its lines', async () => {
    const home = mkdtempSync(join(tmpdir(), 'router-batch-expiry-'));
    try {
      const first = await startRouter({ home, env: { ROUTER_TEST_BATCH_HOUR_MS: HOUR_MS } });
      const k = await first.createKey();
      await first.addConnection({ provider: 'openai', apiKey: 'sk-openai-upstream', providerSpecificData: { baseUrl: mock.openaiBase } });
      expect((await first.manage('PATCH', '/api/settings', { batchConcurrency: 1 })).status).toBe(200);
      mock.handle((req) => (req.endpoint === 'openai.chat' ? { type: 'delay', ms: 300 } : undefined));
      const c1 = sdk(first, k);
      const file = await upload(c1, jsonl(Array.from({ length: 10 }, (_, i) => chatLine(`r-${i}`, 'openai/gpt-4o-mini', `r ${i}`))));
      const batch = await c1.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '1h' as '24h' });
      await waitBatch(c1, batch.id, (b) => b.request_counts!.completed >= 1);
      process.kill(first.pid, 'SIGKILL');
      await new Promise((r) => setTimeout(r, 2500));
      const sentBefore = chatCalls().length;

      const second = await startRouter({ home, keepHome: true, env: { ROUTER_TEST_BATCH_HOUR_MS: HOUR_MS } });
      try {
        const c2 = sdk(second, k);
        const done = await waitBatch(c2, batch.id, undefined, 10_000);
        expect(done.status).toBe('expired');
        expect(chatCalls().length).toBe(sentBefore);
        expect(done.request_counts!.completed + done.request_counts!.failed).toBe(10);
        const errors = await fileLines(c2, done.error_file_id);
        expect(errors.length).toBe(done.request_counts!.failed);
        expect(errors.every((l) => l.error?.code === 'batch_expired')).toBe(true);
      } finally {
        await second.stop();
      }
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  }, 40_000);
});

describe('a native batch whose window closes first', () => {
  it('cancels the provider batch and ends expired, its unanswered lines batch_expired', async () => {
    mock.batches.pollsBeforeEnd = 1000;
    const client = sdk(router, key);
    const file = await upload(client, jsonl([chatLine('n-1', 'openai/gpt-4o-mini', 'a'), chatLine('n-2', 'openai/gpt-4o-mini', 'b')]));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '1h', mode: 'native' } as never);
    expect((batch as any).mode).toBe('native');
    const done = await waitBatch(client, batch.id, undefined, 20_000);
    expect(done.status).toBe('expired');
    expect(done.expired_at).toBeGreaterThanOrEqual(done.expires_at!);
    expect(mock.requests.some((r) => r.method === 'POST' && /^\/v1\/batches\/[^/]+\/cancel$/.test(r.path))).toBe(true);
    expect(done.request_counts).toEqual({ total: 2, completed: 0, failed: 2 });
    const errors = await fileLines(client, done.error_file_id);
    expect(errors.map((l) => [l.custom_id, l.error.code])).toEqual([
      ['n-1', 'batch_expired'],
      ['n-2', 'batch_expired'],
    ]);
  }, 30_000);
});
