import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { AttemptGuard, type AttemptLimits } from './attempt-guard.js';
import { credentialSecrets, joinUrl, requestHeaders, targetHeaders, withoutHeaders, withRequestHeaders, type Target } from '../providers/target.js';
import { httpAttemptError, networkAttemptError } from './upstream-error.js';
import { ReplyTooLargeError, UpstreamExchange, type UpstreamHeaders, type UpstreamReply } from '../net/upstream.js';

/**
 * One attempt at one target, for every endpoint family: send the request (the target's credential and
 * headers), hold it to the attempt's limits (first byte, then the whole attempt; the client leaving aborts
 * it), and turn any failure into the AttemptError the executor acts on: a non-2xx reply's error body is
 * read here, once (its first MiB), and classified once (routing/provider-error.ts, with its scope), the
 * credential masked. Then the body is read whole, relayed as it comes, or read as one JSON text.
 */

/** The URL of a path at a target: joined to its base URL, or (a path starting with `/`) from the base URL's origin. */
export function upstreamUrl(target: Pick<Target, 'baseUrl'>, path: string): string {
  return path.startsWith('/') ? new URL(path, target.baseUrl).toString() : joinUrl(target.baseUrl, path);
}

/** One request of an attempt. */
export interface AttemptRequest {
  url: string;
  /** Default POST. */
  method?: 'GET' | 'POST';
  body?: string | Uint8Array;
  /** The request's content type (default JSON). */
  contentType?: string;
  accept: string;
  /** The request's own headers on top of the target's. */
  headers?: Record<string, string>;
  /** Target headers this request must not send (a request hook's removals; never credentials). */
  removeHeaders?: readonly string[];
  /**
   * A streamed reply whose first byte is its first content, which the caller's reader commits (chat SSE):
   * the first-byte limit then holds past the headers. Default: the reply's headers are its first byte.
   */
  firstByteAtCommit?: boolean;
  /** Sees every reply's status and headers (an account's rate-limit headers), and an error reply's body text. */
  onReply?(status: number, headers: UpstreamHeaders, errorText?: string): void;
}

/** An upstream exchange on its way: HTTP, or another transport's (the Responses WebSocket). */
export interface Sent {
  exchange: UpstreamReply;
  response: Promise<UpstreamReply>;
}

/** An upstream reply whose headers arrived with a 2xx status; its body is still to be read. */
export interface OpenReply {
  exchange: UpstreamReply;
  guard: AttemptGuard;
  tSend: number;
}

/** A successful JSON reply read whole. */
export interface JsonReply {
  text: string;
  headers: UpstreamHeaders;
  /** Time from sending to the end of the reply, ms. */
  upstreamMs: number;
}

export class Attempt {
  constructor(
    readonly target: Target,
    private readonly limits: AttemptLimits,
    /** The client's Node response, when there is one: its leaving ends the attempt at once. */
    private readonly sink?: ServerResponse,
  ) {}

  /** The headers a request is sent with: the target's (credential, provider, accept), the request's own, minus its removals. */
  headersFor(req: AttemptRequest): Record<string, string> {
    const { accept, contentType } = req;
    // JSON and SSE calls share the target's prebuilt headers (built once per target and kind).
    const base =
      contentType === undefined && (accept === 'application/json' || accept === 'text/event-stream')
        ? requestHeaders(this.target, accept === 'text/event-stream')
        : identity(targetHeaders(this.target, accept), contentType);
    return withoutHeaders(withRequestHeaders(base, req.headers), req.removeHeaders);
  }

  /**
   * Sends one request (with `headers`, default {@link headersFor}; over `via` when another transport carries
   * it) and waits for the reply's headers. A non-2xx reply, a network failure or a timeout becomes an
   * AttemptError, the error body read and classified here once. On success the caller owns `guard` until
   * the body is read (`readWhole`, `relayBody`, a stream's reader).
   */
  async open(req: AttemptRequest, headers = this.headersFor(req), via?: Sent): Promise<OpenReply> {
    const tSend = performance.now();
    const { exchange, response } = via ?? UpstreamExchange.send({ url: req.url, method: req.method, headers, body: req.body, route: this.target });
    const guard = new AttemptGuard(exchange, this.sink, this.limits);
    try {
      const reply = await response.catch((err) => {
        throw guard.cause() ?? networkAttemptError(err, false, req.url);
      });
      if (!req.firstByteAtCommit) guard.firstByte();
      if (reply.statusCode >= 300) {
        // The first MiB of an error body is plenty to report it; the rest is not read.
        const text = await reply.textUpTo(1024 * 1024);
        req.onReply?.(reply.statusCode, reply.headers, text);
        throw guard.cause() ?? httpAttemptError(reply.statusCode, text, reply.headers, credentialSecrets(this.target));
      }
      req.onReply?.(reply.statusCode, reply.headers);
      return { exchange: reply, guard, tSend };
    } catch (err) {
      guard.dispose();
      throw err;
    }
  }

  /** One request whose reply is read whole as text (a JSON call: count_tokens, router's own calls). */
  async json(req: AttemptRequest, maxBytes?: number): Promise<JsonReply> {
    const open = await this.open(req);
    try {
      const text = await open.exchange.text(maxBytes).catch((err) => {
        throw open.guard.cause() ?? networkAttemptError(err, false, req.url);
      });
      return { text, headers: open.exchange.headers, upstreamMs: performance.now() - open.tSend };
    } finally {
      open.guard.dispose();
    }
  }
}

function identity(headers: Record<string, string>, contentType: string | undefined): Record<string, string> {
  headers['accept-encoding'] = 'identity';
  if (contentType) headers['content-type'] = contentType;
  return headers;
}

/** One non-streamed JSON POST to a target (the executor's attempt functions): {@link Attempt.json}. */
export function postJson(
  target: Target,
  url: string,
  body: string | Uint8Array,
  limits: AttemptLimits,
  options: { maxBytes?: number; headers?: Record<string, string>; sink?: ServerResponse } = {},
): Promise<JsonReply> {
  return new Attempt(target, limits, options.sink).json({ url, body, accept: 'application/json', headers: options.headers }, options.maxBytes);
}

/** Reads a whole reply body as bytes (capped), then releases the guard. */
export async function readWhole(open: OpenReply, limit = 256 * 1024 * 1024): Promise<{ bytes: Buffer; upstreamMs: number }> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for (let c = await open.exchange.read(); c !== undefined; c = await open.exchange.read()) {
      size += c.length;
      if (size > limit) {
        open.exchange.abort();
        throw networkAttemptError(new ReplyTooLargeError(limit), false);
      }
      chunks.push(c);
    }
  } catch (err) {
    throw open.guard.cause() ?? (err instanceof Error && err.name === 'AttemptError' ? err : networkAttemptError(err, false));
  } finally {
    open.guard.dispose();
  }
  return { bytes: Buffer.concat(chunks, size), upstreamMs: performance.now() - open.tSend };
}

/** The upstream's content type, or a fallback. */
export function upstreamContentType(open: OpenReply, fallback: string): string {
  const v = open.exchange.headers['content-type'];
  return (Array.isArray(v) ? v[0] : v) ?? fallback;
}

/**
 * Forwards an upstream body to the client as it arrives (speech audio, SSE events): one chunk read per
 * chunk pushed, so nothing is buffered beyond the socket's own backpressure. `onEnd` runs once, with the
 * failure if the stream broke or the client left; the tail of the body (last 8 KiB) is handed to it for
 * usage that only the last event carries.
 */
export function relayBody(open: OpenReply, onEnd: (error: string | undefined, tail: string, bytes: number) => void): Readable {
  let ended = false;
  let tail = '';
  let bytes = 0;
  const end = (error?: string): void => {
    if (ended) return;
    ended = true;
    open.guard.dispose();
    onEnd(error, tail, bytes);
  };
  return new Readable({
    highWaterMark: 64 * 1024,
    read() {
      open.exchange.read().then(
        (chunk) => {
          if (chunk === undefined) {
            end();
            this.push(null);
            return;
          }
          bytes += chunk.length;
          tail = (tail + chunk.toString('latin1')).slice(-8192);
          this.push(chunk);
        },
        (err: Error) => {
          end(open.guard.cause()?.message ?? `The upstream stream broke: ${err.message}`);
          this.destroy(err);
        },
      );
    },
    destroy(err, cb) {
      if (!ended) {
        open.exchange.abort();
        end(CLIENT_LEFT);
      }
      cb(err);
    },
  });
}

/** The error a relayed reply ends with when the client left during it. */
export const CLIENT_LEFT = 'The client closed the connection during the reply.';
