import { FastResponse } from 'srvx';
import { randomUUID } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { HANDLED } from '../http/app.js';
import { badRequest, RouterError } from '../http/errors.js';
import type { RouteContext } from '../http/routes.js';
import type { UpstreamFormat } from '../providers/types.js';
import type { Services } from '../services.js';
import { getClientCodec, getUpstreamCodec } from '../translate/registry.js';
import { assertResponsesStatePortable } from '../translate/formats/openai-responses/passthrough.js';
import type { IrRequest, IrResponse, IrUsage, WireFormat } from '../translate/ir.js';
import { openStream, type StreamBody, type StreamSummary } from './stream.js';
import { chatUrl, encodeOptionsFor, joinUrl, targetHeaders, withRequestHeaders, type Target } from './target.js';
import { planTargets, type Plan } from './plan.js';
import { HEADER } from '../../shared/headers.js';
import { allFailedError, attemptFailed, attemptSucceeded } from '../resilience/attempts.js';
import { circuitOpenError } from '../routing/errors.js';
import { AttemptError, attemptErrorResponse, httpAttemptError, networkAttemptError } from './upstream-error.js';
import { UpstreamExchange } from './upstream.js';
import { nativeBody, nativeHeaders } from './passthrough.js';
import { redactSecrets } from '../providers/mask.js';
import { recordOutcome, type Outcome } from './outcome.js';
import {
  completeStages,
  composeStreamTransforms,
  responseToEvents,
  runRequestStages,
  runResponseStages,
  stageResponse,
  type RequestStage,
  type StageContext,
} from './stages.js';
import { formatSseBatch } from '../translate/sse.js';
import type { TraceRecorder } from '../inspect/capture.js';

/** The relay variant of Chat Completions (per-minute limits per key and per client IP). */
export const RELAY_PATH = '/api/v1/relay/chat/completions';

/** A chat-like call as it arrived: the client's format, its parsed body, and the model it named. */
export interface ChatCall {
  clientFormat: WireFormat;
  raw: Record<string, unknown>;
  model: string;
  stream: boolean;
  endpoint: string;
  /**
   * The client's Node response, when the reply may be written to it directly (the proxy routes). Skips
   * the web Response and srvx's copy of it: the reply is written once, straight into the socket.
   */
  sink?: ServerResponse;
  /** Set once an outcome of this call was recorded (a usage row exists or is on its way). */
  recorded?: boolean;
}

export type ChatReply = Response | typeof HANDLED;

/**
 * A committed stream to be written straight into the client's Node response. Sent by runChat after the
 * attempt's bookkeeping (its per-target timer is cleared by then): the promise ends with the stream, so h3
 * does not consider the request finished before that.
 */
class DirectStream {
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

/** Which wire format to speak to a target: the client's own when the provider serves it natively. */
export function upstreamFormatFor(target: Target, clientFormat: WireFormat): UpstreamFormat | 'openai-completions' {
  const ep = target.provider.endpoints ?? {};
  if (clientFormat === 'openai-completions' && ep.completions) return 'openai-completions';
  if (clientFormat === 'openai-responses' && ep.responses) return 'openai-responses';
  return target.format;
}

function hasTools(raw: Record<string, unknown>): boolean {
  return Array.isArray(raw.tools) && raw.tools.length > 0;
}

/** Decodes the client request into IR once per call (only needed when translating). */
function decodeCall(call: ChatCall, headers: Headers): IrRequest {
  if (call.clientFormat === 'gemini') return getClientCodec('gemini').decodeRequest({ ...call.raw, model: call.model, stream: call.stream });
  return getClientCodec(call.clientFormat).decodeRequest(call.raw, headers);
}

interface Prepared {
  url: string;
  body: string;
  native: boolean;
  format: UpstreamFormat | 'openai-completions';
  /** Headers this request needs beyond the target's own (the client's Anthropic beta flags). */
  headers?: Record<string, string>;
  /** The decoded client request (decoded lazily, once per call); the staged one when stages ran. */
  request: () => IrRequest;
  /** Stages that see this request (empty on the fast path). */
  stages: RequestStage[];
  stageCtx?: StageContext;
  /** Traffic-inspector capture of this request (only when the captureTraffic setting is on). */
  capture?: TraceRecorder;
}

/**
 * Builds the upstream URL and body for one target: native passthrough, or translation through IR. A
 * request that stages rewrote (`staged`) always goes through IR, even between identical formats.
 */
function prepare(
  call: ChatCall,
  target: Target,
  decoded: () => IrRequest,
  staged: IrRequest | undefined,
  stages: RequestStage[],
  stageCtx: StageContext,
  capture: TraceRecorder | undefined,
): Prepared {
  const native = upstreamFormatFor(target, call.clientFormat);
  const format = staged && native === 'openai-completions' ? target.format : native;
  if (target.provider.supportsTools === false && hasTools(call.raw)) {
    throw badRequest(`Provider '${target.provider.id}' does not support tools; remove the tools array.`, 'tools');
  }
  if (format === call.clientFormat && !staged) {
    const url = format === 'openai-completions' ? joinUrl(target.baseUrl, 'completions') : chatUrl(target, format as UpstreamFormat, call.stream);
    const headers = nativeHeaders(call, stageCtx.requestHeaders);
    return { url, body: JSON.stringify(nativeBody(call, target)), native: true, format, headers, request: decoded, stages, stageCtx, capture };
  }
  const upstream = getUpstreamCodec(format as UpstreamFormat);
  const ir = staged ?? { ...decoded(), model: target.model };
  // Stored-state fields (previous_response_id...) cannot be honoured by another format: refuse, never drop.
  assertResponsesStatePortable(ir, format);
  return {
    url: chatUrl(target, format as UpstreamFormat, call.stream),
    body: JSON.stringify(upstream.encodeRequest(ir, encodeOptionsFor(target))),
    native: false,
    format,
    headers: upstream.requestHeaders?.(ir),
    request: staged ? () => staged : decoded,
    stages,
    stageCtx,
    capture,
  };
}

/** The text of a reply (text, refusal, thinking, tool arguments), for estimating its tokens. */
function replyText(res: IrResponse): string {
  let out = '';
  for (const p of res.parts) {
    if (p.type === 'text' || p.type === 'refusal' || p.type === 'thinking') out += p.text;
    else if (p.type === 'tool_call') out += p.name + p.arguments;
  }
  return out;
}

const TARGET_SPECIFIC_PARAMS = new Set(['tools', 'previous_response_id', 'conversation', 'prompt', 'background']);

/** A 400 that only this target causes, so another target of a combo may still serve the request. */
function isTargetSpecific(err: unknown): boolean {
  if (!(err instanceof RouterError) || err.status !== 400) return false;
  if (err.code === 'context_length_exceeded') return true;
  const param = err.extra?.param;
  return typeof param === 'string' && TARGET_SPECIFIC_PARAMS.has(param);
}

/** Consumes the caller's token budgets after a reply (quotas). */
function recordTokens(services: Services, outcome: Outcome, usage: Partial<IrUsage> | undefined): void {
  const tokens = (usage?.inputTokens ?? 0) + (usage?.outputTokens ?? 0);
  if (tokens > 0) services.quotas.recordTokens(outcome.auth, { provider: outcome.target.provider.id, model: outcome.target.model, tokens });
}

/** Usage of a legacy text completion (same field names as Chat Completions). */
function legacyUsage(parsed: unknown): IrResponse['usage'] {
  const u = (parsed as { usage?: { prompt_tokens?: number; completion_tokens?: number } })?.usage;
  return u ? { inputTokens: u.prompt_tokens ?? 0, outputTokens: u.completion_tokens ?? 0 } : undefined;
}

function timing(t0: number, upstreamMs: number): string {
  const total = performance.now() - t0;
  return `router;dur=${Math.max(0, total - upstreamMs).toFixed(2)}, upstream;dur=${upstreamMs.toFixed(2)}`;
}

/**
 * The proxy pipeline for chat-like endpoints: plan the targets (model or combo -> accounts, minus open
 * circuits and cooling accounts) -> for each: translate -> send -> translate back -> record. A target that
 * fails before any byte reached the client is followed by the next one; when all fail, the client gets the
 * error the spec names for the case (combo 502, all accounts unavailable, or the upstream's own error).
 */
export async function runChat(ctx: RouteContext, call: ChatCall): Promise<ChatReply> {
  const t0 = performance.now();
  const traceId = randomUUID();
  const planned: { plan?: Plan } = {};
  try {
    return await chatPipeline(ctx, call, t0, traceId, planned);
  } catch (err) {
    // Refused before any attempt was recorded (unknown model, quota, open circuits, cooling accounts, a
    // guardrail block...): the request log still gets its row, with the status the client got.
    if (err instanceof RouterError) {
      if (!call.recorded) recordRefusal(ctx, call, traceId, t0, planned.plan, err);
      // The error reply carries this request's trace id (the one of its log row and capture).
      err.headers = { ...err.headers, [HEADER.traceId]: traceId };
    }
    throw err;
  }
}

/**
 * The usage row of a request that never reached an upstream: the provider and model of its first planned
 * target (or of the `<provider>/<model>` it named), else provider `router` (the router itself answered);
 * no tokens, no cost, no upstream time.
 */
function recordRefusal(ctx: RouteContext, call: ChatCall, traceId: string, t0: number, plan: Plan | undefined, err: RouterError): void {
  const { services } = ctx;
  const named = typeof call.model === 'string' ? call.model : '';
  const split = named ? services.providers.split(named) : undefined;
  const first = plan?.targets[0];
  const target = {
    provider: { id: first?.provider.id ?? split?.def.id ?? 'router' },
    model: first?.model ?? split?.model ?? (named || '-'),
    publicModel: first?.publicModel ?? (named || '-'),
    connectionId: undefined,
  } as unknown as Target;
  const h = ctx.event.req.headers;
  recordOutcome(services, {
    traceId,
    call,
    target,
    t0,
    auth: ctx.auth,
    status: err.status,
    error: err.message,
    combo: plan?.combo?.name,
    client: { userAgent: h.get('user-agent'), forwardedFor: h.get('x-forwarded-for') },
  });
}

async function chatPipeline(ctx: RouteContext, call: ChatCall, t0: number, traceId: string, planned: { plan?: Plan }): Promise<ChatReply> {
  const { services } = ctx;
  const sessionKey = ctx.event.req.headers.get(HEADER.session) ?? undefined;
  if (typeof call.model === 'string') services.quotas.allowedModel(ctx.auth, call.model);
  const plan = planTargets(services, call.model, sessionKey);
  planned.plan = plan;
  const capture = services.capture.begin(traceId, ctx.event.req.headers, call.raw);
  if (plan.unavailable) throw plan.unavailable;
  const first = plan.targets[0]!;
  services.quotas.admit(ctx.auth, {
    provider: first.provider.id,
    model: first.model,
    relay: call.endpoint === RELAY_PATH,
    clientIp: ctx.auth.remoteAddress,
  });
  let ir: IrRequest | undefined;
  const decoded = () => (ir ??= decodeCall(call, ctx.event.req.headers));
  const deadline = t0 + services.settings.get().requestDeadlineMs;
  let last: { error: AttemptError; format: string } | undefined;
  let refused: RouterError | undefined;
  let skipped: RouterError | undefined;

  for (const [index, target] of plan.targets.entries()) {
    const left = deadline - performance.now();
    if (left <= 0) break;
    if (index > 0 && !services.resilience.breakers.peek(target.provider.id, target.model).allowed) continue;
    if (index > 0) services.quotas.checkTokens(ctx.auth, { provider: target.provider.id, model: target.model });
    const stageCtx: StageContext = {
      services,
      auth: ctx.auth,
      call,
      target,
      traceId,
      requestHeaders: ctx.event.req.headers,
      t0,
      headers: {},
      notes: {},
    };
    const stages = services.stages.active(stageCtx);
    let prepared: Prepared;
    try {
      const staged = stages.length ? await runRequestStages(stages, { ...decoded(), model: target.model }, stageCtx) : undefined;
      if (staged) {
        const early = await stageResponse(stages, staged, stageCtx);
        if (early) return stageReply(services, call, staged, early, stages, stageCtx, traceId);
      }
      prepared = prepare(call, target, decoded, staged, stages, stageCtx, capture);
    } catch (err) {
      // A target that cannot take this request (tools to a no-tool provider, stored state another format
      // cannot hold, a context it cannot fit) is skipped inside a combo; any other refusal (a guardrail
      // block, a bad request) stands for every target.
      if (plan.combo && plan.targets.length > 1 && isTargetSpecific(err)) {
        skipped = err as RouterError;
        continue;
      }
      throw err;
    }
    // The breaker gate, right before the call: takes the half-open probe slot only for a target really tried.
    const gate = services.resilience.breakers.check(target.provider.id, target.model);
    if (!gate.allowed) {
      refused ??= circuitOpenError(target.provider.id, gate.retryAfterSeconds, gate.model);
      continue;
    }
    // One shape for every outcome (all fields present), completed in place when the attempt ends: the
    // usage recorder reads the same hidden class on every request.
    const outcome: Outcome = {
      traceId,
      call,
      target,
      t0,
      auth: ctx.auth,
      status: 0,
      usage: undefined,
      finishReason: undefined,
      error: undefined,
      streamed: false,
      upstreamMs: undefined,
      combo: plan.combo?.name,
      notes: stageCtx.notes,
      client: { userAgent: ctx.event.req.headers.get('user-agent'), forwardedFor: ctx.event.req.headers.get('x-forwarded-for') },
      outputText: undefined,
    };
    const tAttempt = performance.now();
    try {
      const res = await attempt(services, call, target, prepared, outcome, Math.min(plan.combo?.targetTimeoutMs ?? Infinity, left));
      attemptSucceeded(services, plan, target, performance.now() - tAttempt, index, sessionKey);
      return res instanceof DirectStream ? res.send() : res;
    } catch (err) {
      if (err instanceof RouterError) throw err;
      const error = err instanceof AttemptError ? err : networkAttemptError(err, false);
      attemptFailed(services, target, error);
      outcome.status = error.status;
      outcome.error = error.message;
      recordOutcome(services, outcome);
      last = { error, format: prepared.format };
      if (!error.retryable) break;
    }
  }
  if (!last) throw refused ?? skipped ?? new RouterError(503, `No target of '${call.model}' could be tried.`);
  const all = allFailedError(services, plan, last.error);
  if (all) throw all;
  const failure = attemptErrorResponse(last.error, call.clientFormat, last.format, services.version);
  if (failure instanceof RouterError) throw failure;
  return failure;
}

/**
 * Whether a same-format stream's upstream will report usage at its end: Anthropic always does; Chat
 * Completions only when the client asked (`stream_options.include_usage`). Only then are text deltas
 * forwarded unparsed (otherwise their text is needed for the output estimate anyway).
 */
function usageExpected(call: ChatCall): boolean {
  if (call.clientFormat === 'anthropic') return true;
  if (call.clientFormat !== 'openai-chat') return false;
  const options = call.raw.stream_options as { include_usage?: unknown } | undefined;
  return options?.include_usage === true;
}

/**
 * Request headers for a target (credential, provider and node headers, accept), built once per target and
 * kind: targets are shared until a connection changes (ProviderDirectory), and a changed credential comes
 * as a new target. Read-only for callers.
 */
const headerCache = new WeakMap<Target, { json?: Record<string, string>; sse?: Record<string, string> }>();

function upstreamHeaders(target: Target, stream: boolean): Record<string, string> {
  let entry = headerCache.get(target);
  if (!entry) headerCache.set(target, (entry = {}));
  const kind = stream ? 'sse' : 'json';
  return (entry[kind] ??= { ...targetHeaders(target, stream ? 'text/event-stream' : 'application/json'), 'accept-encoding': 'identity' });
}

async function attempt(
  services: Services,
  call: ChatCall,
  target: Target,
  prepared: Prepared,
  outcome: Outcome,
  timeoutMs: number,
): Promise<ChatReply | DirectStream> {
  let timedOut = false;
  const tSend = performance.now();
  const headers = withRequestHeaders(upstreamHeaders(target, call.stream), prepared.headers);
  prepared.capture?.upstreamRequest(prepared.url, headers, prepared.body, Object.values(target.credential));
  const { exchange, response } = UpstreamExchange.send({ url: prepared.url, headers, body: prepared.body });
  // Per-target timeout: time to first content for streams, the whole reply otherwise.
  const timer = Number.isFinite(timeoutMs)
    ? setTimeout(() => {
        timedOut = true;
        exchange.abort();
      }, timeoutMs)
    : undefined;
  try {
    const reply = await response.catch((err) => {
      throw networkAttemptError(err, timedOut);
    });
    const upstreamHeadersMs = performance.now() - tSend;
    if (reply.statusCode >= 400) {
      // The first MiB of an error body is plenty to report it; the rest is not read.
      const text = await reply.textUpTo(1024 * 1024);
      prepared.capture?.upstreamResponse(reply.statusCode, reply.headers, text);
      // Upstreams quote a refused key in their error text; it must never reach the client whole.
      throw httpAttemptError(reply.statusCode, redactSecrets(text, Object.values(target.credential)), reply.headers);
    }
    if (call.stream) {
      return await streamReply(services, call, target, prepared, outcome, reply, upstreamHeadersMs).catch((err) => {
        throw timedOut ? networkAttemptError(err, true) : err;
      });
    }
    const text = await reply.text().catch((err) => {
      throw networkAttemptError(err, timedOut);
    });
    return await jsonReply(services, call, prepared, outcome, text, performance.now() - tSend);
  } finally {
    clearTimeout(timer);
  }
}

const BLANK_RE = /^\s*$/;

async function jsonReply(
  services: Services,
  call: ChatCall,
  prepared: Prepared,
  outcome: Outcome,
  text: string,
  upstreamMs: number,
): Promise<ChatReply> {
  let parsed: unknown;
  // An empty 200 is the non-streaming twin of an empty stream: worth the next target, not the client's fault.
  if (BLANK_RE.test(text)) throw new AttemptError('The upstream returned an empty reply.', 502, 'empty');
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AttemptError('The upstream returned a reply that is not JSON.', 502, 'invalid');
  }
  const upstreamFormat = prepared.format === 'openai-completions' ? 'openai-chat' : prepared.format;
  let response: IrResponse | undefined;
  try {
    response = prepared.format === 'openai-completions' ? undefined : getUpstreamCodec(upstreamFormat).decodeResponse(parsed);
  } catch {
    if (!prepared.native) throw new AttemptError('The upstream reply could not be read.', 502, 'invalid');
  }
  if (response && prepared.stageCtx && prepared.stages.length) {
    response = await runResponseStages(prepared.stages, response, prepared.request(), prepared.stageCtx);
    completeStages(prepared.stages, prepared.request(), response, prepared.stageCtx);
  }
  const body = prepared.native ? text : JSON.stringify(getClientCodec(call.clientFormat).encodeResponse(response!, prepared.request()));
  if (prepared.capture) {
    prepared.capture.upstreamResponse(200, undefined, text);
    prepared.capture.clientResponse(200, { 'content-type': 'application/json' }, body);
  }
  const usage = response?.usage ?? legacyUsage(parsed);
  const outputText = usage === undefined && response ? replyText(response) : undefined;
  outcome.status = 200;
  outcome.usage = usage;
  outcome.finishReason = response?.finishReason;
  outcome.upstreamMs = upstreamMs;
  outcome.outputText = outputText;
  recordOutcome(services, outcome);
  recordTokens(services, outcome, usage);
  const headers: Record<string, string> = {
    'content-type': 'application/json; charset=utf-8',
    'server-timing': timing(outcome.t0, upstreamMs),
    'x-router-version': services.version,
    'x-router-trace-id': outcome.traceId,
  };
  const stageHeaders = prepared.stageCtx?.headers;
  if (stageHeaders) for (const k in stageHeaders) headers[k] = stageHeaders[k]!;
  const sink = call.sink;
  if (sink && !sink.headersSent && !sink.destroyed) {
    // With its length known the reply goes out as one write, not chunked (header, size, body, terminator).
    headers['content-length'] = String(Buffer.byteLength(body));
    sink.writeHead(200, headers);
    sink.end(body);
    return HANDLED;
  }
  return new FastResponse(body, { status: 200, headers });
}

async function streamReply(
  services: Services,
  call: ChatCall,
  target: Target,
  prepared: Prepared,
  outcome: Outcome,
  reply: UpstreamExchange,
  upstreamHeadersMs: number,
): Promise<ChatReply | DirectStream> {
  const decodeFormat = prepared.format === 'openai-completions' ? 'openai-chat' : prepared.format;
  const encoder = prepared.native ? undefined : getClientCodec(call.clientFormat).createStreamEncoder(prepared.request());
  prepared.capture?.upstreamResponse(200, reply.headers, null);
  prepared.capture?.clientResponse(200, { 'content-type': 'text/event-stream' }, null);
  const tStream = performance.now();
  let upstreamMs = upstreamHeadersMs;
  const body = await openStream({
    reply,
    decoder: getUpstreamCodec(decodeFormat).createStreamDecoder(),
    encoder,
    clientFormat: call.clientFormat,
    transform: prepared.stageCtx && prepared.stages.length ? composeStreamTransforms(prepared.stages, prepared.request(), prepared.stageCtx) : undefined,
    // Passthrough with nobody reading the assembled reply but token estimation: text deltas after the
    // commit are forwarded unparsed.
    skipText: prepared.native && !prepared.capture && !prepared.stages.length && usageExpected(call),
    tap: prepared.capture && {
      upstream: (t: string) => prepared.capture!.append('upstream', t),
      client: (t: string) => prepared.capture!.append('client', t),
    },
    onDone: (s: StreamSummary) => {
      const outputText = s.usage.outputTokens === undefined ? replyText(s.response) : undefined;
      outcome.status = 200;
      outcome.usage = s.usage;
      outcome.finishReason = s.finishReason;
      outcome.error = s.error;
      outcome.streamed = true;
      outcome.upstreamMs = upstreamMs;
      outcome.outputText = outputText;
      recordOutcome(services, outcome);
      recordTokens(services, outcome, s.usage);
      if (prepared.stageCtx && prepared.stages.length && !s.error && !s.clientAborted) completeStages(prepared.stages, prepared.request(), s.response, prepared.stageCtx);
      // A stream that breaks after its first byte still counts against the provider's breaker.
      if (s.error && !s.clientAborted) services.resilience.breakers.recordFailure(target.provider.id, 'network');
    },
  });
  upstreamMs = upstreamHeadersMs + (performance.now() - tStream);
  const headers = {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
    'server-timing': timing(outcome.t0, upstreamMs),
    'x-router-version': services.version,
    'x-router-trace-id': outcome.traceId,
    ...prepared.stageCtx?.headers,
  };
  const sink = call.sink;
  if (sink && !sink.headersSent && !sink.destroyed) return new DirectStream(sink, headers, body);
  // srvx pipes a Node Readable body straight into the socket (typed as a web body only).
  return new FastResponse(body.readable() as unknown as ReadableStream, { status: 200, headers });
}

/**
 * A reply a stage produced without calling the upstream (e.g. a cache hit): encoded in the client's format,
 * as JSON or, for a streaming request, re-encoded as the client format's stream.
 */
function stageReply(
  services: Services,
  call: ChatCall,
  request: IrRequest,
  response: IrResponse,
  stages: RequestStage[],
  ctx: StageContext,
  traceId: string,
): Response {
  const client = getClientCodec(call.clientFormat);
  const headers: Record<string, string> = { 'x-router-version': services.version, 'x-router-trace-id': traceId, ...ctx.headers };
  completeStages(stages, request, response, ctx);
  if (!call.stream) {
    return new FastResponse(JSON.stringify(client.encodeResponse(response, request)), {
      headers: { ...headers, 'content-type': 'application/json; charset=utf-8' },
    });
  }
  const encoder = client.createStreamEncoder(request);
  let text = '';
  for (const ev of responseToEvents(response)) text += formatSseBatch(encoder.write(ev));
  text += formatSseBatch(encoder.end());
  return new FastResponse(text, { headers: { ...headers, 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' } });
}
