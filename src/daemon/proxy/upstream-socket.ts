/**
 * The Responses WebSocket transport towards a provider that speaks it (ProviderDef.responsesWebSocket: the
 * ChatGPT Codex backend; docs/responses-websocket.md, "Upstream WebSocket"). One `response.create` text
 * frame per response; the provider answers the Responses stream events, one JSON frame each, ending with
 * `response.completed`, `response.incomplete` or `response.failed`; responses on one socket follow one
 * another (codex-rs/codex-api/src/endpoint/responses_websocket.rs). Each response is read as an
 * {@link UpstreamReply}, its frames turned into the Server-Sent Events the HTTP stream would carry, so the
 * chat pipeline reads it exactly as an HTTP stream (decoders, commit before failover, usage, errors).
 *
 * Failures look like HTTP ones to the executor: a refused handshake is a reply with its status, headers and
 * body (401/403 go to the same auth check); a wrapped error frame before any event (`{type: "error",
 * status_code, error, headers}`, e.g. `usage_limit_reached` with `resets_at`) is a reply with that status,
 * the headers it lists and `{error}` as its body; a socket that closes before the terminal event fails the
 * read (before the first content: failover; after: `response.failed` to the client).
 */
import WebSocket from 'ws';
import type { UpstreamHeaders, UpstreamReply } from '../net/upstream.js';

/** Error bodies of refused handshakes are read up to this size. */
const REFUSAL_BODY_MAX = 64 * 1024;
/** Longest wait for the handshake, ms (the attempt's own first-byte timer usually ends it sooner). */
const HANDSHAKE_MS = 30_000;
/** Largest frame accepted from the provider. */
const MAX_FRAME = 64 * 1024 * 1024;
const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete']);

class AbortedError extends Error {
  readonly code = 'UND_ERR_ABORTED';
  constructor() {
    super('Request aborted');
    this.name = 'AbortError';
  }
}

/** A handshake the provider answered with an HTTP reply instead of switching protocols. */
interface Refusal {
  status: number;
  headers: UpstreamHeaders;
  body: string;
}

/** One WebSocket to a provider's Responses endpoint; serves one response at a time. */
export class UpstreamSocket {
  private readonly ws: WebSocket;
  private readonly opened: Promise<Refusal | undefined>;
  private current?: SocketExchange;
  private closedBy?: string;
  /** Response ids this socket served to the end, which the provider keeps for `previous_response_id`. */
  readonly served = new Set<string>();

  /**
   * `once`: a socket of its own for one response (an HTTP client's request), closed when it ends; else it
   * stays open for the next response of its pool.
   */
  constructor(
    url: string,
    headers: Record<string, string>,
    private readonly once = false,
  ) {
    this.ws = new WebSocket(url, { headers, perMessageDeflate: false, handshakeTimeout: HANDSHAKE_MS, maxPayload: MAX_FRAME, followRedirects: false });
    this.opened = new Promise<Refusal | undefined>((resolve, reject) => {
      this.ws.once('open', () => resolve(undefined));
      // With a listener here ws leaves the refused request to us: its body is read, then it is dropped.
      this.ws.once('unexpected-response', (req, res) => {
        const parts: Buffer[] = [];
        let size = 0;
        const done = () => {
          req.destroy();
          resolve({ status: res.statusCode ?? 502, headers: res.headers as UpstreamHeaders, body: Buffer.concat(parts).toString('utf8') });
        };
        res.on('data', (c: Buffer) => {
          if (size < REFUSAL_BODY_MAX) parts.push(c);
          size += c.length;
        });
        res.once('end', done);
        res.once('error', done);
      });
      this.ws.on('error', (err) => {
        this.closedBy ??= err.message;
        reject(err);
        this.current?.closed(`The upstream WebSocket failed (${err.message}).`);
      });
    });
    this.opened.catch(() => undefined);
    this.ws.on('message', (data, isBinary) => this.current?.frame(String(data), isBinary));
    this.ws.on('close', (code) => {
      this.closedBy ??= `closed with ${code}`;
      this.current?.closed(`The upstream WebSocket closed (${code}) before the response was complete.`);
    });
  }

  /** Open or opening, and no response in progress. */
  get idle(): boolean {
    return this.closedBy === undefined && this.current === undefined;
  }

  get closed(): boolean {
    return this.closedBy !== undefined;
  }

  /** Sends one `response.create` (the Responses body `body`, JSON) and returns its reply. */
  send(body: string): { exchange: SocketExchange; response: Promise<SocketExchange> } {
    const exchange = new SocketExchange(this);
    this.current = exchange;
    const frame = `{"type":"response.create",${body.trimStart().slice(1)}`;
    this.opened.then(
      (refusal) => {
        if (exchange.aborted) return;
        if (refusal) return exchange.refused(refusal);
        this.ws.send(frame, (err) => {
          if (err) exchange.closed(`The upstream WebSocket failed (${err.message}).`);
        });
      },
      (err: Error) => exchange.closed(`The upstream WebSocket could not be opened (${err.message}).`, err),
    );
    return { exchange, response: exchange.started };
  }

  /** The response in progress is over (served, failed or abandoned): the socket may take the next one. */
  release(exchange: SocketExchange, reusable: boolean): void {
    if (this.current === exchange) this.current = undefined;
    if (!reusable || this.once) this.close();
  }

  close(): void {
    this.closedBy ??= 'closed by router';
    if (this.ws.readyState === WebSocket.CONNECTING || this.ws.readyState === WebSocket.OPEN) this.ws.close(1000);
  }
}

/** The string values of a wrapped error frame's `headers` object, lower-cased, as reply headers. */
function frameHeaders(headers: unknown): UpstreamHeaders {
  const out: UpstreamHeaders = {};
  if (headers && typeof headers === 'object') {
    for (const [k, v] of Object.entries(headers)) if (typeof v === 'string' || typeof v === 'number' || typeof v === 'boolean') out[k.toLowerCase()] = String(v);
  }
  return out;
}

/** One response on an {@link UpstreamSocket}, read as an upstream reply (see the file comment). */
export class SocketExchange implements UpstreamReply {
  statusCode = 0;
  headers: UpstreamHeaders = {};
  aborted = false;
  readonly started: Promise<SocketExchange>;
  private resolveStart!: (x: SocketExchange) => void;
  private rejectStart!: (err: Error) => void;
  private readonly chunks: Buffer[] = [];
  private complete = false;
  private failure?: Error;
  private waiter?: () => void;

  constructor(private readonly socket: UpstreamSocket) {
    this.started = new Promise<SocketExchange>((resolve, reject) => {
      this.resolveStart = resolve;
      this.rejectStart = reject;
    });
    this.started.catch(() => undefined);
  }

  /** A text frame of this response. */
  frame(text: string, binary: boolean): void {
    if (this.complete || this.failure) return;
    if (binary) return this.closed('The upstream sent a binary WebSocket frame.');
    let event: { type?: unknown; status_code?: unknown; error?: unknown; headers?: unknown; response?: { id?: unknown } };
    try {
      event = JSON.parse(text) as typeof event;
    } catch {
      // Not JSON: relayed as is, the stream reader reports a malformed event.
      return this.push(`data: ${text}\n\n`);
    }
    const type = typeof event.type === 'string' ? event.type : 'message';
    const status = typeof event.status_code === 'number' ? event.status_code : 0;
    if (type === 'error' && status >= 400 && this.statusCode === 0) {
      // A refusal before the response began: read as the HTTP error reply it stands for. Codex drops the
      // socket after one; so does router.
      this.statusCode = status;
      this.headers = { 'content-type': 'application/json', ...frameHeaders(event.headers) };
      this.chunks.push(Buffer.from(JSON.stringify({ error: event.error ?? { message: `HTTP ${status}` } })));
      this.finish(false);
      return this.resolveStart(this);
    }
    if (this.statusCode === 0) {
      this.statusCode = 200;
      this.headers = { 'content-type': 'text/event-stream' };
      this.resolveStart(this);
    }
    this.push(`event: ${type}\ndata: ${text}\n\n`);
    if (TERMINAL.has(type)) {
      if (type !== 'response.failed' && typeof event.response?.id === 'string') this.socket.served.add(event.response.id);
      this.finish(true);
    } else if (type === 'error') this.finish(false);
  }

  /** The provider refused the handshake: its HTTP reply is this response's. */
  refused(r: Refusal): void {
    this.statusCode = r.status;
    this.headers = r.headers;
    this.chunks.push(Buffer.from(r.body));
    this.finish(false);
    this.resolveStart(this);
  }

  /** The socket went away (or could not be opened) before this response ended. */
  closed(message: string, cause?: Error): void {
    if (this.complete || this.failure) return;
    const err = Object.assign(new Error(message), { code: (cause as { code?: string } | undefined)?.code ?? 'ROUTER_WS_CLOSED' });
    this.fail(err);
  }

  abort(): void {
    if (this.failure) return;
    this.aborted = true;
    // A response abandoned midway would spill its remaining events into the next one: the socket goes too.
    this.fail(new AbortedError(), !this.complete);
  }

  discard(): void {
    if (!this.complete) this.abort();
  }

  async read(): Promise<Buffer | undefined> {
    for (;;) {
      if (this.failure) throw this.failure;
      if (this.chunks.length) return this.chunks.shift();
      if (this.complete) return undefined;
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
    }
  }

  async text(limit = 64 * 1024 * 1024): Promise<string> {
    let out = '';
    for (let c = await this.read(); c !== undefined; c = await this.read()) {
      out += c.toString('utf8');
      if (out.length > limit) throw new Error(`upstream reply exceeds ${limit} bytes`);
    }
    return out;
  }

  async textUpTo(limit: number): Promise<string> {
    try {
      return (await this.text(Number.MAX_SAFE_INTEGER)).slice(0, limit);
    } catch {
      return Buffer.concat(this.chunks).toString('utf8').slice(0, limit);
    }
  }

  private push(text: string): void {
    this.chunks.push(Buffer.from(text));
    this.wake();
  }

  private finish(reusable: boolean): void {
    this.complete = true;
    this.socket.release(this, reusable);
    this.wake();
  }

  private fail(err: Error, closeSocket = true): void {
    this.failure = err;
    this.chunks.length = 0;
    this.socket.release(this, !closeSocket);
    this.rejectStart(err);
    this.wake();
  }

  private wake(): void {
    const w = this.waiter;
    this.waiter = undefined;
    w?.();
  }
}

/**
 * The upstream sockets of one client: one per provider account, reused by the responses that follow (a
 * Responses WebSocket client gets one pool for its socket; an HTTP request a pool of its own, closed after
 * it). A socket busy with a response is never shared; a closed one is replaced.
 */
export class SocketPool {
  private readonly sockets = new Map<string, UpstreamSocket>();
  private ended = false;

  /** An idle socket for `key` (a provider account and URL), opening a new one when there is none. */
  take(key: string, url: string, headers: Record<string, string>): UpstreamSocket {
    const have = this.sockets.get(key);
    if (have?.idle) return have;
    // Busy (responses on one client socket are sequential, so only if that changes): a socket of its own.
    if (have && !have.closed) return new UpstreamSocket(url, headers, true);
    const socket = new UpstreamSocket(url, headers);
    if (this.ended) queueMicrotask(() => socket.close());
    else this.sockets.set(key, socket);
    return socket;
  }

  /** The socket `key` would get now, if it is still open (for `previous_response_id` reuse). */
  peek(key: string): UpstreamSocket | undefined {
    const s = this.sockets.get(key);
    return s?.idle ? s : undefined;
  }

  /** Closes every socket (the client's socket closed, or the request ended). */
  close(): void {
    this.ended = true;
    for (const s of this.sockets.values()) s.close();
    this.sockets.clear();
  }
}
