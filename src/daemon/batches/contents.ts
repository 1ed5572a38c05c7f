import { createReadStream, createWriteStream, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync, type WriteStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { SqlDriver } from '../store/driver.js';
import type { BatchRepository, ContentWriter, FileContents } from './port.js';
import { nowSeconds } from './store.js';

/**
 * Where the bytes of Batch API files live (the FileContents port, batches/port.ts). One machine: the state
 * folder's `files/`, one file per id, as always (`DiskFileContents`: the database and its backups stay
 * small). A cluster: rows of 1 MiB chunks in the shared database (`SqlFileContents`), so the node that
 * resumes a batch or serves `/v1/files/{id}/content` reads what another node received.
 */

/** Bytes per stored chunk of a file in the database. */
export const CHUNK_BYTES = 1024 * 1024;

/** The state folder's `files/`: one file per id, written as `<id>.part` and renamed once complete. */
export class DiskFileContents implements FileContents {
  readonly shared = false;

  constructor(readonly dir: string) {}

  /** The path of a stored file's content (ids are generated, never taken from a client). */
  pathOf(id: string): string {
    return join(this.dir, id);
  }

  writer(id: string): ContentWriter {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.pathOf(id)}.part`;
    const out: WriteStream = createWriteStream(tmp, { mode: 0o600 });
    let failure: Error | undefined;
    out.on('error', (err) => (failure ??= err));
    const closed = new Promise<void>((resolve) => out.once('close', () => resolve()));
    return {
      write: (chunk) => {
        if (failure) return Promise.reject(failure);
        if (out.write(chunk)) return Promise.resolve();
        return new Promise<void>((resolve, reject) => {
          const done = () => {
            out.off('drain', done);
            out.off('close', done);
            if (failure) reject(failure);
            else resolve();
          };
          out.on('drain', done);
          out.on('close', done);
        });
      },
      finish: async () => {
        out.end();
        await closed;
        if (failure) {
          rmSync(tmp, { force: true });
          throw failure;
        }
        renameSync(tmp, this.pathOf(id));
      },
      abort: async () => {
        out.destroy();
        await closed;
        rmSync(tmp, { force: true });
      },
    };
  }

  stream(id: string): ReadableStream<Uint8Array> {
    return Readable.toWeb(createReadStream(this.pathOf(id))) as ReadableStream<Uint8Array>;
  }

  text(id: string): Promise<string> {
    return readFile(this.pathOf(id), 'utf8');
  }

  async remove(id: string): Promise<void> {
    rmSync(this.pathOf(id), { force: true });
  }

  /** `.part` files of uploads a killed daemon never finished. */
  async sweepOrphans(beforeSec: number): Promise<number> {
    let names: string[];
    try {
      names = readdirSync(this.dir);
    } catch {
      return 0;
    }
    let removed = 0;
    for (const name of names) {
      if (!name.endsWith('.part')) continue;
      const path = join(this.dir, name);
      try {
        if (statSync(path).mtimeMs / 1000 < beforeSec) {
          rmSync(path, { force: true });
          removed++;
        }
      } catch {
        // Gone meanwhile (its upload finished or failed).
      }
    }
    return removed;
  }
}

/**
 * Contents as chunk rows of the shared database (table batch_file_chunks, migrations/pg/0030): written as
 * they arrive, at most one chunk held in memory; a file's metadata row is written only after its last
 * chunk, so a file is never listed before it is whole.
 */
export class SqlFileContents implements FileContents {
  readonly shared = true;

  constructor(private readonly driver: SqlDriver) {}

  writer(id: string): ContentWriter {
    let held: Buffer[] = [];
    let heldBytes = 0;
    let seq = 0;
    const created = nowSeconds();
    const store = async (data: Buffer) => {
      await this.driver.run('INSERT INTO batch_file_chunks (file_id, seq, data, created_at) VALUES (?, ?, ?, ?)', [id, seq++, data, created]);
    };
    const take = (bytes: number): Buffer => {
      const all = Buffer.concat(held, heldBytes);
      held = bytes < all.length ? [all.subarray(bytes)] : [];
      heldBytes = all.length - bytes;
      return all.subarray(0, bytes);
    };
    return {
      write: async (chunk) => {
        held.push(chunk);
        heldBytes += chunk.length;
        while (heldBytes >= CHUNK_BYTES) await store(take(CHUNK_BYTES));
      },
      finish: async () => {
        if (heldBytes > 0) await store(take(heldBytes));
      },
      abort: () => this.remove(id),
    };
  }

  private async chunk(id: string, seq: number): Promise<Buffer | undefined> {
    const rows = await this.driver.query<{ data: Buffer }>('SELECT data FROM batch_file_chunks WHERE file_id = ? AND seq = ?', [id, seq]);
    return rows[0]?.data;
  }

  stream(id: string): ReadableStream<Uint8Array> {
    let seq = 0;
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        const data = await this.chunk(id, seq++);
        if (data === undefined) controller.close();
        else controller.enqueue(new Uint8Array(data.buffer, data.byteOffset, data.length));
      },
    });
  }

  async text(id: string): Promise<string> {
    const decoder = new StringDecoder('utf8');
    let out = '';
    for (let seq = 0; ; seq++) {
      const data = await this.chunk(id, seq);
      if (data === undefined) break;
      out += decoder.write(data);
    }
    if (out === '' && (await this.driver.query('SELECT 1 AS x FROM batch_files WHERE id = ?', [id])).length === 0) {
      throw new Error(`file ${id} has no content`);
    }
    return out + decoder.end();
  }

  async remove(id: string): Promise<void> {
    await this.driver.run('DELETE FROM batch_file_chunks WHERE file_id = ?', [id]);
  }

  /** Chunks of uploads that never finished (no metadata row): a node killed mid-upload. */
  async sweepOrphans(beforeSec: number): Promise<number> {
    const { changes } = await this.driver.run(
      'DELETE FROM batch_file_chunks WHERE created_at < ? AND file_id NOT IN (SELECT id FROM batch_files)',
      [beforeSec],
    );
    return changes;
  }
}

/** What `copyFileContents` moved. */
export interface CopiedContents {
  files: number;
  bytes: number;
  /** Files with metadata but no content on disk (deleted by hand): listed, their batches cannot read them. */
  missing: string[];
}

/**
 * Copies the content of every file `repo` lists from one machine's `files/` into `target` (cluster
 * migrate: the metadata rows travel with the tables, the bytes do not). Streams each file in pieces.
 */
export async function copyFileContents(repo: BatchRepository, from: DiskFileContents, target: FileContents): Promise<CopiedContents> {
  const out: CopiedContents = { files: 0, bytes: 0, missing: [] };
  let after: string | undefined;
  for (;;) {
    const page = await repo.listFiles({ limit: 500, order: 'asc', ...(after ? { after } : {}) });
    for (const file of page.data) {
      if (!existsSync(from.pathOf(file.id))) {
        out.missing.push(file.id);
        continue;
      }
      const writer = target.writer(file.id);
      try {
        for await (const chunk of createReadStream(from.pathOf(file.id), { highWaterMark: CHUNK_BYTES })) {
          await writer.write(chunk as Buffer);
          out.bytes += (chunk as Buffer).length;
        }
        await writer.finish();
      } catch (err) {
        await writer.abort().catch(() => undefined);
        throw err;
      }
      out.files++;
    }
    if (!page.has_more || page.data.length === 0) return out;
    after = page.data.at(-1)!.id;
  }
}
