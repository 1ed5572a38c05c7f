import type { ServerResponse } from 'node:http';
import { freshTarget } from '../oauth/fresh.js';
import type { Target } from '../providers/target.js';
import { attemptFailed, attemptSucceeded } from '../resilience/attempts.js';
import type { PipelineDeps } from './deps.js';
import type { StreamDecoder, StreamEncoder, UpstreamWireFormat } from '../translate/codec.js';
import type { IrRequest, IrResponse, IrStreamEvent, WireFormat } from '../translate/ir.js';
import { getUpstreamCodec } from '../translate/registry.js';
import { Attempt, type AttemptRequest, type OpenReply } from './attempt.js';
import type { Outcome } from './outcome.js';
import type { Plan } from './plan.js';
import type { Reply } from './reply.js';
import type { StreamTransform } from './stages.js';
import { openStream, type BlockPosition, type StreamBody, type StreamSummary } from './stream.js';
import { AttemptError, networkAttemptError } from './upstream-error.js';

/**
 * Recovery mid-stream, `continue` (a combo's midStreamRecovery): a stream cut or stalled after it started
 * goes on with the next target of the plan, in the same client stream. The continuation request is the
 * original one with the partial answer as the assistant's last turn: a prefill where the upstream format
 * continues an assistant turn (Anthropic), else followed by an explicit user message asking to continue.
 * Its events pass through {@link spliceDecoder} into the client stream's own encoder, so the client sees
 * one reply: one start, the text going on in the same block, one finish.
 */

/** Upstream formats that continue a trailing assistant message (prefill). */
const PREFILL: ReadonlySet<UpstreamWireFormat> = new Set(['anthropic']);

/** What a continuation asks when the format has no prefill. */
export const CONTINUE_PROMPT =
  'Your previous answer was cut off. Continue it exactly where it stopped: do not repeat anything, do not add any preamble, start with the very next characters.';

/** The original request with the answer so far as the assistant's turn (see {@link PREFILL}). */
export function continuationRequest(request: IrRequest, prefix: string, format: UpstreamWireFormat): { ir: IrRequest; trimmed: boolean } {
  if (prefix === '') return { ir: { ...request }, trimmed: false };
  if (PREFILL.has(format)) {
    // Anthropic refuses a prefill that ends in whitespace; the continuation's leading whitespace is dropped.
    const text = prefix.trimEnd();
    return { ir: { ...request, messages: [...request.messages, { role: 'assistant', parts: [{ type: 'text', text }] }] }, trimmed: text.length < prefix.length };
  }
  return {
    ir: {
      ...request,
      messages: [...request.messages, { role: 'assistant', parts: [{ type: 'text', text: prefix }] }, { role: 'user', parts: [{ type: 'text', text: CONTINUE_PROMPT }] }],
    },
    trimmed: false,
  };
}

/** The reply's text so far (what the continuation takes up). */
export function answerText(response: IrResponse): string {
  let text = '';
  for (const p of response.parts) if (p?.type === 'text') text += p.text;
  return text;
}

/**
 * A continuation's events as the client stream goes on: its start is dropped (the stream started once;
 * start usage is kept as a usage event), its reasoning too (the client already saw the first target's),
 * its first text block continues the last text block sent, and its other blocks take the next free indexes.
 */
export function spliceDecoder(inner: StreamDecoder, at: BlockPosition & { trimLead: boolean }): StreamDecoder {
  const indexes = new Map<number, number>();
  let next = at.nextIndex;
  let text = false;
  let trimLead = at.trimLead;
  const place = (index: number, asText: boolean): number => {
    let mapped = indexes.get(index);
    if (mapped === undefined) {
      mapped = asText && !text && at.textIndex >= 0 ? at.textIndex : next++;
      if (asText) text = true;
      indexes.set(index, mapped);
    }
    return mapped;
  };
  const adapt = (events: IrStreamEvent[]): IrStreamEvent[] => {
    const out: IrStreamEvent[] = [];
    for (const ev of events) {
      switch (ev.type) {
        case 'start':
          if (ev.usage) out.push({ type: 'usage', usage: ev.usage });
          break;
        case 'thinking_delta':
        case 'thinking_signature':
        case 'redacted_thinking':
          break;
        case 'text_delta': {
          let t = ev.text;
          if (trimLead) {
            t = t.trimStart();
            if (t === '') break;
            trimLead = false;
          }
          out.push({ ...ev, text: t, index: place(ev.index, true) });
          break;
        }
        case 'refusal_delta':
        case 'tool_call_start':
        case 'tool_call_delta':
          out.push({ ...ev, index: place(ev.index, false) });
          break;
        case 'block_stop':
          // Closing a reasoning block that was dropped: nothing to close.
          if (indexes.has(ev.index)) out.push({ ...ev, index: indexes.get(ev.index)! });
          break;
        default:
          out.push(ev);
      }
    }
    return out;
  };
  return {
    push: (m) => adapt(inner.push(m)),
    end: () => adapt(inner.end()),
  };
}

/** What a continuation needs of the stream it continues. */
export interface ContinueContext {
  services: PipelineDeps;
  plan: Pick<Plan, 'combo' | 'targets'>;
  /** The targets after the one that broke, in plan order. */
  rest: readonly Target[];
  /** The request as the first target got it (decoded, stages applied). */
  request: IrRequest;
  clientFormat: WireFormat;
  encoder: StreamEncoder;
  transform?: StreamTransform;
  sink?: ServerResponse;
  firstByteMs: number;
  stallMs: number;
  maxEventBytes: number;
  /** The upstream format and the streamed request (URL, body, its own headers) of the continuation for a target. */
  prepare(target: Target, ir: (format: UpstreamWireFormat) => IrRequest): { format: UpstreamWireFormat; request: AttemptRequest };
  /** A fresh outcome (usage row) for an attempt at `target`. */
  outcome(target: Target): Outcome;
  /** The request's reply side: records a failed continuation attempt. */
  reply: Reply;
  /** Records a served continuation when its stream ends. */
  onDone(outcome: Outcome, summary: StreamSummary): void;
}

/**
 * Continues a broken stream: tries the remaining targets in order until one commits a continuation of
 * `prefix` (the answer the client has so far), and returns its stream; undefined when none could.
 */
export async function continueStream(ctx: ContinueContext, prefix: string, at: BlockPosition, from: string): Promise<StreamBody | undefined> {
  const { services } = ctx;
  const breakers = services.resilience.breakers;
  for (let i = 0; i < ctx.rest.length; i++) {
    const candidate = ctx.rest[i]!;
    if (!breakers.peek(candidate.provider.id, candidate.model).allowed) continue;
    const target = await freshTarget(services, candidate);
    let trimmed = false;
    let req: ReturnType<ContinueContext['prepare']>;
    try {
      req = ctx.prepare(target, (format) => {
        const c = continuationRequest({ ...ctx.request, model: target.model }, prefix, format);
        trimmed = c.trimmed;
        return c.ir;
      });
    } catch {
      continue;
    }
    if (!breakers.check(target.provider.id, target.model).allowed) continue;
    const outcome = ctx.outcome(target);
    outcome.notes = { ...outcome.notes, continuation: { of: from, prefixChars: prefix.length } };
    const t0 = performance.now();
    // Its first byte is its first content: the first-byte limit holds until the continuation commits.
    const attempt = new Attempt(target, { firstByteMs: ctx.firstByteMs, totalMs: ctx.firstByteMs }, ctx.sink);
    let open: OpenReply | undefined;
    try {
      open = await attempt.open(req.request);
      const body = await openStream({
        reply: open.exchange,
        decoder: spliceDecoder(getUpstreamCodec(req.format).createStreamDecoder(), { ...at, trimLead: trimmed }),
        encoder: ctx.encoder,
        transform: ctx.transform,
        clientFormat: ctx.clientFormat,
        maxEventBytes: ctx.maxEventBytes,
        watch: {
          stallMs: ctx.stallMs,
          // Broken again: the next target takes up everything the client has by then.
          recover: (partial, reason, next) =>
            continueStream({ ...ctx, rest: ctx.rest.slice(i + 1) }, prefix + answerText(partial), next, `${services.providers.label(target.provider.id)}/${target.model}: ${reason}`),
        },
        onDone: (s) => ctx.onDone(outcome, s),
      });
      attemptSucceeded(services, ctx.plan, target, performance.now() - t0, 1);
      return body;
    } catch (thrown) {
      const cause = open?.guard.cause() ?? thrown;
      const error = cause instanceof AttemptError ? cause : networkAttemptError(cause, false, req.request.url);
      if (error.kind !== 'client_gone') attemptFailed(services, target, error);
      ctx.reply.failed(outcome, error);
      if (error.kind === 'client_gone') return undefined;
    } finally {
      open?.guard.dispose();
    }
  }
  return undefined;
}
