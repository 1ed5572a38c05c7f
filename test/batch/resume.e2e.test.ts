import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startMockUpstream, type MockUpstream } from '../mocks/upstream.js';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { chatLine, fileLines, jsonl, sdk, upload, userText, waitBatch } from './helpers.js';

/**
 * Spec "Others": a restart resumes batch jobs. The daemon is killed with SIGKILL in the middle of a batch
 * and started again on the same state folder; the batch finishes, and no line recorded as done before the
 * kill reaches the upstream a second time.
 */

let mock: MockUpstream;
let home: string;
const routers: RouterProcess[] = [];

beforeAll(async () => {
  mock = await startMockUpstream();
  home = mkdtempSync(join(tmpdir(), 'router-batch-resume-'));
});
afterAll(async () => {
  for (const r of routers) await r.stop().catch(() => {});
  await mock.close();
  rmSync(home, { recursive: true, force: true });
});

describe('a batch survives SIGKILL', () => {
  it('resumes after a restart without re-sending completed lines', async () => {
    const first = await startRouter({ home });
    const created = await first.manage('POST', '/api/keys', { name: 'batch', scopes: ['proxy'] });
    const key = created.json.key as string;
    await first.addConnection({ provider: 'openai', apiKey: 'sk-upstream', providerSpecificData: { baseUrl: mock.openaiBase } });
    expect((await first.manage('PATCH', '/api/settings', { batchConcurrency: 4 })).status).toBe(200);
    // Each answer takes a little while, so the kill lands mid-batch.
    mock.handle((req) => (req.endpoint === 'openai.chat' ? { type: 'delay', ms: 30, then: { type: 'text', text: `done: ${userText(req.json)}` } } : undefined));

    const client = sdk(first, key);
    const lines = Array.from({ length: 200 }, (_, i) => chatLine(`line-${i}`, 'openai/gpt-4o-mini', `item ${i}`));
    const file = await upload(client, jsonl(lines));
    const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
    await waitBatch(client, batch.id, (b) => b.request_counts!.completed >= 50);
    process.kill(first.pid, 'SIGKILL');
    await new Promise((r) => setTimeout(r, 300));

    // What the killed daemon had committed: those lines must never be asked again.
    const db = new Database(join(home, 'router.db'));
    const doneBefore = (db.prepare('SELECT line FROM batch_lines WHERE batch_id = ?').pluck().all(batch.id) as number[]).sort((a, b) => a - b);
    const status = db.prepare('SELECT status FROM batches WHERE id = ?').pluck().get(batch.id);
    db.close();
    expect(status).toBe('in_progress');
    expect(doneBefore.length).toBeGreaterThanOrEqual(50);
    expect(doneBefore.length).toBeLessThan(200);
    const sentBefore = mock.requests.filter((r) => r.endpoint === 'openai.chat').length;

    const second = await startRouter({ home, keepHome: true });
    routers.push(second);
    const client2 = sdk(second, key);
    const done = await waitBatch(client2, batch.id);
    expect(done.status).toBe('completed');
    expect(done.request_counts).toEqual({ total: 200, completed: 200, failed: 0 });

    const perLine = new Map<string, number>();
    for (const r of mock.requests) if (r.endpoint === 'openai.chat') perLine.set(userText(r.json)!, (perLine.get(userText(r.json)!) ?? 0) + 1);
    for (const line of doneBefore) expect(perLine.get(`item ${line}`), `line ${line}`).toBe(1);
    // Every line was asked; only those in flight at the kill (at most the concurrency) were asked twice.
    expect(perLine.size).toBe(200);
    const twice = [...perLine.values()].filter((n) => n > 1).length;
    expect(twice).toBeLessThanOrEqual(4);
    expect(mock.requests.filter((r) => r.endpoint === 'openai.chat').length).toBe(200 + twice);
    expect(sentBefore).toBeGreaterThanOrEqual(doneBefore.length);

    const output = await fileLines(client2, done.output_file_id);
    expect(output.map((l) => l.custom_id)).toEqual(lines.map((l) => l.custom_id));
    expect(output[199].response.body.choices[0].message.content).toBe('done: item 199');
  }, 120_000);
});

describe('a graceful stop in the middle of a batch', () => {
  it('lets the lines in flight finish and records them: after the restart no line is sent twice (issue 27 item 6)', async () => {
    const stopHome = mkdtempSync(join(tmpdir(), 'router-batch-graceful-'));
    let second: RouterProcess | undefined;
    try {
      const first = await startRouter({ home: stopHome, keepHome: true });
      const created = await first.manage('POST', '/api/keys', { name: 'batch-graceful', scopes: ['proxy'] });
      const key = created.json.key as string;
      await first.addConnection({ provider: 'openai', apiKey: 'sk-upstream', providerSpecificData: { baseUrl: mock.openaiBase } });
      expect((await first.manage('PATCH', '/api/settings', { batchConcurrency: 3 })).status).toBe(200);
      const asked = () => mock.requests.filter((r) => r.endpoint === 'openai.chat' && userText(r.json)?.startsWith('graceful ')).length;
      // Slow answers: the stop lands while three lines are in flight.
      mock.handle((req) => (req.endpoint === 'openai.chat' && userText(req.json)?.startsWith('graceful ') ? { type: 'delay', ms: 1500, then: { type: 'text', text: `done: ${userText(req.json)}` } } : undefined));

      const client = sdk(first, key);
      const lines = Array.from({ length: 9 }, (_, i) => chatLine(`g-${i}`, 'openai/gpt-4o-mini', `graceful ${i}`));
      const file = await upload(client, jsonl(lines));
      const batch = await client.batches.create({ input_file_id: file.id, endpoint: '/v1/chat/completions', completion_window: '24h' });
      const deadline = Date.now() + 20_000;
      while (asked() < 3) {
        if (Date.now() > deadline) throw new Error(`only ${asked()} lines reached the upstream`);
        await new Promise((r) => setTimeout(r, 20));
      }
      await first.stop();
      // The three lines in flight were answered and recorded before the daemon exited; no other line started.
      const db = new Database(join(stopHome, 'router.db'));
      const recorded = db.prepare('SELECT COUNT(*) FROM batch_lines WHERE batch_id = ?').pluck().get(batch.id) as number;
      db.close();
      expect(recorded).toBe(asked());
      expect(recorded).toBe(3);

      second = await startRouter({ home: stopHome, keepHome: true });
      const done = await waitBatch(sdk(second, key), batch.id);
      expect(done.request_counts).toEqual({ total: 9, completed: 9, failed: 0 });
      const perLine = new Map<string, number>();
      for (const r of mock.requests) {
        const text = userText(r.json);
        if (r.endpoint === 'openai.chat' && text?.startsWith('graceful ')) perLine.set(text, (perLine.get(text) ?? 0) + 1);
      }
      expect(perLine.size).toBe(9);
      expect([...perLine.entries()].filter(([, n]) => n !== 1)).toEqual([]);
    } finally {
      await second?.stop().catch(() => {});
      rmSync(stopHome, { recursive: true, force: true });
    }
  }, 120_000);
});
