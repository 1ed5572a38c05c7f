/**
 * The batches module's storage ports on both adapters (docs/storage.md): the same checks against a migrated
 * SQLite file and a real PostgreSQL 15. BatchRepository runs its one SQL adapter on both; FileContents is the
 * state folder's disk on one machine and chunk rows on PostgreSQL; BatchLeases are rows of the shared database
 * (one machine has no other node: LocalLeases).
 */
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CHUNK_BYTES, DiskFileContents, SqlFileContents } from '../../src/daemon/batches/contents.js';
import { LocalLeases, SqlBatchLeases } from '../../src/daemon/batches/leases.js';
import type { FileContents } from '../../src/daemon/batches/port.js';
import { SqlBatchRepository } from '../../src/daemon/batches/sql-repository.js';
import { newId, nowSeconds, type BatchRow, type FileRow } from '../../src/daemon/batches/store.js';
import { adapterTitle, storageAdapters } from '../support/storage.js';

function fileRow(over: Partial<FileRow> = {}): FileRow {
  return { id: newId('file-'), key_id: 'key-a', purpose: 'batch', filename: 'in.jsonl', bytes: 100, lines: 2, created_at: 1_700_000_000, expires_at: null, ...over };
}

function batchRow(over: Partial<BatchRow> = {}): BatchRow {
  return {
    id: newId('batch_'),
    key_id: 'key-a',
    endpoint: '/v1/chat/completions',
    input_file_id: 'file-in',
    completion_window: '24h',
    mode: 'local',
    status: 'validating',
    metadata: '{"a":"b"}',
    total: 3,
    completed: 0,
    failed: 0,
    output_file_id: null,
    error_file_id: null,
    errors: null,
    native: null,
    created_at: 1_700_000_000,
    in_progress_at: null,
    expires_at: 1_700_086_400,
    finalizing_at: null,
    completed_at: null,
    failed_at: null,
    expired_at: null,
    cancelling_at: null,
    cancelled_at: null,
    ...over,
  };
}

async function collect(it: AsyncIterable<string>): Promise<string[]> {
  const out: string[] = [];
  for await (const s of it) out.push(s);
  return out;
}

async function readAll(stream: ReadableStream<Uint8Array>): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const chunk of stream as unknown as AsyncIterable<Uint8Array>) parts.push(Buffer.from(chunk));
  return Buffer.concat(parts);
}

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

for (const adapter of storageAdapters()) {
  describe.skipIf(adapter.unavailable)(adapterTitle('BatchRepository', adapter), () => {
    const open = async () => new SqlBatchRepository((await adapter.open()).driver);

    it('stores file metadata and pages it in upload order both ways, by owner and purpose', async () => {
      const repo = await open();
      const files = [fileRow(), fileRow({ purpose: 'batch_output' }), fileRow({ key_id: null }), fileRow(), fileRow({ expires_at: 1_800_000_000 })];
      for (const f of files) await repo.addFile(f);
      expect(await repo.file(files[4]!.id)).toEqual(files[4]);
      expect(await repo.file('file-none')).toBeUndefined();
      const mine = files.filter((f) => f.key_id === 'key-a');
      const desc = await repo.listFiles({ keyId: 'key-a', limit: 2, order: 'desc' });
      expect(desc.data.map((f) => f.id)).toEqual([mine[3]!.id, mine[2]!.id]);
      expect(desc.has_more).toBe(true);
      const next = await repo.listFiles({ keyId: 'key-a', limit: 10, order: 'desc', after: desc.data[1]!.id });
      expect(next.data.map((f) => f.id)).toEqual([mine[1]!.id, mine[0]!.id]);
      expect(next.has_more).toBe(false);
      const asc = await repo.listFiles({ limit: 10, order: 'asc', after: files[1]!.id });
      expect(asc.data.map((f) => f.id)).toEqual(files.slice(2).map((f) => f.id));
      expect((await repo.listFiles({ purpose: 'batch_output', limit: 10, order: 'desc' })).data.map((f) => f.id)).toEqual([files[1]!.id]);
      // An unknown cursor lists from the start.
      expect((await repo.listFiles({ limit: 10, order: 'desc', after: 'file-unknown' })).data).toHaveLength(5);
      expect(await repo.removeFile(files[0]!.id)).toBe(true);
      expect(await repo.removeFile(files[0]!.id)).toBe(false);
    });

    it('counts stored bytes per owner (the dashboard pool is null; outputs do not count)', async () => {
      const repo = await open();
      await repo.addFile(fileRow({ bytes: 3_000_000_000 }));
      await repo.addFile(fileRow({ bytes: 5 }));
      await repo.addFile(fileRow({ bytes: 999, purpose: 'batch_output' }));
      await repo.addFile(fileRow({ key_id: null, bytes: 7 }));
      expect(await repo.storedBytes('key-a')).toBe(3_000_000_005);
      expect(await repo.storedBytes(null)).toBe(7);
      expect(await repo.storedBytes('key-b')).toBe(0);
    });

    it('lists expired files except the input of a batch still running; knows which files are in use', async () => {
      const repo = await open();
      const old = fileRow({ expires_at: 100 });
      const running = fileRow({ expires_at: 100 });
      const fresh = fileRow({ expires_at: 10_000 });
      for (const f of [old, running, fresh, fileRow()]) await repo.addFile(f);
      await repo.addBatch(batchRow({ input_file_id: running.id, status: 'in_progress' }));
      await repo.addBatch(batchRow({ input_file_id: old.id, status: 'completed' }));
      expect(await repo.expiredFiles(200)).toEqual([old.id]);
      expect(await repo.fileInUse(running.id)).toBe(true);
      expect(await repo.fileInUse(old.id)).toBe(false);
    });

    it('stores batches field for field, moves their status with its time stamp, pages and filters them', async () => {
      const repo = await open();
      const rows = [batchRow(), batchRow({ key_id: null, status: 'completed' }), batchRow({ status: 'in_progress' }), batchRow({ status: 'cancelling' })];
      for (const r of rows) await repo.addBatch(r);
      expect(await repo.batch(rows[0]!.id)).toEqual(rows[0]);
      const before = nowSeconds();
      await repo.setStatus(rows[0]!.id, 'in_progress');
      await repo.setStatus(rows[0]!.id, 'failed', { errors: '[{"code":"x"}]', output_file_id: 'file-o' });
      const failed = (await repo.batch(rows[0]!.id))!;
      expect(failed).toMatchObject({ status: 'failed', errors: '[{"code":"x"}]', output_file_id: 'file-o' });
      expect(failed.in_progress_at).toBeGreaterThanOrEqual(before);
      expect(failed.failed_at).toBeGreaterThanOrEqual(before);
      await expect(repo.setStatus(rows[0]!.id, 'failed', { ['bogus; DROP TABLE batches' as 'errors']: 'x' })).rejects.toThrow('unknown batch column');
      await repo.setNative(rows[2]!.id, { provider: 'openai', model: 'openai/gpt-4o-mini', remoteId: 'batch_remote' });
      await repo.setCounts(rows[2]!.id, 5, 1);
      expect(await repo.batch(rows[2]!.id)).toMatchObject({ completed: 5, failed: 1, native: JSON.stringify({ provider: 'openai', model: 'openai/gpt-4o-mini', remoteId: 'batch_remote' }) });
      expect((await repo.unfinished()).map((r) => r.id)).toEqual([rows[2]!.id, rows[3]!.id]);
      const first = await repo.listBatches({ limit: 3 });
      expect(first.data.map((r) => r.id)).toEqual([rows[3]!.id, rows[2]!.id, rows[1]!.id]);
      expect(first.has_more).toBe(true);
      expect((await repo.listBatches({ limit: 3, after: rows[1]!.id })).data.map((r) => r.id)).toEqual([rows[0]!.id]);
      expect((await repo.listBatches({ keyId: 'key-a', statuses: ['in_progress', 'failed'], limit: 10 })).data.map((r) => r.id)).toEqual([rows[2]!.id, rows[0]!.id]);
    });

    it('records each finished line once, counts it once, and reads results in input order page by page', async () => {
      const repo = await open();
      const b = batchRow({ total: 2500 });
      await repo.addBatch(b);
      await repo.finishLine(b.id, { line: 3, ok: true, result: 'r3' });
      await repo.finishLine(b.id, { line: 3, ok: true, result: 'r3 again' });
      await repo.finishLine(b.id, { line: 1, ok: false, result: 'e1' });
      expect(await repo.batch(b.id)).toMatchObject({ completed: 1, failed: 1 });
      // Many lines at once (more than one statement and more than one result page), one already recorded.
      const many = Array.from({ length: 2500 }, (_, i) => ({ line: i, ok: i % 5 !== 0, result: `line ${i}` }));
      await repo.recordLines(b.id, many, false);
      const done = await repo.doneLines(b.id);
      expect(done.size).toBe(2500);
      // Lines 1 and 3 keep their first result (line 1 failed then).
      expect(await repo.batch(b.id)).toMatchObject({ completed: 1999, failed: 501 });
      const ok = await collect(repo.results(b.id, true));
      expect(ok).toHaveLength(1999);
      expect(ok.slice(0, 3)).toEqual(['line 2', 'r3', 'line 4']);
      expect((await collect(repo.results(b.id, false))).slice(0, 3)).toEqual(['line 0', 'e1', 'line 5']);
      // Native mode replaces every recorded line with the provider's.
      await repo.recordLines(b.id, [{ line: 0, ok: true, result: 'p0' }], true);
      expect(await repo.batch(b.id)).toMatchObject({ completed: 1, failed: 0 });
      expect(await collect(repo.results(b.id, true))).toEqual(['p0']);
      await repo.removeBatch(b.id);
      expect(await repo.batch(b.id)).toBeUndefined();
      expect((await repo.doneLines(b.id)).size).toBe(0);
    });
  });

  describe.skipIf(adapter.unavailable)(adapterTitle('FileContents', adapter), () => {
    const open = async (): Promise<{ contents: FileContents; repo: SqlBatchRepository }> => {
      const storage = await adapter.open();
      const repo = new SqlBatchRepository(storage.driver);
      if (adapter.name === 'postgres') return { contents: new SqlFileContents(storage.driver), repo };
      const dir = mkdtempSync(join(tmpdir(), 'router-contents-'));
      dirs.push(dir);
      return { contents: new DiskFileContents(join(dir, 'files')), repo };
    };
    // Two-byte characters fall across chunk boundaries: text() must decode them whole.
    const bytes = (n: number) => Buffer.alloc(n, 'line é\n');

    it('stores a file written in pieces and reads it back whole, as a stream and as text (several chunks)', async () => {
      const { contents } = await open();
      const data = bytes(Math.floor(CHUNK_BYTES * 2.5));
      const w = contents.writer('file-a');
      for (let i = 0; i < data.length; i += 70_001) await w.write(data.subarray(i, i + 70_001));
      await w.finish();
      expect((await readAll(contents.stream('file-a'))).equals(data)).toBe(true);
      expect(await contents.text('file-a')).toBe(data.toString('utf8'));
      await contents.remove('file-a');
      await expect(contents.text('file-a')).rejects.toThrow();
    });

    it('an aborted write leaves nothing; a write never finished (its node died) is swept once old', async () => {
      const { contents, repo } = await open();
      const w = contents.writer('file-b');
      await w.write(bytes(CHUNK_BYTES + 10));
      await w.abort();
      await expect(contents.text('file-b')).rejects.toThrow();
      const kept = contents.writer('file-kept');
      await kept.write(bytes(CHUNK_BYTES + 10));
      await kept.finish();
      await repo.addFile(fileRow({ id: 'file-kept' }));
      const dead = contents.writer('file-dead');
      await dead.write(bytes(CHUNK_BYTES + 10));
      expect(await contents.sweepOrphans(nowSeconds() - 3600)).toBe(0);
      expect(await contents.sweepOrphans(nowSeconds() + 10)).toBeGreaterThan(0);
      expect(Buffer.byteLength(await contents.text('file-kept'))).toBe(CHUNK_BYTES + 10);
      if (contents instanceof DiskFileContents) expect(readdirSync(contents.dir)).toEqual(['file-kept']);
    });
  });
}

describe('BatchLeases', () => {
  it('one machine: this process holds every batch and has nothing to take over', async () => {
    const local = new LocalLeases();
    expect(local.shared).toBe(false);
    expect(await local.claim('b')).toBe(true);
    expect([...(await local.renew(['a', 'b']))]).toEqual(['a', 'b']);
    expect(await local.lapsed()).toEqual([]);
  });
});

for (const adapter of storageAdapters().filter((a) => a.name === 'postgres')) {
  describe.skipIf(adapter.unavailable)(adapterTitle('SqlBatchLeases', adapter), () => {
    it('one node holds a batch; another takes it only once the lease lapsed (plus the grace); the first then lost it', async () => {
      const storage = await adapter.open();
      const repo = new SqlBatchRepository(storage.driver);
      let now = Date.parse('2026-05-01T00:00:00Z');
      const other = await storage.connect();
      const a = new SqlBatchLeases(storage.driver, 'node-a', 10_000, 2_000, () => now);
      const b = new SqlBatchLeases(other, 'node-b', 10_000, 2_000, () => now);
      const run = batchRow({ status: 'in_progress' });
      const done = batchRow({ status: 'completed' });
      const free = batchRow({ status: 'validating' });
      for (const r of [run, done, free]) await repo.addBatch(r);
      expect(await a.lapsed()).toEqual([run.id, free.id]);
      expect(await a.claim(run.id)).toBe(true);
      expect(await b.claim(run.id)).toBe(false);
      expect(await b.lapsed()).toEqual([free.id]);
      now += 9_000;
      expect([...(await a.renew([run.id]))]).toEqual([run.id]);
      now += 11_000; // one second past the renewed lease: inside the grace
      expect(await b.claim(run.id)).toBe(false);
      now += 1_500;
      expect(await b.lapsed()).toEqual([run.id, free.id]);
      expect(await b.claim(run.id)).toBe(true);
      expect([...(await a.renew([run.id]))]).toEqual([]);
      expect(await a.claim(run.id)).toBe(false);
      // A node restarted under its own id takes its own batches back at once; a release frees them at once.
      expect(await b.claim(run.id)).toBe(true);
      await b.release([run.id]);
      expect(await a.claim(run.id)).toBe(true);
    });

    it('of two nodes claiming the same lapsed batch together, exactly one gets it', async () => {
      const storage = await adapter.open();
      const repo = new SqlBatchRepository(storage.driver);
      const nodes = await Promise.all(Array.from({ length: 6 }, async (_, i) => new SqlBatchLeases(await storage.connect(), `node-${i}`, 10_000)));
      for (let round = 0; round < 10; round++) {
        const row = batchRow({ status: 'in_progress' });
        await repo.addBatch(row);
        const won = await Promise.all(nodes.map((n) => n.claim(row.id)));
        expect(won.filter(Boolean)).toHaveLength(1);
      }
    });
  });
}
