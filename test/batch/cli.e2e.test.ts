import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isolateCliConfig, json, run, show } from '../cli/helpers.js';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { chatLine, jsonl, sdk, upload, waitBatch } from './helpers.js';

/** `router batches list|show|cancel|rm`: a thin client of the /api/batches management routes. */

let router: RouterProcess;
let mock: MockUpstream;
let configDir: string;
let key: string;

beforeAll(async () => {
  configDir = isolateCliConfig();
  [router, mock] = await Promise.all([startRouter(), startMockUpstream()]);
  await router.addConnection({ provider: 'openai', apiKey: 'sk-test-0123456789', providerSpecificData: { baseUrl: mock.openaiBase } });
  key = await router.createKey();
}, 60_000);

afterAll(async () => {
  await Promise.all([router?.stop(), mock?.close()]);
  rmSync(configDir, { recursive: true, force: true });
});

const R = (...args: string[]) => run([...args, '--home', router.home]);
async function ok(...args: string[]) {
  const r = await R(...args);
  expect(r.exitCode, show(r)).toBe(0);
  return r;
}

describe('router batches', () => {
  it('lists with status filters, shows, cancels and deletes batches', async () => {
    const client = sdk(router, key);
    const file = await upload(client, jsonl([chatLine('a', 'openai/gpt-4o-mini', 'hi'), chatLine('b', 'openai/gpt-4o-mini', 'there')]));
    const done = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitBatch(client, done.id);
    // A slow one to cancel.
    mock.handle((req) => (req.endpoint === 'openai.chat' ? { type: 'delay', ms: 2000 } : undefined));
    const slowFile = await upload(client, jsonl(Array.from({ length: 30 }, (_, i) => chatLine(`s${i}`, 'openai/gpt-4o-mini', 'slow'))));
    const slow = await client.batches.create({ input_file_id: slowFile.id, endpoint: '/v1/chat/completions', completion_window: '24h' });

    const table = (await ok('batches', 'list')).stdout;
    expect(table).toMatch(/^ID\s+STATUS\s+MODE\s+ENDPOINT\s+DONE\s+FAILED\s+CREATED \(UTC\)/);
    expect(table).toContain(done.id);
    expect(table).toMatch(new RegExp(`${done.id}\\s+completed\\s+local\\s+/v1/chat/completions\\s+2/2\\s+0`));
    const completed = json<any[]>(await ok('batches', 'list', '--status', 'completed', '--json'));
    expect(completed.map((b) => b.id)).toEqual([done.id]);
    const bad = await R('batches', 'list', '--status', 'nonsense');
    expect(bad.exitCode, show(bad)).toBe(2);
    expect(bad.stderr).toContain('in_progress');

    const shown = (await ok('batches', 'show', done.id)).stdout;
    expect(shown).toContain(`batch ${done.id}`);
    expect(shown).toContain('requests:     2 total, 2 completed, 0 failed');
    expect(json(await ok('batches', 'show', done.id, '--json')).request_counts).toEqual({ total: 2, completed: 2, failed: 0 });

    // A running batch cannot be deleted; cancelling it ends it.
    const busy = await R('batches', 'rm', slow.id);
    expect(busy.exitCode).toBe(1);
    expect(busy.stderr).toContain('cancel it first');
    expect((await ok('batches', 'cancel', slow.id)).stdout).toMatch(new RegExp(`batch ${slow.id} is (cancelling|cancelled)`));
    expect((await waitBatch(client, slow.id)).status).toBe('cancelled');

    expect((await ok('batches', 'rm', done.id)).stdout).toBe(`deleted batch ${done.id}\n`);
    expect((await R('batches', 'show', done.id)).exitCode).toBe(1);
    expect((await ok('batches', 'rm', '--completed')).stdout).toBe('deleted 1 finished batch\n');
    expect(json<any[]>(await ok('batches', 'list', '--json'))).toEqual([]);
    expect((await R('batches', 'rm')).exitCode).toBe(1);
  }, 60_000);

  it('has help with examples', async () => {
    const r = await ok('batches', '--help');
    for (const verb of ['list', 'show', 'cancel', 'rm']) expect(r.stdout).toMatch(new RegExp(`\\n  ${verb}\\b`));
    expect((await ok('batches', 'rm', '--help')).stdout).toContain('router batches rm --completed');
  });
});
