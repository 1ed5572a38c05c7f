import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import { FastResponse } from 'srvx';
import { HANDLED } from '../http/app.js';
import { RouterError } from '../http/errors.js';
import type { Price } from '../usage/pricing.js';
import type { IrFinishReason, IrResponse, IrUsage, WireFormat } from '../translate/ir.js';
import type { Target } from '../providers/target.js';
import { CLIENT_LEFT, relayBody, type OpenReply } from './attempt.js';
import type { ExecRequest } from './execute.js';
import { recordOutcome, type Outcome } from './outcome.js';
import type { Plan } from './plan.js';
import type { StreamBody } from './stream.js';
import { attemptErrorResponse, type AttemptError } from './upstream-error.js';

/** What a served attempt tells its usage row. */
export interface ServedFacts {
  upstreamMs: number | undefined;
  usage?: Partial<IrUsage>;
  finishReason?: IrFinishReason;
  /** The reply's text, only when the upstream reported no usage (its output tokens are then estimated). */
  outputText?: string;
  /** The cost from the model's price (undefined: priced by tokens). */
  cost?: (price: Price | undefined) => number | null;
  notes?: Record<string, unknown>;
  streamed?: boolean;
  /** A stream that broke after it was committed to the client. */
  error?: string;
  /** With `error`: the client left (no fault of the provider's). */
  clientAborted?: boolean;
}

/** The Server-Timing header of a served reply. */
function serverTiming(routerMs: number, upstreamMs: number): string {
  return `router;dur=${routerMs.toFixed(2)}, upstream;dur=${upstreamMs.toFixed(2)}`;
}

/**
 * A committed stream to be written straight into the client's Node response, sent after the attempt's
 * bookkeeping (its per-target timer is cleared by then): the promise ends with the stream, so h3 does not
 * consider the request finished before that.
 */
export class DirectStream {
  constructor(
    private readonly sink: ServerResponse,
    private readonly headers: Record<string, string>,
    private readonly body: StreamBody,
  ) {}

  async send(): Promise<typeof HANDLED> {
    this.sink.writeHead(200, this.headers);
    await this.body.writeTo(this.sink);
    return HANDLED;
  }
}

/**
 * The reply side of one request, for every endpoint (chat in each client format, every family of
 * families/, count_tokens, router's own calls): stamps every header (content type, server timing, version,
 * trace id, the stages' own; no-cache on a stream), writes JSON or SSE (straight into the client's Node
 * response when there is one), records each outcome once with its usage, cost and notes: served whole,
 * relayed or streamed to its end or broken after commit, answered from the cache, refused before any
 * attempt, an attempt that failed or lost a hedge; and turns the last failure into the client's error.
 * Nothing else writes a usage row of the proxy (test/proxy/outcomes.test.ts checks it).
 */
export class Reply {
  constructor(
    private readonly env: ExecRequest,
    /** The client's Node response, when the reply may be written to it directly (chat's proxy routes). */
    private readonly sink?: ServerResponse,
  ) {}

  /**
   * The headers of a served reply; `extra` (the stages' own: x-router-cache...) last. With the attempt's
   * `outcome`, its router and upstream times also feed /metrics.
   */
  headers(outcome: Outcome | undefined, contentType: string, upstreamMs: number, stream?: 'sse' | 'relay', extra?: Record<string, string>): Record<string, string> {
    const routerMs = Math.max(0, performance.now() - this.env.t0 - upstreamMs);
    // An upstream's reply (not a stage's: a cache hit) feeds the overhead and first-byte histograms.
    if (outcome) this.env.services.metrics.serverTiming(outcome.target.provider.id, routerMs, upstreamMs, outcome.call.stream);
    const headers: Record<string, string> = {
      'content-type': contentType,
      'server-timing': serverTiming(routerMs, upstreamMs),
      'x-router-version': this.env.services.version,
      'x-router-trace-id': this.env.traceId,
    };
    if (stream) headers['cache-control'] = 'no-cache';
    if (stream === 'relay') headers['x-accel-buffering'] = 'no';
    if (extra) for (const k in extra) headers[k] = extra[k]!;
    return headers;
  }

  /** Records a served attempt: status 200, its upstream time, usage, cost and notes; the usage row and the caller's token budgets. */
  record(outcome: Outcome, facts: ServedFacts): void {
    outcome.status = 200;
    outcome.upstreamMs = facts.upstreamMs;
    outcome.usage = facts.usage;
    if (facts.finishReason) outcome.finishReason = facts.finishReason;
    if (facts.outputText !== undefined) outcome.outputText = facts.outputText;
    if (facts.streamed) outcome.streamed = true;
    if (facts.error) outcome.error = facts.error;
    if (facts.cost) outcome.costUsd = facts.cost(this.env.services.usage.pricing.lookup(outcome.target.provider.id, outcome.target.model));
    if (facts.notes) outcome.notes = { ...outcome.notes, ...facts.notes };
    recordOutcome(this.env.services, outcome);
    const tokens = (facts.usage?.inputTokens ?? 0) + (facts.usage?.outputTokens ?? 0);
    if (tokens > 0) this.env.services.quotas.recordTokens(outcome.auth, { provider: outcome.target.provider.id, model: outcome.target.model, tokens });
  }

  /**
   * A stream (relayed or translated) that ended: recorded; one that broke after commit counts against the
   * provider's circuit (not when the client left).
   */
  ended(outcome: Outcome, facts: ServedFacts): void {
    this.record(outcome, { ...facts, streamed: true });
    if (facts.error && !facts.clientAborted) this.env.services.resilience.breakers.recordFailure(outcome.target.provider.id, 'network');
  }

  /**
   * A reply a request stage gave without calling the upstream (a response-cache hit): no account used, no
   * upstream time, and (cacheHit) a certain zero cost; its tokens are those of the stored reply. The
   * caller's token budgets are not charged.
   */
  cached(outcome: Outcome, response: IrResponse): void {
    outcome.target = { ...outcome.target, connectionId: undefined };
    outcome.status = 200;
    outcome.usage = response.usage ?? { inputTokens: 0, outputTokens: 0 };
    outcome.finishReason = response.finishReason;
    outcome.streamed = outcome.call.stream;
    outcome.upstreamMs = 0;
    (outcome as Outcome & { cacheHit: boolean }).cacheHit = true;
    recordOutcome(this.env.services, outcome);
  }

  /** An attempt that failed (its status and message; a hedged attempt another target beat, with its note). */
  failed(outcome: Outcome, error: Pick<AttemptError, 'status' | 'message'>, notes?: Record<string, unknown>): void {
    outcome.status = error.status;
    outcome.error = error.message;
    if (notes) outcome.notes = { ...outcome.notes, ...notes };
    recordOutcome(this.env.services, outcome);
  }

  /**
   * A request refused before any upstream attempt (unknown model, scope, quota, open circuits, a stage's
   * block): the provider and model of its first planned target (or of the `<provider>/<model>` it named),
   * else provider `router` (the router itself answered); no tokens, no cost, no upstream time.
   */
  refused(plan: Plan | undefined, err: RouterError): void {
    const { services, call } = this.env;
    const named = typeof call.model === 'string' ? call.model : '';
    const split = named ? services.providers.split(named) : undefined;
    const first = plan?.targets[0];
    const target = {
      provider: { id: first?.provider.id ?? split?.def.id ?? 'router' },
      model: first?.model ?? split?.model ?? (named || '-'),
      publicModel: first?.publicModel ?? (named || '-'),
      connectionId: undefined,
    } as unknown as Target;
    recordOutcome(services, {
      traceId: this.env.traceId,
      call,
      target,
      t0: this.env.t0,
      auth: this.env.auth,
      status: err.status,
      error: err.message,
      combo: plan?.combo?.name,
      client: this.env.client,
      session: plan?.session ?? this.env.sessionKey,
    });
  }

  /** A whole reply: recorded, then sent as a web Response. */
  send(outcome: Outcome, body: string | Uint8Array, contentType: string, facts: ServedFacts & { upstreamMs: number }): Response {
    this.record(outcome, facts);
    return new FastResponse(body as BodyInit, { status: 200, headers: this.headers(outcome, contentType, facts.upstreamMs, facts.streamed ? 'sse' : undefined) });
  }

  /**
   * Writes a whole body with its headers: straight into the client's Node response when there is one (one
   * write with its length known, not chunked), else as a web Response.
   */
  write(body: string | Uint8Array, headers: Record<string, string>): Response | typeof HANDLED {
    const sink = this.sink;
    if (sink && !sink.headersSent && !sink.destroyed) {
      headers['content-length'] = String(typeof body === 'string' ? Buffer.byteLength(body) : body.length);
      sink.writeHead(200, headers);
      sink.end(body);
      return HANDLED;
    }
    return new FastResponse(body as BodyInit, { status: 200, headers });
  }

  /** A committed SSE stream: written straight to the client's Node response (sent once the attempt's bookkeeping is done), or as a web Response. */
  stream(body: StreamBody, headers: Record<string, string>): DirectStream | Response {
    const sink = this.sink;
    if (sink && !sink.headersSent && !sink.destroyed) return new DirectStream(sink, headers, body);
    // srvx pipes a Node Readable body straight into the socket (typed as a web body only).
    return new FastResponse(body.readable() as unknown as ReadableStream, { status: 200, headers });
  }

  /** A reply relayed to the client as it arrives; recorded when it ends (`end` reads its tail for usage). */
  relay(outcome: Outcome, open: OpenReply, contentType: string, end: (tail: string, bytes: number) => Omit<ServedFacts, 'upstreamMs'>): Response {
    const upstreamMs = performance.now() - open.tSend;
    const body: Readable = relayBody(open, (error, tail, bytes) => {
      this.ended(outcome, { ...end(tail, bytes), upstreamMs, error, clientAborted: error === CLIENT_LEFT || error?.startsWith('The client closed') });
    });
    return new FastResponse(body as unknown as ReadableStream, { status: 200, headers: this.headers(outcome, contentType, upstreamMs, 'relay') });
  }

  /** The client's reply once every target failed: the upstream's own error body when it speaks the client's format, else the standard body. */
  fail(last: AttemptError, upstreamFormat: string, clientFormat: WireFormat = 'openai-chat'): Response {
    const failure = attemptErrorResponse(last, clientFormat, upstreamFormat, this.env.services.version, this.env.traceId);
    if (failure instanceof RouterError) throw failure;
    return failure;
  }
}
