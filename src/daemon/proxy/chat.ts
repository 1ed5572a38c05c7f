import { replyText } from '../translate/util/reply-text.js';
import type { ServerResponse } from 'node:http';
import type { HANDLED } from '../http/app.js';
import { badRequest } from '../http/errors.js';
import type { RouteContext } from '../http/routes.js';
import type { PipelineDeps } from './deps.js';
import { getClientCodec, getUpstreamCodec } from '../translate/registry.js';
import { assertResponsesStatePortable } from '../translate/formats/openai-responses/passthrough.js';
import type { StreamEncoder, UpstreamWireFormat } from '../translate/codec.js';
import type { IrRequest, IrResponse, WireFormat } from '../translate/ir.js';
import { collectStream, openStream, type BlockPosition, type StreamSummary } from './stream.js';
import { answerText, continueStream, type ContinueContext } from './recovery.js';
import { chatUrl, encodeOptionsFor, type Target } from '../providers/target.js';
import { AttemptError, networkAttemptError } from './upstream-error.js';
import { socketRoute, type SocketCall } from './socket-route.js';
import type { AttemptLimits } from './attempt-guard.js';
import { Attempt, type AttemptRequest, type OpenReply } from './attempt.js';
import { nativeBody, nativeHeaders } from './passthrough.js';
import { execute } from './execute.js';
import { DirectStream, Reply } from './reply.js';
import { estimateTokens } from './count-tokens.js';
import { requestEnvelope } from './envelope.js';
import type { Outcome, ProxyCall } from './outcome.js';
import {
  applyUpstreamEdits,
  completeStages,
  composeStreamTransforms,
  responseToEvents,
  runRequestStages,
  runResponseStages,
  stageResponse,
  type RequestStage,
  type StageContext,
  type StreamTransform,
} from './stages.js';
import { formatSseBatch } from '../translate/sse.js';
import type { TraceRecorder } from '../inspect/capture.js';
import { holdsWrappedSignature } from '../translate/util/signature.js';

/** The relay variant of Chat Completions (per-minute limits per key and per client IP). */
export const RELAY_PATH = '/api/v1/relay/chat/completions';

/** A chat-like call as it arrived: the client's format, its parsed body, and the model it named. */
export interface ChatCall extends ProxyCall, SocketCall {
  /**
   * The client's Node response, when the reply may be written to it directly (the proxy routes). Skips
   * the web Response and srvx's copy of it: the reply is written once, straight into the socket.
   */
  sink?: ServerResponse;
}

export type ChatReply = Response | typeof HANDLED;

/**
 * What the chat pipeline reads of its caller: a route's context, or another transport's equivalent (the
 * Responses WebSocket serves each `response.create` through here with the headers of its upgrade request).
 */
export type ChatContext = { services: PipelineDeps; auth: RouteContext['auth'] } & { event: { req: { headers: Headers } } };

/** Which wire format to speak to a target: the client's own when the provider serves it natively. */
export function upstreamFormatFor(target: Target, clientFormat: WireFormat): UpstreamWireFormat {
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
  format: UpstreamWireFormat;
  /** Headers this request needs beyond the target's own (the client's Anthropic beta flags). */
  headers?: Record<string, string>;
  /** Target headers a request hook removes (never credentials: the hook schema refuses those). */
  removeHeaders?: string[];
  /** The decoded client request (decoded lazily, once per call); the staged one when stages ran. */
  request: () => IrRequest;
  /** Stages that see this request (empty on the fast path). */
  stages: RequestStage[];
  stageCtx?: StageContext;
  /** Traffic-inspector capture of this request (only when the captureTraffic setting is on). */
  capture?: TraceRecorder;
  /** The IR request encoded for the upstream (translated requests): its `dropped` notes. */
  ir?: IrRequest;
  /**
   * A non-streaming client request sent streaming, because the provider answers streams only
   * (ProviderDef.streamOnly): the stream is reassembled into the client's JSON reply.
   */
  forcedStream: boolean;
}

/**
 * Captures the upstream's reply (status, headers, body: null for a stream, tapped as it comes) and adds this
 * attempt to the translator history (only called while capture is on): both formats, the capture's bodies,
 * and what the upstream did not get (the codecs' notes; on passthrough, the client fields removed for this
 * provider).
 */
function noteTranslation(
  services: PipelineDeps,
  call: ChatCall,
  target: Target,
  prepared: Prepared,
  status: number,
  headers: Record<string, string | string[] | undefined> | undefined,
  body: string | null,
): void {
  prepared.capture!.upstreamResponse(status, headers, body);
  let dropped = prepared.ir?.dropped ?? [];
  if (prepared.native) {
    const sent = JSON.parse(prepared.body) as Record<string, unknown>;
    dropped = Object.keys(call.raw).filter((k) => !(k in sent));
  }
  services.translatorHistory.record(prepared.capture!, {
    endpoint: call.endpoint,
    clientFormat: call.clientFormat,
    upstreamFormat: prepared.format,
    passthrough: prepared.native,
    provider: services.providers.label(target.provider.id),
    model: target.model,
    stream: call.stream,
    status,
    dropped: [...dropped],
  });
}

/**
 * Legacy completions asking for several completions (`n`, `best_of` > 1) can only be forwarded as sent:
 * translated to Chat Completions, or rewritten by request stages, router carries one completion. A 400 names
 * the model and why; inside a combo the target is skipped (the param is target-specific), so a target that
 * forwards the request natively may still serve it.
 */
function refuseChoices(raw: Record<string, unknown>, target: Target, hasCompletions: boolean): void {
  for (const field of ['n', 'best_of'] as const) {
    const value = raw[field];
    if (typeof value !== 'number' || value <= 1) continue;
    const why = hasCompletions
      ? 'request stages (guardrails, cache, compression) are on for it and handle one completion'
      : `provider '${target.provider.name ?? target.provider.id}' has no /completions endpoint, so router sends it as Chat Completions`;
    throw badRequest(`'${field}' > 1 cannot be served for '${target.publicModel}': ${why}. Send ${field}: 1, or use a model whose provider serves /completions.`, field);
  }
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
  /** Translated even between identical formats (a stream a combo may continue on another target). */
  forceIr = false,
): Prepared {
  const format = upstreamFormatFor(target, call.clientFormat);
  const forcedStream = !call.stream && target.provider.streamOnly === true;
  const streamUp = call.stream || forcedStream;
  if (target.provider.supportsTools === false && hasTools(call.raw)) {
    throw badRequest(`Provider '${target.provider.id}' does not support tools; remove the tools array.`, 'tools');
  }
  // A replayed signature of another family (wrapped by router) must not reach this upstream: through IR then.
  if (format === call.clientFormat && !staged && !forceIr && !holdsWrappedSignature(call.clientFormat, call.raw)) {
    const url = chatUrl(target, format, streamUp);
    const body = nativeBody(format, call.raw, target);
    target.provider.adaptBody?.(body);
    const headers = withProviderHeaders(target, stageCtx.requestHeaders, body, nativeHeaders(format, stageCtx.requestHeaders));
    return { url, body: JSON.stringify(body), native: true, format, headers, request: decoded, stages, stageCtx, capture, forcedStream };
  }
  if (call.clientFormat === 'openai-completions') refuseChoices(call.raw, target, format === 'openai-completions');
  const upstream = getUpstreamCodec(format);
  const ir = staged ?? { ...decoded(), model: target.model };
  // Stored-state fields (previous_response_id...) cannot be honoured by another format: refuse, never drop.
  assertResponsesStatePortable(ir, format);
  const encoded = upstream.encodeRequest(ir, encodeOptionsFor(target)) as Record<string, unknown>;
  // Request hooks' edits of the upstream request itself (headers, top-level fields); none on most requests.
  target.provider.adaptBody?.(encoded);
  const edits = applyUpstreamEdits(encoded, upstream.requestHeaders?.(ir), stageCtx.upstream);
  return {
    url: chatUrl(target, format, streamUp),
    body: JSON.stringify(encoded),
    native: false,
    format,
    headers: withProviderHeaders(target, stageCtx.requestHeaders, encoded, edits.headers),
    removeHeaders: edits.remove,
    request: staged ? () => staged : decoded,
    stages,
    stageCtx,
    capture,
    ir,
    forcedStream,
  };
}

/** A request's own headers plus those its provider derives per request (ProviderDef.requestHeaders). */
function withProviderHeaders(
  target: Target,
  client: Headers,
  body: Record<string, unknown>,
  headers: Record<string, string> | undefined,
): Record<string, string> | undefined {
  const own = target.provider.requestHeaders?.(client, body);
  return own ? { ...own, ...headers } : headers;
}

/**
 * The proxy pipeline for chat-like endpoints, run by the executor (plan, admit, attempt, fail over,
 * record): for each target, the chat policy runs the request stages, translates (or passes through),
 * sends one {@link Attempt}, and translates the reply back; one {@link Reply} stamps the headers, writes
 * JSON or SSE and records every outcome.
 */
export async function runChat(ctx: ChatContext, call: ChatCall): Promise<ChatReply> {
  const env = requestEnvelope(ctx, call, { conversation: true, relay: call.endpoint === RELAY_PATH });
  const { traceId, t0 } = env;
  const { services } = ctx;
  const h = ctx.event.req.headers;
  const capture = services.capture.begin(traceId, h, call.raw);
  const reply = new Reply(env, call.sink);
  const turn: Turn = { services, call, reply };
  let ir: IrRequest | undefined;
  const decoded = () => (ir ??= decodeCall(call, h));
  // A stream its combo continues on another target mid-way is translated (its encoder carries on).
  const continued = call.stream && services.combos.byName(call.model)?.midStreamRecovery === 'continue';
  const res = await execute<Prepared, ChatReply | DirectStream>(env, {
    reply,
    async prepare(target, outcome) {
      const notes: Record<string, unknown> = call.transport ? { transport: call.transport } : {};
      const stageCtx: StageContext = { services, auth: ctx.auth, call, target, traceId, requestHeaders: h, t0, headers: {}, notes };
      outcome.notes = stageCtx.notes;
      const stages = services.stages.active(stageCtx);
      const staged = stages.length ? await runRequestStages(stages, { ...decoded(), model: target.model }, stageCtx) : undefined;
      if (staged) {
        const early = await stageResponse(stages, staged, stageCtx);
        if (early) return { early: stageReply(reply, outcome, staged, early, stages, stageCtx) };
      }
      return prepare(call, target, decoded, staged, stages, stageCtx, capture, continued);
    },
    attempt: (target, prepared, outcome, limits) => attempt(turn, new Attempt(target, limits, call.sink), prepared, outcome, limits),
    inputTokens: () => estimateTokens(decoded()),
    hedges: true,
    fail(last, prepared) {
      const failure = reply.fail(last, prepared.format, call.clientFormat);
      // The upstream's own error, relayed in its shape: the capture shows it as the client's reply too.
      prepared.capture?.clientResponse(failure.status, failure.headers, last.raw?.body ?? null);
      return failure;
    },
  });
  return res instanceof DirectStream ? res.send() : res;
}

const JSON_TYPE = 'application/json; charset=utf-8';
const SSE_TYPE = 'text/event-stream; charset=utf-8';

/** What every step of one chat request shares. */
interface Turn {
  services: PipelineDeps;
  call: ChatCall;
  reply: Reply;
}

async function attempt(turn: Turn, attempt: Attempt, prepared: Prepared, outcome: Outcome, limits: AttemptLimits): Promise<ChatReply | DirectStream> {
  const { services, call } = turn;
  const { target } = attempt;
  // W3C trace context to the upstream only when tracing is on and its propagation setting allows it.
  const traceparent = services.tracing?.traceparent(outcome.traceId);
  const streamUp = call.stream || prepared.forcedStream;
  const request: AttemptRequest = {
    url: prepared.url,
    body: prepared.body,
    accept: streamUp ? 'text/event-stream' : 'application/json',
    headers: traceparent ? { ...prepared.headers, traceparent } : prepared.headers,
    removeHeaders: prepared.removeHeaders,
    // A stream's first byte is its first content (openStream's commit), not its headers.
    firstByteAtCommit: call.stream,
    onReply: (status, headers, errorText) => {
      // The account's remaining quota, as its rate-limit headers say (a few lookups when there are none).
      if (target.connectionId !== undefined) services.resilience.limits.observe(target.connectionId, headers);
      if (errorText !== undefined && prepared.capture) noteTranslation(services, call, target, prepared, status, headers, errorText);
    },
  };
  const headers = attempt.headersFor(request);
  if (prepared.capture) {
    prepared.capture.upstreamRequest(prepared.url, headers, prepared.body, Object.values(target.credential));
    if (prepared.stages.length) prepared.capture.detail.notes = prepared.stageCtx?.notes;
  }
  // The provider's Responses WebSocket where it has one and the setting allows it (socket-route.ts), else HTTP.
  const overSocket = socketRoute(services, call, target, prepared.format, streamUp, prepared.native, headers, prepared.body);
  if (overSocket && outcome.notes) outcome.notes.upstreamTransport = 'websocket';
  const open = await attempt.open(request, headers, overSocket?.socket.send(overSocket.body));
  const upstream = open.exchange;
  try {
    if (call.stream) {
      return await streamReply(turn, prepared, outcome, open, limits).catch((err) => {
        throw open.guard.cause() ?? err;
      });
    }
    let text: string | IrResponse;
    if (prepared.forcedStream) {
      if (prepared.capture) noteTranslation(services, call, target, prepared, upstream.statusCode, upstream.headers, null);
      text = await collectStream(upstream, prepared.format, call.clientFormat, services.settings.get().maxUpstreamEventBytes).catch((err) => {
        throw open.guard.cause() ?? err;
      });
    } else {
      text = await upstream.text().catch((err) => {
        throw open.guard.cause() ?? networkAttemptError(err, false, prepared.url);
      });
    }
    // A hedged request: the first whole reply is served, the other attempt cancelled (hedge.ts).
    limits.race?.claim();
    return await jsonReply(turn, prepared, outcome, text, performance.now() - open.tSend);
  } finally {
    open.guard.dispose();
  }
}

const BLANK_RE = /^\s*$/;

/** The reply of a non-streaming upstream call: its body's text, decoded here, or a stream already reassembled. */
function decodeJson(prepared: Prepared, text: string): IrResponse | undefined {
  let parsed: unknown;
  // An empty 200 is the non-streaming twin of an empty stream: worth the next target, not the client's fault.
  if (BLANK_RE.test(text)) throw new AttemptError('The upstream returned an empty reply.', 502, 'empty');
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new AttemptError('The upstream returned a reply that is not JSON.', 502, 'invalid');
  }
  try {
    return getUpstreamCodec(prepared.format).decodeResponse(parsed);
  } catch {
    if (!prepared.native) throw new AttemptError('The upstream reply could not be read.', 502, 'invalid');
    return undefined;
  }
}

async function jsonReply(turn: Turn, prepared: Prepared, outcome: Outcome, upstream: string | IrResponse, upstreamMs: number): Promise<ChatReply> {
  const { services, call, reply } = turn;
  const text = typeof upstream === 'string' ? upstream : undefined;
  let response = text === undefined ? (upstream as IrResponse) : decodeJson(prepared, text);
  if (response && prepared.stageCtx && prepared.stages.length) {
    response = await runResponseStages(prepared.stages, response, prepared.request(), prepared.stageCtx);
    completeStages(prepared.stages, prepared.request(), response, prepared.stageCtx);
  }
  // A reassembled stream is always encoded by the client's codec (there is no upstream JSON to pass on).
  const body = prepared.native && text !== undefined ? text : JSON.stringify(getClientCodec(call.clientFormat).encodeResponse(response!, prepared.request()));
  // The entry points at the capture's client side, filled just below with the headers the client got.
  if (prepared.capture && text !== undefined) noteTranslation(services, call, outcome.target, prepared, 200, undefined, text);
  const usage = response?.usage;
  noteReply(services, outcome, response);
  reply.record(outcome, { upstreamMs, usage, finishReason: response?.finishReason, outputText: usage === undefined && response ? replyText(response, 'generated') : undefined });
  const headers = reply.headers(outcome, JSON_TYPE, upstreamMs, undefined, prepared.stageCtx?.headers);
  // The capture shows the headers the client got (Server-Timing included: the dashboard's timing view).
  prepared.capture?.clientResponse(200, headers, body);
  return reply.write(body, headers);
}

/**
 * What a served reply says of itself: the model that answered (the usage row's served-model check) and,
 * for a Responses client under a combo's cache affinity, its id, so the turn naming it as
 * `previous_response_id` is the same conversation (routing/conversation.ts).
 */
function noteReply(services: PipelineDeps, outcome: Outcome, response: IrResponse | undefined): void {
  outcome.servedModel = response?.model;
  // Only an upstream `resp_` id reaches the client as is (a translated reply gets router's own id).
  if (!response?.id.startsWith('resp_') || outcome.call.clientFormat !== 'openai-responses' || outcome.combo === undefined) return;
  const combo = services.combos.byName(outcome.combo);
  if (!combo || combo.affinity === 'off') return;
  const { target } = outcome;
  const started = outcome.session === undefined;
  outcome.session = services.resilience.conversations.noteResponse(combo.id, response.id, outcome.session, target);
  if (started && target.connectionId !== undefined) services.resilience.accounts.bindSession(target.provider.id, outcome.session, target.connectionId);
}

async function streamReply(turn: Turn, prepared: Prepared, outcome: Outcome, open: OpenReply, limits: AttemptLimits): Promise<DirectStream | Response> {
  const { services, call, reply } = turn;
  const encoder = prepared.native ? undefined : getClientCodec(call.clientFormat).createStreamEncoder(prepared.request());
  const upstream = open.exchange;
  if (prepared.capture) {
    noteTranslation(services, call, outcome.target, prepared, 200, upstream.headers, null);
    prepared.capture.clientResponse(200, { 'content-type': 'text/event-stream' }, null);
  }
  // Until the commit: the time to the reply's headers (a stream that ends in its pre-read is recorded with it).
  let upstreamMs = performance.now() - open.tSend;
  const staged = prepared.stageCtx && prepared.stages.length ? prepared.stageCtx : undefined;
  const transform = staged && composeStreamTransforms(prepared.stages, prepared.request(), staged);
  const settings = services.settings.get();
  const body = await openStream({
    reply: upstream,
    maxEventBytes: settings.maxUpstreamEventBytes,
    decoder: getUpstreamCodec(prepared.format).createStreamDecoder(),
    encoder,
    clientFormat: call.clientFormat,
    transform,
    // Passthrough with nobody reading the assembled reply but token estimation: text deltas after the
    // commit are forwarded unparsed.
    skipText: prepared.native && !prepared.capture && !staged && getClientCodec(call.clientFormat).usageReported(call.raw),
    claim: limits.race && (() => limits.race!.claim()),
    tap: prepared.capture && {
      upstream: (t: string) => prepared.capture!.append('upstream', t),
      client: (t: string) => prepared.capture!.append('client', t),
    },
    watch: limits.recovery && {
      stallMs: settings.streamStallTimeoutMs,
      recover: limits.recovery.mode === 'continue' && encoder ? continuation(turn, prepared, outcome, limits, encoder, transform) : undefined,
    },
    onDone: (s: StreamSummary) => {
      streamDone(turn, outcome, s, upstreamMs);
      if (staged && !s.error && !s.clientAborted) completeStages(prepared.stages, prepared.request(), s.response, staged);
    },
  });
  // Time until the stream committed (its first content).
  upstreamMs = performance.now() - open.tSend;
  const headers = reply.headers(outcome, SSE_TYPE, upstreamMs, 'relay', prepared.stageCtx?.headers);
  prepared.capture?.clientResponse(200, headers, null);
  return reply.stream(body, headers);
}

/** Records a served stream when it ends (a break after its first byte counts against the provider). */
function streamDone(turn: Turn, outcome: Outcome, s: StreamSummary, upstreamMs?: number): void {
  noteReply(turn.services, outcome, s.response);
  const outputText = s.usage.outputTokens === undefined ? replyText(s.response, 'generated') : undefined;
  turn.reply.ended(outcome, { upstreamMs, usage: s.usage, finishReason: s.finishReason, error: s.error, clientAborted: s.clientAborted, outputText });
}

/** A combo's `continue` recovery for this stream: the next targets take up the answer so far (recovery.ts). */
function continuation(turn: Turn, prepared: Prepared, outcome: Outcome, limits: AttemptLimits, encoder: StreamEncoder, transform: StreamTransform | undefined) {
  const { services, call, reply } = turn;
  const { recovery } = limits;
  const settings = services.settings.get();
  const ctx: ContinueContext = {
    services,
    plan: recovery!.plan,
    rest: recovery!.rest,
    request: prepared.request(),
    clientFormat: call.clientFormat,
    encoder,
    transform,
    sink: call.sink,
    firstByteMs: limits.firstByteMs,
    stallMs: settings.streamStallTimeoutMs,
    maxEventBytes: settings.maxUpstreamEventBytes,
    reply,
    prepare(t, irFor) {
      const ir = irFor(upstreamFormatFor(t, call.clientFormat));
      const p = prepare(call, t, () => ir, ir, [], { ...prepared.stageCtx!, target: t }, undefined, true);
      const request: AttemptRequest = { url: p.url, body: p.body, accept: 'text/event-stream', headers: p.headers, removeHeaders: p.removeHeaders, firstByteAtCommit: true };
      return { format: p.format, request };
    },
    outcome: (t) => ({ ...outcome, target: t, status: 0, usage: undefined, finishReason: undefined, error: undefined, streamed: false, upstreamMs: undefined, notes: undefined, outputText: undefined, costUsd: undefined, servedModel: undefined }),
    onDone: (o, s) => streamDone(turn, o, s),
  };
  const from = `${services.providers.label(outcome.target.provider.id)}/${outcome.target.model}`;
  return (partial: IrResponse, reason: string, at: BlockPosition) => continueStream(ctx, answerText(partial), at, `${from}: ${reason}`);
}

/**
 * A reply a stage produced without calling the upstream (a cache hit): recorded as such, and encoded in the
 * client's format, as JSON or, for a streaming request, re-encoded as the client format's stream.
 */
function stageReply(reply: Reply, outcome: Outcome, request: IrRequest, response: IrResponse, stages: RequestStage[], ctx: StageContext): Response | typeof HANDLED {
  const { call } = ctx;
  const client = getClientCodec(call.clientFormat);
  completeStages(stages, request, response, ctx);
  reply.cached(outcome, response);
  if (!call.stream) return reply.write(JSON.stringify(client.encodeResponse(response, request)), reply.headers(undefined, JSON_TYPE, 0, undefined, ctx.headers));
  const encoder = client.createStreamEncoder(request);
  let text = '';
  for (const ev of responseToEvents(response)) text += formatSseBatch(encoder.write(ev));
  text += formatSseBatch(encoder.end());
  return reply.write(text, reply.headers(undefined, SSE_TYPE, 0, 'sse', ctx.headers));
}
