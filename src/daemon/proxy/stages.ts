import type { AuthInfo } from '../auth/pipeline.js';
import type { PipelineDeps } from './deps.js';
import type { IrRequest, IrResponse, IrStreamEvent } from '../translate/ir.js';
import type { ChatCall } from './chat.js';
import type { Target } from '../providers/target.js';

/** What a stage knows about the request it is looking at. */
export interface StageContext {
  services: PipelineDeps;
  auth: AuthInfo;
  call: ChatCall;
  /** The target this attempt goes to (stages run again for a failover target). */
  target: Target;
  traceId: string;
  /** The client's request headers (read-only). */
  requestHeaders: Headers;
  /** performance.now() when the request arrived. */
  t0: number;
  /** Extra response headers a stage wants the client to see (e.g. `x-router-cache: hit`). */
  headers: Record<string, string>;
  /** Facts stages leave for later stages and for usage (e.g. `compressed: true`, `cacheHit: true`). */
  notes: Record<string, unknown>;
  /** Edits to the upstream HTTP request itself (request hooks), applied after encoding; absent when none. */
  upstream?: UpstreamEdits;
}

/** Changes to the encoded upstream request: headers (null removes one), top-level body fields dropped or set. */
export interface UpstreamEdits {
  headers: Record<string, string | null>;
  drop: string[];
  set: Record<string, unknown>;
}

/** Applies a stage's upstream edits to an encoded body (in place) and returns the headers to add and remove. */
export function applyUpstreamEdits(
  body: Record<string, unknown>,
  headers: Record<string, string> | undefined,
  edits: UpstreamEdits | undefined,
): { headers: Record<string, string> | undefined; remove: string[] | undefined } {
  if (!edits) return { headers, remove: undefined };
  for (const f of edits.drop) delete body[f];
  for (const f in edits.set) body[f] = edits.set[f];
  let out = headers;
  let remove: string[] | undefined;
  for (const name in edits.headers) {
    const value = edits.headers[name];
    if (value === null) {
      (remove ??= []).push(name);
      if (out && name in out) {
        out = { ...out };
        delete out[name];
      }
    } else out = { ...out, [name]: value! };
  }
  return { headers: out, remove };
}

/**
 * A per-reply transformer of stream events (e.g. redaction that must see text split across chunks). A
 * transformer that holds events back must release them when it sees `block_stop` or `finish`, before
 * passing that event on: encoders accept no content after a reply's closing event.
 */
export interface StreamTransform {
  push(event: IrStreamEvent): IrStreamEvent[];
  /** Called when the upstream stream ends (also without a `finish`); returns whatever is still held. */
  end(): IrStreamEvent[];
}

/**
 * A request-shaping stage (guardrails, memory injection, compression, response cache...). A request that
 * any stage wants goes through the IR even when client and upstream speak the same format, so every stage
 * sees one representation. Each hook is optional.
 */
export interface RequestStage {
  name: string;
  /** Cheap check: whether this stage must see this request. */
  wants(ctx: StageContext): boolean;
  /** Before the upstream call: rewrite the request, or throw a RouterError to block it. */
  onRequest?(request: IrRequest, ctx: StageContext): IrRequest | void | Promise<IrRequest | void>;
  /** Answer without calling the upstream (e.g. a cache hit); the first stage that answers wins. */
  respond?(request: IrRequest, ctx: StageContext): IrResponse | undefined | Promise<IrResponse | undefined>;
  /** After a whole (non-streamed) reply: rewrite it, or throw to block it. */
  onResponse?(response: IrResponse, request: IrRequest, ctx: StageContext): IrResponse | void | Promise<IrResponse | void>;
  /** For streamed replies: a transformer of this reply's events. */
  streamTransform?(request: IrRequest, ctx: StageContext): StreamTransform | undefined;
  /** After the reply completed (streamed replies get the assembled response). Never awaited by the client. */
  onComplete?(request: IrRequest, response: IrResponse, ctx: StageContext): void;
}

/** The stages of this daemon, in the order they run. Registered once at start. */
export class StageRegistry {
  private stages: RequestStage[] = [];

  /** Adds a stage; `order` sorts ascending (guardrails early, cache late), ties keep registration order. */
  register(stage: RequestStage, order = 100): void {
    const entry = Object.assign(stage, { order }) as RequestStage & { order: number };
    this.stages = [...this.stages, entry].sort((a, b) => (a as typeof entry).order - (b as typeof entry).order);
  }

  /** The stages that want this request; empty on the fast path. */
  active(ctx: StageContext): RequestStage[] {
    if (this.stages.length === 0) return this.stages;
    return this.stages.filter((s) => s.wants(ctx));
  }
}

/** Runs the request hooks in order. */
export async function runRequestStages(stages: RequestStage[], request: IrRequest, ctx: StageContext): Promise<IrRequest> {
  let ir = request;
  for (const s of stages) if (s.onRequest) ir = (await s.onRequest(ir, ctx)) ?? ir;
  return ir;
}

/** Asks the stages for a reply that needs no upstream call. */
export async function stageResponse(stages: RequestStage[], request: IrRequest, ctx: StageContext): Promise<IrResponse | undefined> {
  for (const s of stages) {
    const res = s.respond ? await s.respond(request, ctx) : undefined;
    if (res) return res;
  }
  return undefined;
}

/** Runs the whole-reply hooks in order. */
export async function runResponseStages(stages: RequestStage[], response: IrResponse, request: IrRequest, ctx: StageContext): Promise<IrResponse> {
  let res = response;
  for (const s of stages) if (s.onResponse) res = (await s.onResponse(res, request, ctx)) ?? res;
  return res;
}

/** Chains the stages' stream transformers into one; undefined when none applies. */
export function composeStreamTransforms(stages: RequestStage[], request: IrRequest, ctx: StageContext): StreamTransform | undefined {
  const parts = stages.map((s) => s.streamTransform?.(request, ctx)).filter((t): t is StreamTransform => t !== undefined);
  if (parts.length === 0) return undefined;
  const through = (events: IrStreamEvent[], i: number): IrStreamEvent[] =>
    i === parts.length ? events : through(events.flatMap((e) => parts[i]!.push(e)), i + 1);
  return {
    push: (event) => through([event], 0),
    end: () => {
      let out: IrStreamEvent[] = [];
      for (let i = 0; i < parts.length; i++) out = [...out.flatMap((e) => parts[i]!.push(e)), ...parts[i]!.end()];
      return out;
    },
  };
}

/** Tells every stage the reply completed; errors are logged, never thrown at the client. */
export function completeStages(stages: RequestStage[], request: IrRequest, response: IrResponse, ctx: StageContext): void {
  for (const s of stages) {
    if (!s.onComplete) continue;
    try {
      s.onComplete(request, response, ctx);
    } catch (err) {
      ctx.services.log.warn('stage onComplete failed', { stage: s.name, error: (err as Error).message });
    }
  }
}

/** The IR events of a whole reply, so a stage's reply (e.g. a cache hit) can be streamed to the client. */
export function responseToEvents(res: IrResponse): IrStreamEvent[] {
  const events: IrStreamEvent[] = [{ type: 'start', id: res.id, model: res.model, created: res.created, usage: res.usage ? { inputTokens: res.usage.inputTokens } : undefined }];
  res.parts.forEach((part, index) => {
    if (part.type === 'text') events.push({ type: 'text_delta', index, text: part.text });
    else if (part.type === 'refusal') events.push({ type: 'refusal_delta', index, text: part.text });
    else if (part.type === 'thinking') {
      events.push({ type: 'thinking_delta', index, text: part.text });
      if (part.signature) events.push({ type: 'thinking_signature', index, signature: part.signature, ...(part.issuer ? { issuer: part.issuer } : {}) });
    } else if (part.type === 'redacted_thinking') events.push({ type: 'redacted_thinking', index, data: part.data });
    else if (part.type === 'tool_call') {
      events.push({ type: 'tool_call_start', index, id: part.id, name: part.name });
      events.push({ type: 'tool_call_delta', index, argumentsDelta: part.arguments });
    } else return;
    events.push({ type: 'block_stop', index });
  });
  events.push({ type: 'finish', finishReason: res.finishReason, stopSequence: res.stopSequence, usage: res.usage });
  return events;
}
