import { createBrotliDecompress, createGunzip, createInflate } from 'node:zlib';
import { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';

/**
 * One keep-alive agent for every upstream: connections are pooled per origin and reused across requests,
 * which is most of the difference between a fast and a slow proxy. Header and body timeouts are long
 * because reasoning models think for minutes; per-target deadlines come from combos via AbortSignal.
 */
const agent = new Agent({
  keepAliveTimeout: 30_000,
  keepAliveMaxTimeout: 600_000,
  // No cap per origin: HTTP/1.1 cannot multiplex, so a cap would queue long streams behind each other.
  connections: null,
  headersTimeout: 600_000,
  bodyTimeout: 600_000,
});

export interface UpstreamRequest {
  url: string;
  method?: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

export type UpstreamReply = Dispatcher.ResponseData;

/** Sends one request upstream. Rejects on network errors and aborts; any HTTP status resolves. */
export function sendUpstream(req: UpstreamRequest): Promise<UpstreamReply> {
  return request(req.url, {
    method: req.method ?? 'POST',
    headers: req.headers,
    body: req.body,
    signal: req.signal,
    dispatcher: agent,
  });
}

/**
 * The reply body with any content-encoding undone. Router asks upstreams for `identity`, but one that
 * compresses anyway must not reach the client as compressed bytes without their header.
 */
export function decodedBody(reply: UpstreamReply): Readable {
  const encoding = String(reply.headers['content-encoding'] ?? '').trim().toLowerCase();
  if (encoding === 'gzip' || encoding === 'x-gzip') return reply.body.pipe(createGunzip());
  if (encoding === 'br') return reply.body.pipe(createBrotliDecompress());
  if (encoding === 'deflate') return reply.body.pipe(createInflate());
  return reply.body;
}

/** Reads an upstream body as text, at most `limit` bytes (error bodies and non-stream replies). */
export async function readUpstreamText(body: Readable, limit = 64 * 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += (chunk as Buffer).length;
    if (size > limit) {
      body.destroy();
      throw new Error(`upstream reply exceeds ${limit} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** Closes pooled connections (daemon shutdown). */
export function closeUpstreams(): Promise<void> {
  return agent.close();
}
