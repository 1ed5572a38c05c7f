import type { Readable } from 'node:stream';
import type { H3Event } from 'h3';
import type { z } from 'zod';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { RouterError, badRequest } from './errors.js';
import { isJsonMediaType } from './request-guard.js';

/**
 * Reads the request body as bytes with a hard cap: a declared Content-Length over the cap is refused
 * before reading, and a chunked body is cut off (413) as soon as it passes the cap, so a client can never
 * make the daemon buffer more than `limit` bytes. On Node the socket's request is read directly: going
 * through the web stream would build a ReadableStream per request.
 */
export async function readBodyBytes(event: H3Event, limit: number): Promise<Uint8Array> {
  const declared = event.req.headers.get('content-length');
  const nodeReq = event.req.runtime?.node?.req;
  if (declared !== null && Number(declared) > limit) {
    if (nodeReq) dropRestOfBody(event);
    throw tooLarge(limit);
  }
  if (nodeReq) return readNodeBody(nodeReq, limit).catch((err: unknown) => {
    if (err instanceof RouterError && err.status === 413) dropRestOfBody(event);
    throw err;
  });
  const stream = event.req.body;
  if (!stream) return new Uint8Array(0);
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = stream.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > limit) {
      await reader.cancel().catch(() => {});
      throw tooLarge(limit);
    }
    chunks.push(value);
  }
  return concat(chunks, size);
}

function readNodeBody(req: Readable, limit: number): Promise<Uint8Array> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const cleanup = () => {
      req.off('data', onData);
      req.off('end', onEnd);
      req.off('error', onError);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > limit) {
        cleanup();
        // Nothing more is kept; the caller drops the rest (dropRestOfBody).
        reject(tooLarge(limit));
        return;
      }
      chunks.push(chunk);
    };
    const onEnd = () => {
      cleanup();
      resolve(chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, size));
    };
    const onError = (err: NodeJS.ErrnoException) => {
      cleanup();
      // The client hung up mid-upload: nothing to answer, only a line in the log (errorResponse).
      reject(err.code === 'ECONNRESET' || err.message === 'aborted' ? uploadAborted() : err);
    };
    req.on('data', onData);
    req.on('end', onEnd);
    req.on('error', onError);
  });
}

/** How long a connection may go on sending a refused body after its reply before it is cut. */
const LINGER_MS = 5_000;

/**
 * After a refusal sent before the request body was read to its end (a body over its limit, a broken
 * upload), what is left is read and dropped, never kept. Left unread it would stall a keep-alive
 * connection; cut at once, the connection would be reset with data unread, and the client could lose the
 * reply. So the reply says `Connection: close` (a keep-alive client must not send its next request on this
 * connection), and Node's close after the reply is replaced by a lingering close: the end of the
 * connection is sent (FIN: a client stops sending), what still arrives is dropped, and a client that
 * still sends after LINGER_MS is cut (the lingering close of HTTP servers).
 */
export function dropRestOfBody(event: H3Event): void {
  const req = event.req.runtime?.node?.req as IncomingMessage | undefined;
  const res = event.req.runtime?.node?.res as ServerResponse | undefined;
  if (!req || req.complete) return;
  req.resume();
  if (!res || res.headersSent) return;
  res.setHeader('connection', 'close');
  const socket = req.socket as IncomingMessage['socket'] & { destroySoon?: () => void };
  // Node ends a `Connection: close` exchange with socket.destroySoon(): end, then destroy as soon as the
  // reply is flushed, which resets a connection that still has body bytes in flight.
  socket.destroySoon = () => {
    socket.end();
    if (socket.destroyed) return;
    const timer = setTimeout(() => socket.destroy(), LINGER_MS);
    timer.unref();
    socket.once('close', () => clearTimeout(timer));
  };
}

function concat(chunks: Uint8Array[], size: number): Uint8Array {
  if (chunks.length === 1) return chunks[0]!;
  const out = new Uint8Array(size);
  let offset = 0;
  for (const c of chunks) {
    out.set(c, offset);
    offset += c.byteLength;
  }
  return out;
}

function uploadAborted(): RouterError {
  return new RouterError(499, 'The client closed the connection during its upload.');
}

function tooLarge(limit: number): RouterError {
  return new RouterError(413, `Request body exceeds the limit of ${limit} bytes.`);
}

const decoder = new TextDecoder('utf-8', { fatal: true });

/** Reads and parses a JSON body; anything that is not a JSON document is a 400 (415 for other types). */
export async function readJsonBody(event: H3Event, limit: number): Promise<unknown> {
  // Only application/json: text/plain or a form is what a web page can send without a CORS preflight.
  if (!isJsonMediaType(event.req.headers.get('content-type'))) throw new RouterError(415, 'Content-Type must be application/json.');
  const bytes = await readBodyBytes(event, limit);
  if (bytes.byteLength === 0) throw badRequest('Request body is required and must be a JSON document.');
  let text: string;
  try {
    text = decoder.decode(bytes);
  } catch {
    throw badRequest('Request body is not valid UTF-8.');
  }
  try {
    return JSON.parse(text);
  } catch {
    throw badRequest('Request body is not valid JSON.');
  }
}

/** Validates with a zod schema; the first issue becomes a 400 naming the field. */
export function validate<T>(schema: z.ZodType<T>, value: unknown, where: 'body' | 'query'): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const path = issue.path.map(String).join('.');
  const field = path || where;
  throw badRequest(`Invalid ${where === 'query' ? 'query parameter' : 'field'} '${field}': ${issue.message}`, field);
}
