import { createBrotliDecompress, createGunzip, createInflate, type Gunzip } from 'node:zlib';
import type { Agent as UndiciAgent, Dispatcher } from 'undici';
import AgentClass from 'undici/lib/dispatcher/agent.js';
import { closeOutboundProxies, outboundDispatcher, type OutboundRoute } from './outbound-proxy.js';

/** A keep-alive connection pool (undici's Agent, loaded without the rest of undici: see undici-agent.d.ts). */
export function createAgent(options: UndiciAgent.Options): UndiciAgent {
  return new AgentClass(options);
}

/**
 * One keep-alive agent for every upstream: connections are pooled per origin and reused across requests,
 * which is most of the difference between a fast and a slow proxy. Header and body timeouts are long
 * because reasoning models think for minutes; per-target deadlines come from combos (`abort()`).
 */
const agent = createAgent({
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
  /** Another pool than the shared upstream agent (webhooks use their own, with vetted DNS lookups). */
  dispatcher?: Dispatcher;
  /** The target (provider, connection's proxy) the call is for: picks the outbound proxy (net/outbound-proxy.ts). */
  route?: OutboundRoute;
}

/** Origin and path of upstream URLs already seen (a few per target): parsed once, not per request. */
const urlParts = new Map<string, { origin: string; path: string }>();
const URL_PARTS_MAX = 1_000;

function splitUrl(raw: string): { origin: string; path: string } {
  let parts = urlParts.get(raw);
  if (!parts) {
    const url = new URL(raw);
    parts = { origin: url.origin, path: url.pathname + url.search };
    if (urlParts.size >= URL_PARTS_MAX) urlParts.clear();
    urlParts.set(raw, parts);
  }
  return parts;
}

/**
 * What readers of an upstream reply use: its status and headers, the body read whole or chunk by chunk,
 * and abort. An HTTP exchange ({@link UpstreamExchange}) or one response on an upstream WebSocket
 * (proxy/upstream-socket.ts), whose frames are read as the Server-Sent Events the HTTP stream would carry.
 */
export type UpstreamReply = Pick<UpstreamExchange, 'statusCode' | 'headers' | 'aborted' | 'abort' | 'discard' | 'read' | 'text' | 'textUpTo'>;

/** Reply headers as a record: lower-case names, repeated headers as arrays (as undici's request API gives). */
export type UpstreamHeaders = Record<string, string | string[] | undefined>;

/** Most bytes of one upstream reply: a whole (non-streaming) read, and a stream's total (proxy/stream.ts). */
export const MAX_REPLY_BYTES = 64 * 1024 * 1024;

/** Bytes buffered from the upstream before it is paused until the reader catches up. */
const HIGH_WATER = 256 * 1024;

class AbortedError extends Error {
  readonly code = 'UND_ERR_ABORTED';
  constructor() {
    super('Request aborted');
    this.name = 'AbortError';
  }
}

/** The body of a reply passed the size a whole read accepts. */
export class ReplyTooLargeError extends Error {
  readonly code = 'ROUTER_REPLY_TOO_LARGE';
  /** The limit as people read it (`64 MiB`). */
  readonly limitText: string;
  constructor(limit: number) {
    super(`upstream reply exceeds ${limit} bytes`);
    this.name = 'ReplyTooLargeError';
    this.limitText = limit % (1024 * 1024) === 0 ? `${limit / (1024 * 1024)} MiB` : `${limit} bytes`;
  }
}

/** The upstream's status line is outside 100-599: nothing to relay, the attempt fails (502). */
export class InvalidStatusError extends Error {
  readonly code = 'ROUTER_INVALID_STATUS';
  constructor(readonly status: number) {
    super(`The upstream answered with HTTP status ${status}, which is not a valid status (100-599).`);
    this.name = 'InvalidStatusError';
  }
}

/**
 * Where the reply body stands. The reader and undici's callbacks only ever move it along these edges:
 *
 *   headers  --onHeaders-->                 flowing
 *   flowing  --push past the high water-->  paused    (chunk-by-chunk reads only; whole reads never pause)
 *   paused   --reader drained / reads whole--> flowing (undici's resume() may deliver data and even
 *                                                       complete synchronously, inside the call)
 *   flowing | paused --onComplete-->        complete  (buffered chunks stay readable)
 *   headers | flowing | paused --onError / abort / size limit--> failed
 *   complete --abort-->                     failed    (unread chunks are dropped: a deadline ends a request
 *                                                       whatever the reader is doing)
 *
 * `complete` (until aborted) and `failed` are the ends. The reader never waits without first installing its
 * waiter and only then resuming the upstream (`wait()`), and every edge wakes it: no interleaving of
 * push/pause/resume/complete/abort can leave it waiting for an event that already happened.
 */
export type BodyState = 'headers' | 'flowing' | 'paused' | 'complete' | 'failed';

/**
 * One upstream request and its reply, on undici's lowest-level API (`Dispatcher.dispatch` with a handler):
 * no web streams, no AbortSignal, no Readable per request, which halves the client-side CPU per request
 * compared with `undici.request` (bench/lib measures ~65 vs ~140 µs here). The body is read either whole
 * (`text()`, never paused, capped) or chunk by chunk (`read()`, with backpressure: the socket is paused
 * while HIGH_WATER bytes wait). A reply with a content-encoding is decoded on the way (router asks for
 * identity; some send gzip).
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler {
  statusCode = 0;
  headers: UpstreamHeaders = {};
  /** See BodyState; read-only outside this class (tests observe it). */
  state: BodyState = 'headers';
  /** Set once `abort()` ran (by a deadline, a client gone, a dropped body). */
  aborted = false;
  private abortFn?: (err: Error) => void;
  private resumeFn?: () => void;
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  /** A whole read is in progress (text, textUpTo): never pause the upstream. */
  private whole = false;
  /** Bytes a whole read accepts; past them the request fails. */
  private wholeLimit = Infinity;
  private failure?: Error;
  private waiter?: () => void;
  private started?: { resolve: (x: UpstreamExchange) => void; reject: (err: Error) => void };
  private decoder?: Gunzip;

  /** Sends the request; the promise resolves when the reply's headers arrive (any status). */
  static send(req: UpstreamRequest): { exchange: UpstreamExchange; response: Promise<UpstreamExchange> } {
    const exchange = new UpstreamExchange();
    const response = new Promise<UpstreamExchange>((resolve, reject) => {
      exchange.started = { resolve, reject };
    });
    // The caller may not await the headers (it aborted first): never an unhandled rejection.
    response.catch(() => {});
    const url = splitUrl(req.url);
    try {
      (req.dispatcher ?? outboundDispatcher(url.origin, req.route) ?? agent).dispatch({ origin: url.origin, path: url.path, method: req.method ?? 'POST', headers: req.headers, body: req.body ?? null }, exchange);
    } catch (err) {
      exchange.onError(err as Error);
    }
    return { exchange, response };
  }

  /**
   * Ends the request in any state but `failed` (timeout, client gone, body dropped): the connection is
   * closed, buffered chunks are dropped, and a pending or later read, `text()` or header wait rejects.
   */
  abort(): void {
    if (this.state === 'failed') return;
    this.aborted = true;
    const err = new AbortedError();
    this.end(err);
  }

  /**
   * The whole body as text, at most `limit` bytes: beyond it the request is aborted and this rejects with
   * a ReplyTooLargeError. Reading whole never pauses the upstream.
   */
  async text(limit = MAX_REPLY_BYTES): Promise<string> {
    this.whole = true;
    this.wholeLimit = limit;
    for (;;) {
      if (this.buffered > limit) this.tooLarge(limit);
      if (this.state === 'failed') throw this.failure!;
      if (this.state === 'complete') return this.drain().toString('utf8');
      await this.wait();
    }
  }

  /**
   * At most `limit` bytes of the body as text (less when it ends sooner); the rest is not read and the
   * request is released. Never rejects: a failure mid-body gives what arrived.
   */
  async textUpTo(limit: number): Promise<string> {
    this.whole = true;
    while ((this.state === 'headers' || this.state === 'flowing' || this.state === 'paused') && this.buffered < limit) await this.wait();
    const out = this.drain();
    this.discard();
    return out.subarray(0, limit).toString('utf8');
  }

  /** Drops an unread body: the request is ended at once (its connection is closed, not reused). */
  discard(): void {
    if (this.state !== 'complete') this.abort();
  }

  /** The next chunk of the body; undefined at its end. Rejects when the request failed or was aborted. */
  async read(): Promise<Buffer | undefined> {
    for (;;) {
      if (this.state === 'failed') throw this.failure!;
      if (this.chunks.length) {
        const chunk = this.chunks.shift()!;
        this.buffered -= chunk.length;
        if (this.buffered < HIGH_WATER) this.resume();
        return chunk;
      }
      if (this.state === 'complete') return undefined;
      await this.wait();
    }
  }

  /** Installs the waiter, then lets the upstream go on: an event the resume triggers at once still wakes it. */
  private wait(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiter = resolve;
      this.resume();
    });
  }

  /** paused -> flowing (and the decoder on). May run push/complete synchronously. */
  private resume(): void {
    if (this.state === 'paused') {
      this.state = 'flowing';
      this.resumeFn?.();
    }
    if (this.decoder?.isPaused() && this.state === 'flowing') this.decoder.resume();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    if (w) w();
  }

  private drain(): Buffer {
    const out = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.buffered);
    this.chunks.length = 0;
    this.buffered = 0;
    return out;
  }

  private tooLarge(limit: number): never {
    const err = new ReplyTooLargeError(limit);
    if (this.state !== 'failed') {
      this.aborted = true;
      this.end(err);
    }
    throw err;
  }

  /** A decoded chunk arrives; answers whether the upstream may go on sending now. */
  private push(chunk: Buffer): boolean {
    if (this.state === 'failed' || this.state === 'complete') return false;
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    if (this.buffered > this.wholeLimit) {
      this.aborted = true;
      this.end(new ReplyTooLargeError(this.wholeLimit));
      return false;
    }
    this.wake();
    return this.whole || this.buffered < HIGH_WATER;
  }

  // ---- undici handler ----

  onConnect(abort: (err?: Error) => void): void {
    this.abortFn = abort;
    if (this.aborted) abort(this.failure ?? new AbortedError());
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
    if (this.state !== 'headers') return false;
    if (statusCode < 100 || statusCode > 599) {
      this.end(new InvalidStatusError(statusCode));
      return false;
    }
    this.statusCode = statusCode;
    const headers: UpstreamHeaders = {};
    for (let i = 0; i < rawHeaders.length; i += 2) {
      const name = rawHeaders[i]!.toString('latin1').toLowerCase();
      const value = rawHeaders[i + 1]!.toString('latin1');
      const prev = headers[name];
      headers[name] = prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value];
    }
    this.headers = headers;
    this.resumeFn = resume;
    this.state = 'flowing';
    const encoding = String(headers['content-encoding'] ?? '').trim().toLowerCase();
    if (encoding) this.decoder = decoderFor(encoding);
    if (this.decoder) {
      const d = this.decoder;
      d.on('data', (c: Buffer) => {
        if (!this.push(c)) d.pause();
      });
      d.on('end', () => this.complete());
      d.on('error', (err) => this.fail(err));
    }
    const started = this.started;
    this.started = undefined;
    started?.resolve(this);
    return true;
  }

  onData(chunk: Buffer): boolean {
    if (this.state !== 'flowing' && this.state !== 'paused') return false;
    let more: boolean;
    if (this.decoder) {
      more = this.decoder.write(chunk);
      if (!more) this.decoder.once('drain', () => this.resume());
    } else more = this.push(chunk);
    if (!more && this.state === 'flowing') this.state = 'paused';
    return more;
  }

  onComplete(): void {
    if (this.decoder) this.decoder.end();
    else this.complete();
  }

  onError(err: Error): void {
    this.fail(err);
  }

  /** flowing | paused -> complete. */
  private complete(): void {
    if (this.state !== 'flowing' && this.state !== 'paused') return;
    this.state = 'complete';
    this.wake();
  }

  /** Ends the request from our side in any state: the one way from complete to failed, and undici is told. */
  private end(err: Error): void {
    const wasComplete = this.state === 'complete';
    this.fail(err, true);
    if (!wasComplete) this.abortFn?.(err);
  }

  /**
   * headers | flowing | paused (| complete when `force`d by end()) -> failed: the failure is kept for every
   * later read. An undici or decoder error after the body completed changes nothing.
   */
  private fail(err: Error, force = false): void {
    if (this.state === 'failed' || (this.state === 'complete' && !force)) return;
    this.state = 'failed';
    this.failure = err;
    this.chunks.length = 0;
    this.buffered = 0;
    this.decoder?.destroy();
    const started = this.started;
    this.started = undefined;
    started?.reject(err);
    this.wake();
  }
}

function decoderFor(encoding: string): Gunzip | undefined {
  if (encoding === 'gzip' || encoding === 'x-gzip') return createGunzip();
  if (encoding === 'br') return createBrotliDecompress() as unknown as Gunzip;
  if (encoding === 'deflate') return createInflate() as unknown as Gunzip;
  return undefined;
}

/**
 * Sends one request upstream and resolves with the exchange once its headers arrived. Rejects on network
 * errors and aborts (`signal`, for callers with their own deadline); any HTTP status resolves.
 */
export function sendUpstream(req: UpstreamRequest): Promise<UpstreamExchange> {
  const { exchange, response } = UpstreamExchange.send(req);
  const signal = req.signal;
  if (signal) {
    if (signal.aborted) exchange.abort();
    else signal.addEventListener('abort', () => exchange.abort(), { once: true });
  }
  return response;
}

/** Closes pooled connections, direct and proxied (daemon shutdown). */
export async function closeUpstreams(): Promise<void> {
  await Promise.all([agent.close(), closeOutboundProxies()]);
}
