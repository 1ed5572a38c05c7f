import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter } from '../support/router-daemon.js';
import { chatLine, fileLines, jsonl, sdk, upload, waitBatch } from './helpers.js';

/**
 * A native batch is submitted to its provider once, even when the daemon dies between the provider
 * accepting it and router saving its id. The first daemon runs with ROUTER_TEST_EXIT_AFTER_NATIVE_SUBMIT=1
 * (the test hook: it SIGKILLs itself at exactly that point); the second, on the same state folder, finds
 * the provider batch (OpenAI: by the `router_batch_id` metadata; Anthropic: by creation time and request
 * count) and polls it instead of submitting again. The mock counts the provider's create calls.
 */

let mock: MockUpstream;
const homes: string[] = [];

beforeAll(async () => {
  mock = await startMockUpstream();
});
afterEach(() => mock.reset());
afterAll(async () => {
  await mock?.close();
  for (const h of homes) rmSync(h, { recursive: true, force: true });
});

async function gone(pid: number): Promise<void> {
  const until = Date.now() + 15_000;
  for (;;) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    if (Date.now() > until) throw new Error(`daemon ${pid} did not exit after the native submission`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Starts a daemon that dies right after submitting, creates a native batch of `lines`, waits for the death. */
async function crashAfterSubmit(provider: 'openai' | 'anthropic', model: string, env: Record<string, string> = {}, window = '24h') {
  const home = mkdtempSync(join(tmpdir(), 'router-native-crash-'));
  homes.push(home);
  const first = await startRouter({ home, env: { ROUTER_TEST_EXIT_AFTER_NATIVE_SUBMIT: '1', ...env } });
  const key = await first.createKey();
  const base = provider === 'openai' ? mock.openaiBase : mock.anthropicBase;
  await first.addConnection({ provider, apiKey: `sk-${provider}-upstream`, providerSpecificData: { baseUrl: base } });
  expect((await first.manage('PATCH', '/api/settings', { batchPollIntervalMs: 100 })).status).toBe(200);
  const client = sdk(first, key);
  const lines = [chatLine('c-1', model, 'one', { max_tokens: 20 }), chatLine('c-2', model, 'two', { max_tokens: 20 })];
  const file = await upload(client, jsonl(lines));
  // The reply may or may not get out before the daemon kills itself; the batch id is read from its database.
  await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: window, mode: 'native' } as never).catch(() => undefined);
  await gone(first.pid);
  const db = new Database(join(home, 'router.db'), { readonly: true });
  const row = db.prepare('SELECT id, status, native FROM batches').get() as { id: string; status: string; native: string };
  db.close();
  // Killed at the point guarded against: the intent is saved, the provider's id is not.
  expect(row.status).toBe('in_progress');
  const state = JSON.parse(row.native);
  expect(state.submitting).toEqual(expect.any(Number));
  expect(state.remoteId).toBeUndefined();
  return { home, key, batchId: row.id, lines };
}

const creates = (path: string) => mock.requests.filter((r) => r.method === 'POST' && r.path === path).length;

describe('a crash between submitting a native batch and saving its id', () => {
  it('OpenAI: the next start finds the batch by its router_batch_id metadata and does not submit it again', async () => {
    const { home, key, batchId } = await crashAfterSubmit('openai', 'openai/gpt-4o-mini');
    expect(creates('/v1/batches')).toBe(1);
    expect(creates('/v1/files')).toBe(1);
    const created = mock.requests.find((r) => r.method === 'POST' && r.path === '/v1/batches')!;
    expect(created.json.metadata).toEqual({ router_batch_id: batchId });

    const second = await startRouter({ home, keepHome: true });
    try {
      const client = sdk(second, key);
      const done = await waitBatch(client, batchId, undefined, 20_000);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
      expect(creates('/v1/batches')).toBe(1);
      expect(creates('/v1/files')).toBe(1);
      expect(mock.requests.some((r) => r.method === 'GET' && r.path === '/v1/batches')).toBe(true);
      expect(mock.batches.answered.map((a) => a.custom_id)).toEqual(['c-1', 'c-2']);
      expect((await fileLines(client, done.output_file_id)).map((l) => l.custom_id)).toEqual(['c-1', 'c-2']);
    } finally {
      await second.stop();
    }
  }, 60_000);

  it('Anthropic: the next start finds the Message Batch by creation time and request count', async () => {
    const { home, key, batchId } = await crashAfterSubmit('anthropic', 'anthropic/claude-sonnet-4-5');
    expect(creates('/v1/messages/batches')).toBe(1);
    const second = await startRouter({ home, keepHome: true });
    try {
      const client = sdk(second, key);
      const done = await waitBatch(client, batchId, undefined, 20_000);
      expect(done.status).toBe('completed');
      expect(done.request_counts).toEqual({ total: 2, completed: 2, failed: 0 });
      expect(creates('/v1/messages/batches')).toBe(1);
      expect(mock.requests.some((r) => r.method === 'GET' && r.path === '/v1/messages/batches')).toBe(true);
      expect((await fileLines(client, done.output_file_id)).map((l) => l.custom_id)).toEqual(['c-1', 'c-2']);
    } finally {
      await second.stop();
    }
  }, 60_000);

  it('a submission the provider never recorded is sent again (reusing the uploaded input file)', async () => {
    const { home, key, batchId } = await crashAfterSubmit('openai', 'openai/gpt-4o-mini');
    // As if the provider had lost the batch: the list has nothing with router's id.
    mock.batches.batches.clear();
    const second = await startRouter({ home, keepHome: true });
    try {
      const client = sdk(second, key);
      const done = await waitBatch(client, batchId, undefined, 20_000);
      expect(done.status).toBe('completed');
      expect(creates('/v1/batches')).toBe(2);
      expect(creates('/v1/files')).toBe(1);
    } finally {
      await second.stop();
    }
  }, 60_000);

  it('a lost submission whose window has passed is not sent again: the batch expires', async () => {
    // ROUTER_TEST_BATCH_HOUR_MS=2000: the '1h' window closes two seconds after creation.
    const env = { ROUTER_TEST_BATCH_HOUR_MS: '2000' };
    const { home, key, batchId } = await crashAfterSubmit('openai', 'openai/gpt-4o-mini', env, '1h');
    mock.batches.batches.clear();
    await new Promise((r) => setTimeout(r, 2500));
    const second = await startRouter({ home, keepHome: true, env });
    try {
      const client = sdk(second, key);
      const done = await waitBatch(client, batchId, undefined, 20_000);
      expect(done.status).toBe('expired');
      expect(creates('/v1/batches')).toBe(1);
      expect(done.request_counts).toEqual({ total: 2, completed: 0, failed: 2 });
      expect((await fileLines(client, done.error_file_id)).map((l) => [l.custom_id, l.error.code])).toEqual([
        ['c-1', 'batch_expired'],
        ['c-2', 'batch_expired'],
      ]);
    } finally {
      await second.stop();
    }
  }, 60_000);
});
