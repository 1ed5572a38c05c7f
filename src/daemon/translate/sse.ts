import { createParser } from 'eventsource-parser';
import type { SseMessage } from './ir.js';

/**
 * Serializes one SSE message. Multi-line data becomes several `data:` lines, as the SSE grammar requires,
 * so a payload containing a newline can never break the framing.
 */
export function formatSse(message: SseMessage): string {
  let out = '';
  if (message.event) out += `event: ${message.event}\n`;
  if (message.id) out += `id: ${message.id}\n`;
  const data = message.data;
  if (data.indexOf('\n') === -1 && data.indexOf('\r') === -1) return `${out}data: ${data}\n\n`;
  for (const line of data.split(/\r\n|\r|\n/)) out += `data: ${line}\n`;
  return `${out}\n`;
}

/** Serializes a batch of messages into one string (one write to the socket). */
export function formatSseBatch(messages: SseMessage[]): string {
  let out = '';
  for (const m of messages) out += formatSse(m);
  return out;
}

/** Default bound on one SSE line or event read from an upstream (characters): see SseReader. */
export const SSE_MAX_EVENT_CHARS = 16 * 1024 * 1024;

/** An upstream SSE line or event grew past the reader's bound (a stream without line breaks, say). */
export class SseTooLargeError extends Error {
  constructor(readonly limit: number) {
    super(`An upstream stream event exceeds ${limit} bytes.`);
    this.name = 'SseTooLargeError';
  }
}

/**
 * Incremental SSE reader over raw bytes: handles UTF-8 sequences split across chunks, CRLF/CR/LF line
 * endings, multi-line `data:` fields and comment lines (keep-alives), via eventsource-parser.
 *
 * Bounded: the line not yet ended plus the event not yet dispatched may hold at most `maxChars` characters
 * (eventsource-parser's `maxBufferSize`, checked after every chunk). Past it `push` throws SseTooLargeError
 * and the reader is spent: a stream with no line breaks can no longer grow the daemon's memory without end.
 */
export class SseReader {
  private readonly decoder = new TextDecoder('utf-8');
  private readonly parser;
  private pending: SseMessage[] = [];
  private overflow?: SseTooLargeError;

  constructor(readonly maxChars: number = SSE_MAX_EVENT_CHARS) {
    this.parser = createParser({
      onEvent: (ev) => {
        const msg: SseMessage = { data: ev.data };
        if (ev.event) msg.event = ev.event;
        if (ev.id) msg.id = ev.id;
        this.pending.push(msg);
      },
      onError: (err) => {
        if (err.type === 'max-buffer-size-exceeded') this.overflow = new SseTooLargeError(maxChars);
      },
      maxBufferSize: maxChars,
    });
  }

  /** Feeds a chunk of bytes (or text) and returns the messages it completed. Throws SseTooLargeError past the bound. */
  push(chunk: Uint8Array | string): SseMessage[] {
    if (this.overflow) throw this.overflow;
    const text = typeof chunk === 'string' ? chunk : this.decoder.decode(chunk, { stream: true });
    if (text) this.parser.feed(text);
    if (this.overflow) throw this.overflow;
    return this.take();
  }

  /** Flushes the decoder at end of stream; a trailing message without its blank line is still delivered. */
  end(): SseMessage[] {
    if (this.overflow) throw this.overflow;
    const rest = this.decoder.decode();
    if (rest) this.parser.feed(rest);
    this.parser.feed('\n\n');
    if (this.overflow) throw this.overflow;
    return this.take();
  }

  private take(): SseMessage[] {
    const out = this.pending;
    this.pending = [];
    return out;
  }
}
