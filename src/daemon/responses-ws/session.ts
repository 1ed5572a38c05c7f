/**
 * One Responses WebSocket connection (docs/responses-websocket.md): each `response.create` text frame is
 * one Responses request, served by the same pipeline as `POST /v1/responses` with `stream: true` (the
 * executor, request stages, translation through the codecs, usage row, request log), and its Server-Sent
 * Events are sent back one JSON frame each, ending with the stream's own terminal event
 * (`response.completed`, `response.incomplete` or `response.failed`). Responses on one socket run one
 * after another, in the order they were asked for.
 */
import type { AuthInfo } from '../auth/pipeline.js';
import { asRouterError, RouterError } from '../http/errors.js';
import { runChat } from '../proxy/chat.js';
import type { KeyStore } from '../keys/store.js';
import type { PipelineDeps } from '../proxy/deps.js';

/** What a Responses socket session runs on: the request pipeline, and the keys it re-reads per turn. */
export interface ResponsesSocketDeps extends PipelineDeps {
  keys: Pick<KeyStore, 'get' | 'touch'>;
}
import { encodeResponsesStreamError } from '../translate/formats/openai-responses/errors.js';
import { SseReader } from '../translate/sse.js';
import { SocketPool } from '../proxy/upstream-socket.js';
import type { ResponseChain } from '../proxy/socket-route.js';

/** What a session needs from its socket. */
export interface FrameSink {
  send(text: string): void;
  close(code: number, reason: string): void;
  /** Bytes queued on the socket and not yet written (a client that stopped reading). */
  buffered(): number;
}

/** Requests waiting behind the one in progress, at most; more is a protocol error (the client does not wait). */
export const MAX_QUEUED = 16;
/** A client that lets this much output pile up unread is dropped. */
const MAX_BUFFERED = 8 * 1024 * 1024;
/** Fields that make no sense on this transport (`stream` is implicit; `background` is not supported). */
const TRANSPORT_FIELDS = ['type', 'stream', 'background'];

/** Conversations kept per socket for `previous_response_id` (the latest responses only: clients chain to the last one). */
const KEPT_RESPONSES = 4;

/** A Responses `input` as a list of items (a string is one user message). */
function inputItems(input: unknown): unknown[] {
  if (typeof input === 'string') return [{ role: 'user', content: input }];
  return Array.isArray(input) ? input : [];
}

/** The terminal events of a Responses stream. */
const TERMINAL = new Set(['response.completed', 'response.failed', 'response.incomplete']);

/** The `error` + `response.failed` frames of a response refused before its stream began. */
function failureFrames(status: number, message: string, code?: string, model?: string): string[] {
  return encodeResponsesStreamError({ type: 'error', status, message, code }, { model }).map((m) => m.data);
}

export class ResponsesSession {
  private chain: Promise<void> = Promise.resolve();
  private queued = 0;
  private closed = false;
  /** Cancels the stream in progress when the socket goes away. */
  private cancel?: () => void;
  /**
   * The whole conversation (input items, then output items) of the latest responses served on this
   * socket, by response id. A `response.create` naming one of them as `previous_response_id` is sent as that
   * conversation plus its new input, so chaining works whatever the upstream (OpenAI's WebSocket mode keeps
   * this state on the socket too, `store: false` included); an id from elsewhere goes to the upstream as is.
   */
  private readonly history = new Map<string, unknown[]>();
  /**
   * The upstream WebSockets of this client socket (providers that speak the transport, e.g. codex): one per
   * account, kept for the responses that follow and closed with this socket.
   */
  private readonly upstream = new SocketPool();

  constructor(
    private readonly services: ResponsesSocketDeps,
    private readonly auth: AuthInfo,
    private readonly headers: Headers,
    private readonly sink: FrameSink,
  ) {}

  /** True while a response is being served or waits its turn. */
  get busy(): boolean {
    return this.queued > 0;
  }

  /** One text frame from the client. */
  receive(text: string): void {
    let msg: unknown;
    try {
      msg = JSON.parse(text);
    } catch {
      return this.sendError(400, 'The message is not JSON.', 'invalid_json');
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg)) return this.sendError(400, 'A message must be a JSON object.', 'invalid_request_error');
    const body = msg as Record<string, unknown>;
    if (body.type !== 'response.create') {
      return this.sendError(400, `Unsupported message type '${String(body.type)}'; send {"type": "response.create", ...}.`, 'unknown_event_type');
    }
    if (body.background === true) return this.sendError(400, "'background' is not supported over WebSocket.", 'invalid_request_error');
    if (this.queued >= MAX_QUEUED) {
      this.sendError(429, `More than ${MAX_QUEUED} responses are waiting on this socket.`, 'rate_limited');
      return this.sink.close(1008, 'too many queued responses');
    }
    const raw: Record<string, unknown> = {};
    for (const k in body) if (!TRANSPORT_FIELDS.includes(k)) raw[k] = body[k];
    raw.stream = true;
    this.queued++;
    this.chain = this.chain.then(() => this.serve(raw)).finally(() => this.queued--);
  }

  /** The socket closed: the response in progress is abandoned (the upstream call is cancelled). */
  end(): void {
    this.closed = true;
    this.cancel?.();
    this.upstream.close();
  }

  private send(text: string): void {
    if (this.closed) return;
    if (this.sink.buffered() > MAX_BUFFERED) {
      this.closed = true;
      this.cancel?.();
      return this.sink.close(1008, 'client is not reading');
    }
    this.sink.send(text);
  }

  private sendError(status: number, message: string, code: string): void {
    this.send(JSON.stringify({ type: 'error', status, error: { type: new RouterError(status).type, code, message, param: null } }));
  }

  private async serve(raw: Record<string, unknown>): Promise<void> {
    if (this.closed) return;
    const model = typeof raw.model === 'string' ? raw.model : undefined;
    const auth = this.currentAuth();
    if (!auth) {
      for (const f of failureFrames(401, 'The API key of this socket was disabled or deleted.', 'unauthorized', model)) this.send(f);
      this.closed = true;
      return this.sink.close(1008, 'key no longer valid');
    }
    const prev = raw.previous_response_id;
    const kept = typeof prev === 'string' ? this.history.get(prev) : undefined;
    let chain: ResponseChain | undefined;
    if (kept) {
      // An upstream socket that served `prev` still holds it: the executor may send only the new items there.
      chain = { previousResponseId: prev as string, input: inputItems(raw.input) };
      raw.input = [...kept, ...chain.input];
      delete raw.previous_response_id;
    }
    const conversation = inputItems(raw.input);
    let res: Response;
    try {
      const ctx = { services: this.services, auth, event: { req: { headers: this.headers } } };
      const reply = await runChat(ctx, {
        clientFormat: 'openai-responses',
        raw,
        model: model as string,
        stream: true,
        endpoint: '/v1/responses',
        transport: 'websocket',
        upstreamSockets: this.upstream,
        chain,
      });
      if (!(reply instanceof Response)) return; // written elsewhere: never without a sink
      res = reply;
    } catch (thrown) {
      const err = asRouterError(thrown);
      const status = err instanceof RouterError ? err.status : 500;
      const message = err instanceof RouterError ? err.message : 'Internal error.';
      for (const f of failureFrames(status, message, err instanceof RouterError ? err.code : undefined, model)) this.send(f);
      return;
    }
    if (!(res.headers.get('content-type') ?? '').startsWith('text/event-stream')) {
      // The upstream's own error, relayed as the HTTP reply would be: the same failure frames.
      const text = await res.text().catch(() => '');
      let error: { message?: string; code?: string } = {};
      try {
        error = (JSON.parse(text) as { error?: typeof error }).error ?? {};
      } catch {
        // not JSON: the status alone
      }
      for (const f of failureFrames(res.status, error.message ?? `HTTP ${res.status}`, error.code ?? undefined, model)) this.send(f);
      return;
    }
    await this.relay(res, model, conversation);
  }

  /**
   * The socket's caller as of now: the key was checked at the upgrade, but a socket lives long, so each
   * response reads the key again (disabled or deleted: none; changed scopes and limits apply at once).
   */
  private currentAuth(): AuthInfo | undefined {
    const key = this.auth.key;
    if (!key) return this.auth;
    const now = this.services.keys.get(key.id);
    if (!now?.isActive) return undefined;
    this.services.keys.touch(now);
    return { ...this.auth, key: now };
  }

  /** Keeps a finished response's conversation for a later `previous_response_id`. */
  private remember(terminalEvent: string, conversation: unknown[]): void {
    try {
      const response = (JSON.parse(terminalEvent) as { response?: { id?: unknown; output?: unknown } }).response;
      if (typeof response?.id !== 'string' || !Array.isArray(response.output)) return;
      this.history.set(response.id, [...conversation, ...response.output]);
      while (this.history.size > KEPT_RESPONSES) this.history.delete(this.history.keys().next().value!);
    } catch {
      // not JSON: nothing to keep
    }
  }

  /** Sends each event of the stream as one frame; a stream cut before its terminal event ends in `response.failed`. */
  private async relay(res: Response, model: string | undefined, conversation: unknown[]): Promise<void> {
    const reader = res.body!.getReader();
    this.cancel = () => void reader.cancel().catch(() => undefined);
    const sse = new SseReader();
    let terminal = false;
    let lastSeq = -1;
    const forward = (data: string): void => {
      if (data === '[DONE]') return;
      // Event type and sequence number, read without parsing the whole event (the frame is the data as is).
      const type = /"type"\s*:\s*"([^"]+)"/.exec(data)?.[1];
      const seq = /"sequence_number"\s*:\s*(\d+)/.exec(data)?.[1];
      if (seq !== undefined) lastSeq = Number(seq);
      if (type && TERMINAL.has(type)) {
        terminal = true;
        if (type !== 'response.failed') this.remember(data, conversation);
      }
      this.send(data);
    };
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const m of sse.push(value)) forward(m.data);
        if (this.closed) return;
      }
      for (const m of sse.end()) forward(m.data);
    } catch {
      // the stream broke: reported below unless the socket itself went away
    } finally {
      this.cancel = undefined;
    }
    if (!terminal && !this.closed) {
      const frames = encodeResponsesStreamError({ type: 'error', status: 502, message: 'The upstream stream ended before the response was complete.' }, { model, nextSequence: lastSeq + 1 });
      for (const m of frames) this.send(m.data);
    }
  }
}
