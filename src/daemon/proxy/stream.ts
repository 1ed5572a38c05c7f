import type { ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { StreamDecoder, StreamEncoder } from '../translate/codec.js';
import type { IrError, IrFinishReason, IrPart, IrResponse, IrStreamEvent, IrUsage, SseMessage, WireFormat } from '../translate/ir.js';
import { getClientCodec, getUpstreamCodec } from '../translate/registry.js';
import type { UpstreamWireFormat } from '../translate/codec.js';
import type { StreamTransform } from './stages.js';
import { SSE_MAX_EVENT_CHARS, SseReader, SseTooLargeError, formatSseBatch } from '../translate/sse.js';
import { AttemptError } from './upstream-error.js';
import { MAX_REPLY_BYTES, type UpstreamReply } from '../net/upstream.js';

/** An upstream SSE message whose data is not JSON (or `[DONE]`): a broken upstream or a proxy's error page. */
class MalformedStreamError extends AttemptError {
  constructor(readonly before: string) {
    super('The upstream sent a malformed stream event.', 502, 'invalid');
  }
}

/**
 * A stream that started and then broke without an error of its own (watched under a combo's
 * midStreamRecovery): an error event after the commit (the decoders report a stream that ended before its
 * finish as one), or nothing for the stall timeout. `before` is
 * what was decoded from its last bytes, still to be sent ahead of the error (translated streams).
 */
class StreamCutError extends AttemptError {
  constructor(
    message: string,
    readonly before = '',
  ) {
    super(message, 502, 'network');
  }
}

/** A stream past one of its bounds (an event, what is held back before the commit, the whole stream). */
class StreamTooLargeError extends AttemptError {
  constructor(message: string) {
    super(message, 502, 'invalid');
  }
}

function mib(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MiB` : `${bytes} bytes`;
}

function isSpace(code: number): boolean {
  return code === 32 || code === 9 || code === 10 || code === 13;
}

/**
 * Whether a message's data cannot be an event of any upstream format: every format sends a JSON object per
 * event (Gemini may send an array; Chat Completions ends with `[DONE]`). Empty data passes (keep-alives).
 * Checked by its first and last characters only, so a message is never parsed twice; a line cut short or an
 * HTML page is caught, a well-bracketed JSON syntax error is left to the decoder.
 */
export function malformed(message: SseMessage): boolean {
  const d = message.data;
  let start = 0;
  let end = d.length - 1;
  while (start <= end && isSpace(d.charCodeAt(start))) start++;
  while (end >= start && isSpace(d.charCodeAt(end))) end--;
  if (start > end) return false;
  const first = d.charCodeAt(start);
  const last = d.charCodeAt(end);
  if (first === 123 /* { */) return last !== 125; /* } */
  if (first === 91 /* [ */) return last !== 93; /* ] */
  return true;
}

/** Where a reply's blocks stand in the client stream: its last text block, and the next free index. */
export interface BlockPosition {
  textIndex: number;
  nextIndex: number;
}

/** What a finished stream reports for usage and logs. */
export interface StreamSummary {
  usage: Partial<IrUsage>;
  finishReason?: IrFinishReason;
  /** Set when the stream failed after bytes reached the client, or the client went away. */
  error?: string;
  clientAborted?: boolean;
  /** The reply assembled from the events (for stages that look at whole replies after the fact). */
  response: IrResponse;
}

/** Builds a whole reply out of stream events as they pass. */
function assemble(response: IrResponse, ev: IrStreamEvent): void {
  const parts = response.parts as IrPart[];
  switch (ev.type) {
    case 'start':
      response.id = ev.id;
      response.model = ev.model;
      return;
    case 'text_delta':
    case 'refusal_delta':
    case 'thinking_delta': {
      const type = ev.type === 'text_delta' ? 'text' : ev.type === 'refusal_delta' ? 'refusal' : 'thinking';
      const part = parts[ev.index] as { text: string } | undefined;
      if (part) part.text += ev.text;
      else parts[ev.index] = { type, text: ev.text } as IrPart;
      return;
    }
    case 'thinking_signature': {
      const part = parts[ev.index];
      if (part?.type === 'thinking') {
        part.signature = ev.signature;
        if (ev.issuer) part.issuer = ev.issuer;
      }
      return;
    }
    case 'redacted_thinking':
      parts[ev.index] = { type: 'redacted_thinking', data: ev.data };
      return;
    case 'tool_call_start':
      parts[ev.index] = { type: 'tool_call', id: ev.id, name: ev.name, arguments: '' };
      return;
    case 'tool_call_delta': {
      const part = parts[ev.index];
      if (part?.type === 'tool_call') part.arguments += ev.argumentsDelta;
      return;
    }
    case 'finish':
      response.finishReason = ev.finishReason;
      if (ev.stopSequence) response.stopSequence = ev.stopSequence;
      return;
    default:
  }
}

export interface StreamPlan {
  reply: UpstreamReply;
  decoder: StreamDecoder;
  /** Translating encoder; absent on same-format passthrough, where upstream bytes are forwarded as they come. */
  encoder?: StreamEncoder;
  clientFormat: WireFormat;
  /** Traffic-inspector tap: sees the upstream's text and what the client is sent (only when capturing). */
  tap?: { upstream(text: string): void; client(text: string): void };
  /** Stage transforms between decoder and encoder (translated mode only). */
  transform?: StreamTransform;
  /**
   * Same-format stream whose assembled reply nobody reads but token estimation (no encoder, no stage, no
   * tap) and whose upstream is expected to report usage: after the commit, messages the decoder calls
   * skippable are forwarded without being parsed. They are kept (at most SKIP_KEEP_CHARS of them per
   * stream; past that, messages are parsed as usual) so that their text can still be read at the end
   * (decoder.skippedText) if the usage does not come after all.
   */
  skipText?: boolean;
  /**
   * Most characters of one SSE line or event (setting maxUpstreamEventBytes), also the most a stream may
   * hold back before its commit. Default SSE_MAX_EVENT_CHARS. The whole stream is capped at MAX_REPLY_BYTES.
   */
  maxEventBytes?: number;
  /**
   * Called once the reply committed, before anything of it is released or recorded (a hedged request's
   * claim: throws when another attempt was first, and the stream is released unrecorded).
   */
  claim?: () => void;
  /**
   * A combo's midStreamRecovery (off when absent: nothing is watched). After the commit, an error event (an
   * upstream end before the finish is one), or no chunk for `stallMs`, is a failure like a cut; with `recover`,
   * a failure is continued: it gets the reply so far and returns the continuation, whose bytes follow in the
   * same client stream (or undefined: the stream ends with the error event).
   */
  watch?: { stallMs: number; recover?: (partial: IrResponse, reason: string, at: BlockPosition) => Promise<StreamBody | undefined> };
  onDone: (summary: StreamSummary) => void;
}

const utf8 = new TextEncoder();

/** Whether bytes end with a blank line (the end of an SSE message). */
function endsMessage(bytes: Uint8Array): boolean {
  const n = bytes.length;
  return n >= 2 && bytes[n - 1] === 10 && (bytes[n - 2] === 10 || (n >= 4 && bytes[n - 2] === 13 && bytes[n - 3] === 10));
}

/** Most SSE data one stream keeps unparsed for a late text read (bounds the memory of many open streams). */
const SKIP_KEEP_CHARS = 16 * 1024;

/** A committed stream, ready for the client: written straight to a Node response, or read as a Readable. */
export interface StreamBody {
  /** Writes every chunk to `res` (with backpressure) and ends it; a closed `res` cancels the upstream. */
  writeTo(res: ServerResponse): Promise<void>;
  readable(): Readable;
  /** The next bytes for the client, or null at the end (a continuation's bytes, read by the stream it continues). */
  pull(): Promise<Uint8Array | null>;
  /** Releases the upstream (the client went away). */
  cancel(): void;
}


function isContent(ev: IrStreamEvent): boolean {
  switch (ev.type) {
    case 'text_delta':
    case 'thinking_delta':
    case 'refusal_delta':
      return ev.text.length > 0;
    case 'redacted_thinking':
    case 'tool_call_start':
      return true;
    default:
      return false;
  }
}

/** The next chunk, or a stall error (the upstream released) when none comes within `ms`. */
async function readWithin(reply: UpstreamReply, ms: number): Promise<Uint8Array | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const stalled = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new StreamCutError(`The upstream stream stalled: nothing for ${ms} ms (setting streamStallTimeoutMs).`));
      reply.abort();
    }, ms);
  });
  try {
    return await Promise.race([reply.read(), stalled]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Turns an upstream SSE reply into the client's stream. Output is held back until the reply shows real
 * content (or a legitimate ending such as max_tokens truncation); an empty or content-filtered stream, or
 * an error event before that point, throws an AttemptError so the caller can fail over before any byte
 * reached the client. After that, chunks are pumped on demand (backpressure) and a client disconnect
 * aborts the upstream request.
 */
export async function openStream(plan: StreamPlan): Promise<StreamBody> {
  const { reply, decoder, encoder } = plan;
  const maxEvent = plan.maxEventBytes ?? SSE_MAX_EVENT_CHARS;
  const reader = new SseReader(maxEvent);
  /** Upstream bytes read so far, and output held back before the commit (both bounded). */
  let total = 0;
  let held = 0;
  const summary: StreamSummary = { usage: {}, response: { id: '', model: '', parts: [], finishReason: 'stop' } };
  const transform = encoder ? plan.transform : undefined;
  const pending: Uint8Array[] = [];
  const skipping =
    plan.skipText && !encoder && !plan.tap && typeof decoder.skippable === 'function' && typeof decoder.skippedText === 'function' ? decoder : undefined;
  /** Messages forwarded unparsed after the commit (only text deltas; see StreamPlan.skipText). */
  const skipped: SseMessage[] = [];
  let skippedChars = 0;
  let committed = false;
  let filtered = false;
  let finished = false;

  /** Runs IR events through accounting and the encoder; returns the encoded text (translated mode). */
  const handle = (decodedEvents: IrStreamEvent[], last = false): string => {
    let events = transform ? decodedEvents.flatMap((e) => transform.push(e)) : decodedEvents;
    if (last && transform) events = events.concat(transform.end());
    let out = '';
    for (const ev of events) {
      assemble(summary.response, ev);
      if (ev.type === 'start' && ev.usage) Object.assign(summary.usage, ev.usage);
      else if (ev.type === 'usage') Object.assign(summary.usage, ev.usage);
      else if (ev.type === 'finish') {
        summary.finishReason = ev.finishReason;
        if (ev.usage) Object.assign(summary.usage, ev.usage);
        if (ev.finishReason === 'content_filter') filtered = true;
        else if (!committed) committed = true;
      } else if (ev.type === 'error' && !committed) {
        throw new AttemptError(ev.message, ev.status >= 400 ? ev.status : 502, 'http');
      } else if (ev.type === 'error') {
        // Watched (a combo's midStreamRecovery): an error after the commit, the decoders' "ended before the
        // finish" included, is a break like a cut connection (the client's error event, or a continuation).
        if (plan.watch) throw new StreamCutError(ev.message, encoder ? out : '');
        summary.error = ev.message;
      }
      if (!committed && isContent(ev)) committed = true;
      if (encoder) out += formatSseBatch(encoder.write(ev));
    }
    return out;
  };

  /** The reader's messages; its bound is an attempt error (failover before the commit, the client's error event after). */
  const bounded = (read: () => SseMessage[]): SseMessage[] => {
    try {
      return read();
    } catch (err) {
      if (!(err instanceof SseTooLargeError)) throw err;
      throw new StreamTooLargeError(`The upstream sent a stream line or event over ${mib(maxEvent)} (setting maxUpstreamEventBytes).`);
    }
  };

  const tapDecoder = plan.tap ? new TextDecoder() : undefined;
  const consume = (chunk: Uint8Array): Uint8Array | undefined => {
    let events: IrStreamEvent[] = [];
    total += chunk.length;
    if (total > MAX_REPLY_BYTES) throw new StreamTooLargeError(`The upstream stream exceeds ${mib(MAX_REPLY_BYTES)}, the most one reply may have.`);
    const messages = bounded(() => reader.push(chunk));
    let bad = -1;
    for (let i = 0; i < messages.length; i++) {
      const msg = messages[i]!;
      if (malformed(msg)) {
        bad = i;
        break;
      }
      if (committed && skippedChars < SKIP_KEEP_CHARS && skipping?.skippable?.(msg)) {
        skipped.push(msg);
        skippedChars += msg.data.length;
      } else events = events.concat(decoder.push(msg));
    }
    const text = handle(events);
    if (plan.tap) {
      const raw = tapDecoder!.decode(chunk, { stream: true });
      plan.tap.upstream(raw);
      plan.tap.client(encoder ? text : raw);
    }
    // What came before the bad line still goes out (re-serialized when passing through), then the error.
    if (bad >= 0) throw new MalformedStreamError(encoder ? text : formatSseBatch(messages.slice(0, bad)));
    if (!encoder) return chunk;
    return text ? utf8.encode(text) : undefined;
  };

  const finish = (): Uint8Array | undefined => {
    let events: IrStreamEvent[] = [];
    for (const msg of bounded(() => reader.end())) events = events.concat(decoder.push(msg));
    events = events.concat(decoder.end());
    let text = handle(events, true);
    if (encoder) text += formatSseBatch(encoder.end());
    // The encoder's closing events (Anthropic message_delta/message_stop, Responses response.completed...).
    if (plan.tap && encoder && text) plan.tap.client(text);
    return encoder && text ? utf8.encode(text) : undefined;
  };

  /** The text of skipped messages, decoded only when the upstream reported no output count to use. */
  const recoverSkipped = () => {
    if (skipped.length === 0 || summary.usage.outputTokens !== undefined) return;
    let text = '';
    for (const msg of skipped) text += decoder.skippedText!(msg);
    if (text) (summary.response.parts as IrPart[]).push({ type: 'text', text });
  };

  const done = () => {
    if (finished) return;
    finished = true;
    recoverSkipped();
    summary.response.parts = summary.response.parts.filter(Boolean);
    if (summary.usage.inputTokens !== undefined || summary.usage.outputTokens !== undefined) {
      summary.response.usage = { inputTokens: 0, outputTokens: 0, ...summary.usage };
    }
    plan.onDone(summary);
  };

  // Pre-read until the reply commits, so failover stays possible. Any failure here (an upstream error
  // event, a stage transform that blocks) releases the upstream request before it propagates.
  try {
    await preRead();
  } catch (err) {
    reply.abort();
    throw err;
  }

  async function preRead(): Promise<void> {
  while (!committed) {
    const chunk = await reply.read();
    if (chunk === undefined) {
      const tail = finish();
      if (tail) pending.push(tail);
      if (!committed) {
        reply.abort();
        if (filtered) throw new AttemptError('The upstream reply was empty: blocked by its content filter.', 502, 'content_filter');
        throw new AttemptError('The upstream returned an empty stream.', 502, 'empty');
      }
      plan.claim?.();
      done();
      return;
    }
    const out = consume(chunk);
    if (out) {
      held += out.length;
      if (held > maxEvent && !committed) throw new StreamTooLargeError(`The upstream stream sent over ${mib(maxEvent)} before any content (setting maxUpstreamEventBytes).`);
      pending.push(out);
    }
  }
  plan.claim?.();
  }

  /**
   * The next bytes for the client, or null at the end. Reads upstream chunks until one produces output
   * (a chunk that encodes to nothing, e.g. only usage, is followed by the next read, never a stall). A
   * failure after the commit becomes the client format's error event, then the end.
   */
  let ended = false;
  /** Whether the bytes passed through so far end at an SSE message boundary (passthrough mode). */
  let atBoundary = true;
  /** The stream that continues this one after a failure (midStreamRecovery `continue`). */
  let continuation: StreamBody | undefined;
  const watch = plan.watch;
  const read = watch ? () => readWithin(reply, watch.stallMs) : () => reply.read();
  async function next(): Promise<Uint8Array | null> {
    if (continuation) return continuation.pull();
    if (pending.length) {
      const out = pending.shift()!;
      if (!encoder) atBoundary = endsMessage(out);
      return out;
    }
    if (finished || ended) return null;
    try {
      for (;;) {
        const chunk = await read();
        if (chunk === undefined) {
          const tail = finish();
          done();
          if (tail) return tail;
          return null;
        }
        const encoded = consume(chunk);
        if (encoded) {
          if (!encoder) atBoundary = endsMessage(encoded);
          return encoded;
        }
      }
    } catch (err) {
      ended = true;
      if (reply.aborted && !(err instanceof StreamCutError)) return null;
      // A malformed line ends the stream here: the upstream is released, nothing after it is relayed.
      const before = err instanceof MalformedStreamError || err instanceof StreamCutError ? err.before : '';
      reply.abort();
      const message = err instanceof AttemptError ? err.message : 'The upstream connection failed mid-stream.';
      summary.error = message;
      // Block indexes as the client stream numbers them (before done() compacts the parts).
      const parts = summary.response.parts;
      const at: BlockPosition = { textIndex: -1, nextIndex: parts.length };
      parts.forEach((p, i) => {
        if (p?.type === 'text') at.textIndex = i;
      });
      done();
      // Continued on the next target: what was decoded before the break goes first, then its bytes.
      if (watch?.recover && encoder && !parts.some((p) => p?.type === 'tool_call')) {
        continuation = await watch.recover(summary.response, message, at).catch(() => undefined);
        if (continuation) return before ? utf8.encode(before) : continuation.pull();
      }
      // The client's format ends the stream, through the encoder when router encodes it (its state numbers
      // and closes the reply), else with the codec's error events placed after what the upstream sent.
      const error: IrError = { type: 'error', status: 502, message };
      const tail = encoder
        ? [...encoder.write(error), ...encoder.end()]
        : getClientCodec(plan.clientFormat).encodeStreamError(error, { id: summary.response.id, model: summary.response.model, ...decoder.position?.() });
      // Passed-through bytes that stopped inside a message (an over-long line): the error starts a new one.
      const cut = !encoder && !atBoundary && !(err instanceof MalformedStreamError) ? '\n\n' : '';
      return utf8.encode(cut + before + formatSseBatch(tail));
    }
  }

  /** The client went away (or its socket failed) before the end: release the upstream. */
  function cancel(): void {
    continuation?.cancel();
    if (finished) return;
    summary.clientAborted = true;
    reply.abort();
    done();
  }

  return {
    pull: next,
    cancel,
    async writeTo(res: ServerResponse): Promise<void> {
      const onClose = () => {
        if (!res.writableFinished) cancel();
      };
      res.on('close', onClose);
      try {
        for (let out = await next(); out !== null; out = await next()) {
          if (res.destroyed) return cancel();
          if (!res.write(out)) {
            await new Promise<void>((resolve) => {
              const go = () => {
                res.off('drain', go);
                res.off('close', go);
                resolve();
              };
              res.on('drain', go);
              res.on('close', go);
            });
          }
        }
        if (!res.destroyed) res.end();
      } finally {
        res.off('close', onClose);
      }
    },
    readable(): Readable {
      let reading = false;
      return new Readable({
        highWaterMark: 64 * 1024,
        read() {
          if (reading) return;
          reading = true;
          void next().then((out) => {
            reading = false;
            this.push(out);
          });
        },
        destroy(err, cb) {
          cancel();
          cb(err);
        },
      });
    },
  };
}

/**
 * Reads a whole upstream stream into one reply, for a non-streaming client of a provider that answers
 * streams only (ProviderDef.streamOnly: the ChatGPT Codex backend). The pre-read rules of openStream hold
 * (an error event, an empty or content-filtered stream before any content is an AttemptError the executor
 * fails over on); a stream that breaks after its first content is a failed attempt too, since the client
 * has not seen a byte of it.
 */
export async function collectStream(reply: UpstreamReply, format: UpstreamWireFormat, clientFormat: WireFormat, maxEventBytes?: number): Promise<IrResponse> {
  let summary: StreamSummary | undefined;
  const body = await openStream({
    reply,
    maxEventBytes,
    decoder: getUpstreamCodec(format).createStreamDecoder(),
    clientFormat,
    onDone: (s) => {
      summary = s;
    },
  });
  for await (const _ of body.readable()) {
    // drained: the reply is assembled by the stream's accounting
  }
  if (!summary || summary.error) throw new AttemptError(summary?.error ?? 'The upstream stream ended before the reply was complete.', 502, 'network');
  return summary.response;
}
