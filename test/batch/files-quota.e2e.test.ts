/**
 * `/v1/files` storage bounds (issue 27 item 6), against the real daemon with the official `openai` SDK:
 * a per-key quota on stored bytes (setting filesMaxStoredBytesPerKey; 413 past it, other keys unaffected,
 * room again after a delete) and expiry as OpenAI's Files API has it (`expires_after` {anchor: created_at,
 * seconds 3600..2592000}, 30 days by default; an expired file is gone: 404, not listed, its content deleted).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { toFile } from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRouter, type RouterProcess } from '../support/router-daemon.js';
import { chatLine, jsonl, sdk, upload } from './helpers.js';

let router: RouterProcess;
let key: string;
let other: string;

beforeAll(async () => {
  router = await startRouter();
  key = await router.createKey();
  other = await router.createKey();
}, 30_000);
afterAll(async () => {
  await router?.stop();
});

/** A valid batch file of about `bytes` bytes. */
function fileOf(bytes: number, tag: string): string {
  const lines: unknown[] = [];
  let text = '';
  for (let i = 0; text.length < bytes; i++) {
    lines.push(chatLine(`${tag}-${i}`, 'openai/gpt-4o-mini', 'x'.repeat(100)));
    text = jsonl(lines);
  }
  return text;
}

describe('the per-key storage quota', () => {
  it('refuses an upload past the quota with a 413; other keys are unaffected; a delete makes room', async () => {
    expect((await router.manage('PATCH', '/api/settings', { filesMaxStoredBytesPerKey: 10_000 })).status).toBe(200);
    try {
      const client = sdk(router, key);
      const first = await upload(client, fileOf(6000, 'a'));
      const refused = await upload(client, fileOf(6000, 'b')).catch((e) => e);
      expect(refused.status).toBe(413);
      expect(refused.error).toMatchObject({ code: 'storage_quota_exceeded', message: expect.stringMatching(/storage quota of 10000 bytes/) });
      // A small one still fits.
      await upload(client, fileOf(1000, 'c'));
      // Another key has its own quota.
      await upload(sdk(router, other), fileOf(6000, 'd'));
      // Deleting frees the room.
      await client.files.delete(first.id);
      await upload(client, fileOf(6000, 'e'));
    } finally {
      await router.manage('PATCH', '/api/settings', { filesMaxStoredBytesPerKey: 10 * 1024 ** 3 });
    }
  });
});

describe('expiry (expires_after)', () => {
  it('defaults to 30 days; expires_after sets it; out-of-range values are a 400', async () => {
    const client = sdk(router, key);
    const plain = await upload(client, fileOf(200, 'p'));
    expect(plain.expires_at).toBe(plain.created_at + 30 * 24 * 3600);
    const hour = await client.files.create({ file: await toFile(Buffer.from(fileOf(200, 'h')), 'h.jsonl'), purpose: 'batch', expires_after: { anchor: 'created_at', seconds: 3600 } });
    expect(hour.expires_at).toBe(hour.created_at + 3600);
    expect((await client.files.retrieve(hour.id)).expires_at).toBe(hour.expires_at);
    for (const seconds of [60, 3599, 2_592_001]) {
      const err = await client.files
        .create({ file: await toFile(Buffer.from(fileOf(200, 'x')), 'x.jsonl'), purpose: 'batch', expires_after: { anchor: 'created_at', seconds } })
        .catch((e) => e);
      expect(err.status, String(seconds)).toBe(400);
      expect(err.error).toMatchObject({ param: 'expires_after[seconds]' });
    }
    const anchor = await client.files
      .create({ file: await toFile(Buffer.from(fileOf(200, 'y')), 'y.jsonl'), purpose: 'batch', expires_after: { anchor: 'last_active_at' as 'created_at', seconds: 3600 } })
      .catch((e) => e);
    expect(anchor.status).toBe(400);
  });

  it('an expired file is gone: 404, not listed and its content deleted', async () => {
    const client = sdk(router, key);
    const file = await client.files.create({ file: await toFile(Buffer.from(fileOf(3000, 'z')), 'z.jsonl'), purpose: 'batch', expires_after: { anchor: 'created_at', seconds: 3600 } });
    const content = join(router.home, 'files', file.id);
    expect(existsSync(content)).toBe(true);
    // An hour passes: the test moves the file's expiry into the past in the daemon's own database.
    const db = new Database(join(router.home, 'router.db'));
    db.prepare('UPDATE batch_files SET expires_at = ? WHERE id = ?').run(Math.floor(Date.now() / 1000) - 1, file.id);
    db.close();
    expect((await client.files.retrieve(file.id).catch((e) => e)).status).toBe(404);
    const listed: string[] = [];
    for await (const f of client.files.list()) listed.push(f.id);
    expect(listed).not.toContain(file.id);
    expect(existsSync(content)).toBe(false);
  });
});
