import { Readable } from 'node:stream';
import busboy from 'busboy';
import type { H3Event } from 'h3';
import { dropRestOfBody } from '../http/body.js';
import { badRequest, RouterError } from '../http/errors.js';
import { mediaTypeEssence } from '../http/request-guard.js';

import type { MultipartBody } from '../families/family.js';

export type { MultipartBody, UploadedFile } from '../families/family.js';

export interface MultipartLimits {
  /** Largest single file, bytes: one byte more is a 413. */
  fileBytes: number;
  /** Whole body, bytes (files, fields and boundaries). */
  totalBytes: number;
  /** Most files (default 16). */
  files?: number;
}

const FIELD_BYTES = 1024 * 1024;

function tooLarge(what: string, limit: number): RouterError {
  return new RouterError(413, `${what} exceeds the limit of ${limit} bytes.`);
}

/**
 * The 400 for a body busboy could not read: a truncated upload (the body ends before the closing boundary,
 * inside a part) or broken framing. busboy's own wording is not passed on.
 */
export function malformedMultipart(err: Error, param?: string): RouterError {
  const truncated = /unexpected end/i.test(err.message);
  return badRequest(
    truncated
      ? 'The multipart body ended before its closing boundary (the upload was cut short).'
      : 'The multipart body is malformed (its part headers or boundaries could not be read).',
    param,
  );
}

/**
 * Reads a multipart/form-data request body with busboy, streaming: each file is collected as it arrives
 * and the read stops at the first byte past a limit (413; the rest of the upload is discarded by the
 * server, never buffered). Anything that is not multipart is a 415; a malformed body is a 400.
 */
export function readMultipart(event: H3Event, limits: MultipartLimits): Promise<MultipartBody> {
  const contentType = event.req.headers.get('content-type') ?? '';
  if (mediaTypeEssence(contentType) !== 'multipart/form-data') {
    return Promise.reject(new RouterError(415, 'Content-Type must be multipart/form-data.'));
  }
  const declared = event.req.headers.get('content-length');
  if (declared !== null && Number(declared) > limits.totalBytes) {
    dropRestOfBody(event);
    return Promise.reject(tooLarge('Request body', limits.totalBytes));
  }
  const source: Readable | undefined =
    (event.req.runtime?.node?.req as Readable | undefined) ??
    (event.req.body ? Readable.fromWeb(event.req.body as import('node:stream/web').ReadableStream) : undefined);
  if (!source) return Promise.reject(badRequest('Request body is required.'));
  return new Promise<MultipartBody>((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      parser = busboy({
        headers: { 'content-type': contentType },
        // busboy signals its limit when a file reaches it: one more byte than the largest file allowed.
        limits: { fileSize: limits.fileBytes + 1, files: limits.files ?? 16, fields: 200, fieldSize: FIELD_BYTES, parts: 256 },
      });
    } catch {
      reject(badRequest('The multipart body has no boundary.'));
      return;
    }
    const out: MultipartBody = { fields: [], files: [] };
    let size = 0;
    let settled = false;
    const finish = (err?: Error): void => {
      if (settled) return;
      settled = true;
      source.off('data', count);
      source.off('error', onSourceError);
      if (err) {
        source.unpipe(parser);
        // What is left of the upload is dropped, never parsed or kept (then the connection closes if it goes on).
        dropRestOfBody(event);
        reject(err);
      } else resolve(out);
    };
    const count = (chunk: Buffer): void => {
      size += chunk.length;
      if (size > limits.totalBytes) finish(tooLarge('Request body', limits.totalBytes));
    };
    const onSourceError = (err: NodeJS.ErrnoException): void => {
      finish(err.code === 'ECONNRESET' || err.message === 'aborted' ? new RouterError(499, 'The client closed the connection during its upload.') : err);
    };
    parser.on('file', (field, stream, info) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      stream.on('data', (chunk: Buffer) => {
        bytes += chunk.length;
        chunks.push(chunk);
      });
      stream.on('limit', () => finish(tooLarge(`The file '${field}'`, limits.fileBytes)));
      // A body that ends inside this file: busboy destroys the file stream with an error (and reports it
      // on the parser too). Without this listener the error would be uncaught.
      stream.on('error', (err: Error) => finish(malformedMultipart(err)));
      stream.on('end', () => {
        if (settled) return;
        out.files.push({ field, filename: info.filename ?? field, mimeType: info.mimeType || 'application/octet-stream', data: Buffer.concat(chunks, bytes) });
      });
    });
    parser.on('field', (name, value, info) => {
      if (info.valueTruncated) finish(tooLarge(`The field '${name}'`, FIELD_BYTES));
      else out.fields.push([name, value]);
    });
    parser.on('filesLimit', () => finish(badRequest('Too many files in the multipart body.')));
    parser.on('fieldsLimit', () => finish(badRequest('Too many fields in the multipart body.')));
    parser.on('partsLimit', () => finish(badRequest('Too many parts in the multipart body.')));
    parser.on('error', (err: Error) => finish(malformedMultipart(err)));
    parser.on('close', () => finish());
    source.on('data', count);
    source.on('error', onSourceError);
    source.pipe(parser);
  });
}
