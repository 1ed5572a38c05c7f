import { createBrotliDecompress, createGunzip, createInflate, type Gunzip } from 'node:zlib';
import type { Agent as UndiciAgent, Dispatcher } from 'undici';
import AgentClass from 'undici/lib/dispatcher/agent.js';

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

/** Reply headers as a record: lower-case names, repeated headers as arrays (as undici's request API gives). */
export type UpstreamHeaders = Record<string, string | string[] | undefined>;

/** Bytes buffered from the upstream before it is paused until the reader catches up. */
const HIGH_WATER = 256 * 1024;

class AbortedError extends Error {
  readonly code = 'UND_ERR_ABORTED';
  constructor() {
    super('Request aborted');
    this.name = 'AbortError';
  }
}

/**
 * One upstream request and its reply, on undici's lowest-level API (`Dispatcher.dispatch` with a handler):
 * no web streams, no AbortSignal, no Readable per request, which halves the client-side CPU per request
 * compared with `undici.request` (bench/lib measures ~65 vs ~140 µs here). The body is read either whole
 * (`text()`) or chunk by chunk (`read()`, with backpressure: the socket is paused while HIGH_WATER bytes
 * wait). A reply with a content-encoding is decoded on the way (router asks for identity; some send gzip).
 */
export class UpstreamExchange implements Dispatcher.DispatchHandler {
  statusCode = 0;
  headers: UpstreamHeaders = {};
  private abortFn?: (err: Error) => void;
  private resumeFn?: () => void;
  private paused = false;
  private readonly chunks: Buffer[] = [];
  private buffered = 0;
  private ended = false;
  private failure?: Error;
  private waiter?: () => void;
  private started?: { resolve: (x: UpstreamExchange) => void; reject: (err: Error) => void };
  private decoder?: Gunzip;
  aborted = false;

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
      (req.dispatcher ?? agent).dispatch({ origin: url.origin, path: url.path, method: req.method ?? 'POST', headers: req.headers, body: req.body ?? null }, exchange);
    } catch (err) {
      exchange.onError(err as Error);
    }
    return { exchange, response };
  }

  /** Ends the request at any point (timeout, client gone); a pending read or `text()` rejects. */
  abort(): void {
    if (this.aborted || this.ended) return;
    this.aborted = true;
    const err = new AbortedError();
    if (this.abortFn) this.abortFn(err);
    else this.onError(err);
  }

  /** The whole body as text, at most `limit` bytes (beyond it the request is aborted and this rejects). */
  async text(limit = 64 * 1024 * 1024): Promise<string> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.buffered > limit) {
        this.abort();
        throw new Error(`upstream reply exceeds ${limit} bytes`);
      }
      if (this.ended) {
        const out = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks);
        this.chunks.length = 0;
        this.buffered = 0;
        return out.toString('utf8');
      }
      // Reading whole: never pause the socket for the high-water mark.
      this.resume();
      await new Promise<void>((r) => (this.waiter = r));
    }
  }

  /**
   * At most `limit` bytes of the body as text (less when it ends sooner); the rest is not read and the
   * request is released. Never rejects: a failure mid-body gives what arrived.
   */
  async textUpTo(limit: number): Promise<string> {
    while (!this.ended && !this.failure && this.buffered < limit) {
      this.resume();
      await new Promise<void>((r) => (this.waiter = r));
    }
    this.discard();
    const out = Buffer.concat(this.chunks);
    this.chunks.length = 0;
    this.buffered = 0;
    return out.subarray(0, limit).toString('utf8');
  }

  /** Drops an unread body: the request is ended at once (its connection is closed, not reused). */
  discard(): void {
    if (!this.ended && !this.failure) this.abort();
  }

  /** The next chunk of the body; undefined at its end. Rejects when the request failed or was aborted. */
  async read(): Promise<Buffer | undefined> {
    for (;;) {
      if (this.chunks.length) {
        const chunk = this.chunks.shift()!;
        this.buffered -= chunk.length;
        if (this.buffered < HIGH_WATER) this.resume();
        return chunk;
      }
      if (this.failure) throw this.failure;
      if (this.ended) return undefined;
      await new Promise<void>((r) => (this.waiter = r));
    }
  }

  private resume(): void {
    if (this.paused) {
      this.paused = false;
      this.resumeFn?.();
    }
    if (this.decoder?.isPaused()) this.decoder.resume();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    if (w) w();
  }

  private push(chunk: Buffer): boolean {
    this.chunks.push(chunk);
    this.buffered += chunk.length;
    this.wake();
    return this.buffered < HIGH_WATER;
  }

  // ---- undici handler ----

  onConnect(abort: (err?: Error) => void): void {
    this.abortFn = abort;
    if (this.aborted) abort(new AbortedError());
  }

  onHeaders(statusCode: number, rawHeaders: Buffer[], resume: () => void): boolean {
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
    const encoding = String(headers['content-encoding'] ?? '').trim().toLowerCase();
    if (encoding) this.decoder = decoderFor(encoding);
    if (this.decoder) {
      const d = this.decoder;
      d.on('data', (c: Buffer) => {
        if (!this.push(c)) d.pause();
      });
      d.on('end', () => this.finish());
      d.on('error', (err) => this.fail(err));
    }
    const started = this.started;
    this.started = undefined;
    started?.resolve(this);
    return true;
  }

  onData(chunk: Buffer): boolean {
    let more: boolean;
    if (this.decoder) {
      more = this.decoder.write(chunk);
      if (!more) this.decoder.once('drain', () => this.resume());
    } else more = this.push(chunk);
    if (!more) this.paused = true;
    return more;
  }

  onComplete(): void {
    if (this.decoder) this.decoder.end();
    else this.finish();
  }

  onError(err: Error): void {
    this.fail(err);
  }

  private finish(): void {
    this.ended = true;
    this.wake();
  }

  private fail(err: Error): void {
    if (this.failure || this.ended) return;
    this.failure = err;
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

/** Closes pooled connections (daemon shutdown). */
export function closeUpstreams(): Promise<void> {
  return agent.close();
}
