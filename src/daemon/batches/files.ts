import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import busboy from 'busboy';
import type { H3Event } from 'h3';
import { FastResponse } from 'srvx';
import { dropRestOfBody } from '../http/body.js';
import { badRequest, RouterError } from '../http/errors.js';
import { HEADER } from '../../shared/headers.js';
import { malformedMultipart } from '../proxy/multipart.js';
import { JsonlChecker } from './jsonl.js';
import type { BatchRepository, ContentWriter, FileContents } from './port.js';
import { newId, nowSeconds, type FileRow } from './store.js';

/**
 * Files of the Batch API (OpenAI's `/v1/files`): uploads are parsed as they stream in (busboy), stored as
 * they arrive through the FileContents port (the state folder's `files/` on one machine, the shared
 * database in a cluster: batches/contents.ts) and checked line by line as batch JSONL; the metadata goes
 * to the batch tables.
 */

/** Multipart framing allowed on top of the file itself (boundaries, part headers, the purpose field). */
const MULTIPART_OVERHEAD = 64 * 1024;

/** The OpenAI file object of a stored file. */
export function fileObject(row: FileRow): Record<string, unknown> {
  return {
    id: row.id,
    object: 'file',
    bytes: row.bytes,
    created_at: row.created_at,
    filename: row.filename,
    purpose: row.purpose,
    status: 'processed',
    expires_at: row.expires_at ?? null,
    status_details: null,
  };
}

function notFound(id: string): RouterError {
  return new RouterError(404, `No such File object: ${id.slice(0, 100)}`);
}

/** OpenAI's bounds on `expires_after[seconds]`: one hour to 30 days. */
const EXPIRY_MIN_S = 3600;
const EXPIRY_MAX_S = 30 * 24 * 3600;
/** Uploaded files expire after 30 days unless `expires_after` says otherwise (OpenAI's default for batch files). */
export const DEFAULT_FILE_EXPIRY_S = EXPIRY_MAX_S;

/** `expires_after[anchor]` and `expires_after[seconds]` of an upload, checked as OpenAI does: the seconds after creation. */
function expiryOf(anchor: string | undefined, seconds: string | undefined): number {
  if (anchor === undefined && seconds === undefined) return DEFAULT_FILE_EXPIRY_S;
  if (anchor !== 'created_at') throw badRequest("expires_after[anchor] must be 'created_at'.", 'expires_after[anchor]');
  const n = Number(seconds);
  if (seconds === undefined || !/^\d+$/.test(seconds) || n < EXPIRY_MIN_S || n > EXPIRY_MAX_S) {
    throw badRequest(`expires_after[seconds] must be a whole number of seconds from ${EXPIRY_MIN_S} (1 hour) to ${EXPIRY_MAX_S} (30 days).`, 'expires_after[seconds]');
  }
  return n;
}

function overQuota(quota: number): RouterError {
  return new RouterError(413, `The files of this API key would exceed their storage quota of ${quota} bytes (setting filesMaxStoredBytesPerKey); delete files or wait for them to expire.`, {
    code: 'storage_quota_exceeded',
  });
}

function tooLarge(limit: number): RouterError {
  return new RouterError(413, `The file exceeds the limit of ${limit} bytes (setting batchFileMaxBytes).`);
}

/** Content of an upload that never finished (its node was killed) is deleted once this old, seconds. */
const ORPHAN_AGE_S = 24 * 3600;
/** Bytes gathered before a produced file's text is handed to storage. */
const WRITE_BATCH = 64 * 1024;

export class FileService {
  constructor(
    private readonly store: BatchRepository,
    readonly contents: FileContents,
  ) {}

  /** A file the caller may see: its own (any file for the dashboard and CLI). 404 otherwise, and once it expired. */
  async get(id: string, keyId: string | undefined): Promise<FileRow> {
    await this.sweep();
    const row = await this.store.file(id);
    if (!row || (keyId !== undefined && row.key_id !== keyId)) throw notFound(id);
    return row;
  }

  /**
   * Deletes the files past their expiry (content and metadata), except the input of a batch still running.
   * Runs at start, every few minutes, and before a file is looked up or listed: an expired file is never served.
   */
  async sweep(nowSec = nowSeconds()): Promise<number> {
    const expired = await this.store.expiredFiles(nowSec);
    for (const id of expired) await this.remove(id);
    return expired.length;
  }

  /** The periodic sweep: expired files, and what uploads killed midway left behind. */
  async sweepAll(nowSec = nowSeconds()): Promise<void> {
    await this.sweep(nowSec);
    await this.contents.sweepOrphans(nowSec - ORPHAN_AGE_S);
  }

  /** Streams a file's content. */
  content(row: FileRow, version: string): Response {
    return new FastResponse(this.contents.stream(row.id), {
      headers: { 'content-type': 'application/octet-stream', 'content-length': String(row.bytes), [HEADER.version]: version },
    });
  }

  readText(id: string): Promise<string> {
    return this.contents.text(id);
  }

  /** Removes a file's metadata (it is no longer listed or served), then its content. */
  async remove(id: string): Promise<void> {
    await this.store.removeFile(id);
    await this.contents.remove(id);
  }

  /** Stores a file router produced (a batch's output or error file); undefined when there are no lines. */
  async write(keyId: string | null, filename: string, lines: AsyncIterable<string>): Promise<FileRow | undefined> {
    const row: FileRow = { id: newId('file-'), key_id: keyId, purpose: 'batch_output', filename, bytes: 0, lines: 0, created_at: nowSeconds() };
    const writer = this.contents.writer(row.id);
    try {
      let held = '';
      for await (const line of lines) {
        held += `${line}\n`;
        row.lines++;
        if (held.length >= WRITE_BATCH) {
          const bytes = Buffer.from(held);
          row.bytes += bytes.length;
          held = '';
          await writer.write(bytes);
        }
      }
      if (row.lines === 0) {
        await writer.abort();
        return undefined;
      }
      const bytes = Buffer.from(held);
      row.bytes += bytes.length;
      if (bytes.length > 0) await writer.write(bytes);
      await writer.finish();
    } catch (err) {
      await writer.abort().catch(() => undefined);
      throw err;
    }
    try {
      await this.store.addFile(row);
    } catch (err) {
      await this.contents.remove(row.id).catch(() => undefined);
      throw err;
    }
    return row;
  }

  /**
   * Reads a multipart upload (`file` and `purpose=batch`) with the file capped at `limit` bytes (413 past
   * it, the body is not read further), writes it to disk as it arrives and checks every line.
   */
  async upload(event: H3Event, keyId: string | null, limit: number, quota: number): Promise<FileRow> {
    const type = event.req.headers.get('content-type') ?? '';
    if (!type.toLowerCase().startsWith('multipart/form-data')) throw new RouterError(415, 'Content-Type must be multipart/form-data (fields file and purpose).');
    const declared = event.req.headers.get('content-length');
    if (declared !== null && Number(declared) > limit + MULTIPART_OVERHEAD) {
      dropRestOfBody(event);
      throw tooLarge(limit);
    }
    // The owner's stored bytes (expired files no longer count): the upload may use what is left of its quota.
    await this.sweep();
    const room = quota - (await this.store.storedBytes(keyId));
    if (room <= 0 || (declared !== null && Number(declared) > room + MULTIPART_OVERHEAD)) {
      dropRestOfBody(event);
      throw overQuota(quota);
    }
    const id = newId('file-');
    const writer = this.contents.writer(id);
    let finished = false;
    try {
      const cap = room < limit ? { bytes: room, error: () => overQuota(quota) } : { bytes: limit, error: () => tooLarge(limit) };
      const { purpose, filename, bytes, lines, anchor, seconds } = await this.receive(event, type, cap, writer);
      if (purpose === undefined) throw badRequest("The 'purpose' field is required (\"batch\").", 'purpose');
      if (purpose !== 'batch') throw badRequest(`Purpose '${purpose.slice(0, 50)}' is not supported: router stores files for batches ("batch").`, 'purpose');
      if (filename === undefined) throw badRequest("The 'file' field is required.", 'file');
      const expiresIn = expiryOf(anchor, seconds);
      await writer.finish();
      finished = true;
      const created = nowSeconds();
      const row: FileRow = { id, key_id: keyId, purpose, filename, bytes, lines, created_at: created, expires_at: created + expiresIn };
      await this.store.addFile(row);
      return row;
    } catch (err) {
      await (finished ? this.contents.remove(id) : writer.abort()).catch(() => undefined);
      throw err;
    }
  }

  private receive(
    event: H3Event,
    type: string,
    cap: { bytes: number; error: () => RouterError },
    writer: ContentWriter,
  ): Promise<{ purpose?: string; filename?: string; bytes: number; lines: number; anchor?: string; seconds?: string }> {
    const limit = cap.bytes;
    const source: Readable | undefined = event.req.runtime?.node?.req ?? (event.req.body ? Readable.fromWeb(event.req.body as never) : undefined);
    if (!source) return Promise.reject(badRequest('The upload has no body.', 'file'));
    return new Promise((resolve, reject) => {
      let bb: busboy.Busboy;
      try {
        bb = busboy({ headers: { 'content-type': type }, limits: { fileSize: limit + 1, files: 1, fields: 20, fieldSize: 64 * 1024, parts: 30 } });
      } catch {
        return reject(badRequest('The multipart body is malformed (no boundary).', 'file'));
      }
      const fields: { purpose?: string; filename?: string; bytes: number; lines: number; anchor?: string; seconds?: string } = { bytes: 0, lines: 0 };
      let failed: RouterError | undefined;
      let stopped = false;
      /** The chunks handed to storage so far, in order; the file stream pauses while one is being stored. */
      let written: Promise<void> = Promise.resolve();
      // A bad line is reported once the upload is read; a fault that stops the read (the body cut short or
      // malformed, a file over the limit) is the real cause and replaces it.
      const fail = (err: RouterError, stopReading: boolean) => {
        if (stopReading && !stopped) {
          stopped = true;
          failed = err;
        } else failed ??= err;
        if (stopReading) {
          source.unpipe(bb);
          // What is left of the body is dropped (then the connection closes if it goes on).
          dropRestOfBody(event);
          // Once the chunk being stored (if any) is, so that dropping the content leaves nothing behind.
          const refused = failed;
          written.then(
            () => reject(refused),
            () => reject(refused),
          );
        }
      };
      bb.on('field', (name, value) => {
        if (name === 'purpose') fields.purpose = value;
        else if (name === 'expires_after[anchor]') fields.anchor = value;
        else if (name === 'expires_after[seconds]') fields.seconds = value;
      });
      bb.on('file', (name, stream, info) => {
        if (name !== 'file' || fields.filename !== undefined) return void stream.resume();
        fields.filename = (info.filename || 'upload.jsonl').slice(0, 255);
        const checker = new JsonlChecker();
        const decoder = new StringDecoder('utf8');
        // busboy signals when the file reaches fileSize (limit + 1): one byte past the limit.
        stream.on('limit', () => fail(cap.error(), true));
        // A body that ends inside the file: busboy destroys this stream with an error (uncaught without this).
        stream.on('error', (err: Error) => fail(malformedMultipart(err, 'file'), true));
        stream.on('data', (chunk: Buffer) => {
          fields.bytes += chunk.length;
          if (failed) return;
          try {
            checker.push(decoder.write(chunk));
          } catch (err) {
            // A bad line: the rest is drained (bounded by the limit) so the client reads the 400.
            fail(err as RouterError, false);
            return;
          }
          stream.pause();
          written = written.then(() => writer.write(chunk));
          written.then(
            () => stream.resume(),
            () => fail(new RouterError(507, 'The file could not be stored.'), true),
          );
        });
        stream.on('end', () => {
          if (!failed) {
            try {
              checker.push(decoder.end());
              checker.end();
              fields.lines = checker.lines;
            } catch (err) {
              fail(err as RouterError, false);
            }
          }
        });
      });
      bb.on('error', (err: Error) => fail(malformedMultipart(err, 'file'), true));
      bb.on('close', () => {
        written.then(
          () => (failed ? reject(failed) : resolve(fields)),
          () => reject(failed ?? new RouterError(507, 'The file could not be stored.')),
        );
      });
      source.on('error', () => fail(new RouterError(499, 'The client closed the connection during its upload.'), true));
      source.pipe(bb);
    });
  }
}
