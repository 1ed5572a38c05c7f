import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientCodec, EncodeOptions, UpstreamCodec } from '../../src/daemon/translate/codec.js';
import type { IrRequest, IrStreamEvent, SseMessage } from '../../src/daemon/translate/ir.js';
import { formatSseBatch, SseReader } from '../../src/daemon/translate/sse.js';

/** Helpers shared by the golden runner and the SDK acceptance tests. */

export const FIXTURES = join(import.meta.dirname, '..', 'fixtures', 'translate');

export interface CaseInfo {
  description: string;
  stream: boolean;
  skipClients?: string[];
  skipUpstreams?: string[];
}

/** Every case folder, sorted. */
export function listCases(): string[] {
  return readdirSync(FIXTURES, { withFileTypes: true })
    .filter((d) => d.isDirectory())
    .map((d) => d.name)
    .sort();
}

export function readCase(name: string): CaseInfo {
  return JSON.parse(readFileSync(join(FIXTURES, name, 'case.json'), 'utf8')) as CaseInfo;
}

/** The first of `names` that exists in the case folder (most specific first), or undefined. */
export function pick(caseName: string, names: string[]): string | undefined {
  return names.map((n) => join(FIXTURES, caseName, n)).find((p) => existsSync(p));
}

export function readJson(path: string): unknown {
  return JSON.parse(readFileSync(path, 'utf8'));
}

/** Deterministic ids (`<prefix>golden<n>`, counting per encoder run) and the fixed clock 1700000000. */
export function deterministicOptions(): EncodeOptions {
  let n = 0;
  return { newId: (prefix) => `${prefix}golden${++n}`, now: () => 1_700_000_000 };
}

/** Splits text into byte chunks of `size`, cutting through multi-byte UTF-8 sequences on purpose. */
export function byteChunks(text: string, size: number): Uint8Array[] {
  const bytes = new TextEncoder().encode(text);
  const out: Uint8Array[] = [];
  for (let i = 0; i < bytes.length; i += size) out.push(bytes.subarray(i, i + size));
  return out;
}

export interface StreamRun {
  events: IrStreamEvent[];
  messages: SseMessage[];
  text: string;
}

/** Runs raw upstream SSE through SseReader -> upstream decoder -> client encoder, chunk by chunk. */
export function runStream(chunks: Array<Uint8Array | string>, upstream: UpstreamCodec, client: ClientCodec, request: IrRequest, options: EncodeOptions): StreamRun {
  const reader = new SseReader();
  const decoder = upstream.createStreamDecoder();
  const encoder = client.createStreamEncoder(request, options);
  const events: IrStreamEvent[] = [];
  const messages: SseMessage[] = [];
  const feed = (batch: SseMessage[]) => {
    for (const m of batch) for (const ev of decoder.push(m)) events.push(ev), messages.push(...encoder.write(ev));
  };
  for (const chunk of chunks) feed(reader.push(chunk));
  feed(reader.end());
  for (const ev of decoder.end()) events.push(ev), messages.push(...encoder.write(ev));
  messages.push(...encoder.end());
  return { events, messages, text: formatSseBatch(messages) };
}

/** Parses SSE text into `{event, data}` with JSON data parsed, so goldens compare by value, not by spacing. */
export function parseSseText(text: string): Array<{ event?: string; data: unknown }> {
  const reader = new SseReader();
  const messages = [...reader.push(text), ...reader.end()];
  return messages.map((m) => {
    let data: unknown = m.data;
    try {
      data = JSON.parse(m.data);
    } catch {
      // `[DONE]` and other non-JSON payloads compare as text
    }
    return m.event ? { event: m.event, data } : { data };
  });
}

/**
 * Checks the IR stream rules of ir.ts: `start` first (unless the stream failed), a terminal `finish` or
 * `error` last, block indices opened in order 0, 1, 2..., nothing written to a block after its `block_stop`,
 * and no other block opened while a non-tool block is open.
 */
export function checkIrStream(events: IrStreamEvent[]): string[] {
  const problems: string[] = [];
  const last = events[events.length - 1];
  if (!last || (last.type !== 'finish' && last.type !== 'error')) problems.push('stream does not end with finish or error');
  if (events[0]?.type !== 'start' && events[0]?.type !== 'error') problems.push('stream does not begin with start');
  const opened = new Set<number>();
  const closed = new Set<number>();
  let openPlain: number | undefined;
  for (const ev of events) {
    if (!('index' in ev)) continue;
    if (closed.has(ev.index)) problems.push(`${ev.type} on closed block ${ev.index}`);
    if (ev.type === 'block_stop') {
      closed.add(ev.index);
      if (openPlain === ev.index) openPlain = undefined;
      continue;
    }
    if (!opened.has(ev.index)) {
      if (ev.index !== opened.size) problems.push(`block ${ev.index} opened out of order`);
      if (openPlain !== undefined) problems.push(`block ${ev.index} opened while block ${openPlain} is open`);
      opened.add(ev.index);
      if (!ev.type.startsWith('tool_call')) openPlain = ev.index;
    }
  }
  return problems;
}
