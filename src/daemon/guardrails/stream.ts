import type { StreamTransform } from '../proxy/stages.js';
import type { IrStreamEvent } from '../translate/ir.js';
import { guardrailBlocked } from './errors.js';
import { firstBlock, redactSpans, type GuardrailPolicy } from './policy.js';
import type { Finding } from './types.js';

/** A run of non-whitespace longer than this is released even unfinished (a secret this long is not one). */
const RUN_CAP = 4096;
/** A PEM block is held from its BEGIN line until its END line, up to this many characters. */
const PEM_CAP = 16384;
/** Released text kept as left context, so look-behind boundaries see what came before the held part. */
const CONTEXT = 64;

type TextEvent = 'text_delta' | 'refusal_delta' | 'tool_call_delta';

interface Held {
  type: TextEvent;
  /** Text not yet released. */
  pending: string;
  /** The last released (original) characters. */
  context: string;
  /** Characters of this block released so far. */
  released: number;
}

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9 || c === 12 || c === 11 || c === 0xa0;

/**
 * Where held text can be cut: before the last `window` characters (the longest match with whitespace),
 * before the trailing run of non-whitespace (a token still arriving), and before an unclosed PEM block.
 */
export function safeEnd(pending: string, window: number): number {
  let safe = pending.length - window;
  let i = pending.length;
  const floor = Math.max(0, pending.length - RUN_CAP);
  while (i > floor && !isSpace(pending.charCodeAt(i - 1))) i--;
  safe = Math.min(safe, i);
  const begin = pending.lastIndexOf('-----BEGIN');
  if (begin >= 0 && !pending.includes('-----END', begin) && pending.length - begin < PEM_CAP) safe = Math.min(safe, begin);
  return Math.max(0, safe);
}

function deltaOf(type: TextEvent, index: number, text: string): IrStreamEvent {
  return type === 'tool_call_delta' ? { type, index, argumentsDelta: text } : { type, index, text };
}

/**
 * Redacts (or blocks) a streamed reply. Text of each block is held back only as far as a match could
 * still be growing (see `safeEnd`), scanned with a little released context, and released redacted; the
 * rest goes out at the block's `block_stop`, at `finish`, or when the stream ends. A block before any
 * content reached the client throws the 400; after that, the reply ends with an error event.
 */
export class GuardrailStream implements StreamTransform {
  private readonly held = new Map<number, Held>();
  private readonly findings: Finding[] = [];
  private emitted = false;
  private dead = false;
  private reported = false;

  constructor(
    private readonly policy: GuardrailPolicy,
    private readonly report: (findings: Finding[]) => void,
  ) {}

  push(ev: IrStreamEvent): IrStreamEvent[] {
    if (this.dead) return [];
    switch (ev.type) {
      case 'text_delta':
      case 'refusal_delta':
        return this.hold(ev.type, ev.index, ev.text);
      case 'tool_call_delta':
        return this.hold(ev.type, ev.index, ev.argumentsDelta);
      case 'block_stop': {
        const out = this.release(ev.index, true);
        this.held.delete(ev.index);
        return this.dead ? out : this.pass([...out, ev]);
      }
      case 'finish':
      case 'error': {
        const out = this.flushAll();
        if (this.dead) return out;
        this.done();
        return this.pass([...out, ev]);
      }
      default:
        return this.pass([ev]);
    }
  }

  end(): IrStreamEvent[] {
    if (this.dead) return [];
    const out = this.flushAll();
    this.done();
    return out;
  }

  private hold(type: TextEvent, index: number, text: string): IrStreamEvent[] {
    let h = this.held.get(index);
    if (!h) this.held.set(index, (h = { type, pending: '', context: '', released: 0 }));
    h.pending += text;
    return this.release(index, false);
  }

  private flushAll(): IrStreamEvent[] {
    const out: IrStreamEvent[] = [];
    for (const index of [...this.held.keys()].sort((a, b) => a - b)) {
      out.push(...this.release(index, true));
      if (this.dead) return out;
    }
    return out;
  }

  /** Releases what is safe of one block (everything when `final`), redacted. */
  private release(index: number, final: boolean): IrStreamEvent[] {
    const h = this.held.get(index);
    if (!h || h.pending === '') return [];
    const offset = h.context.length;
    const found = this.policy
      .scan(h.context + h.pending, 'assistant', 'response')
      .filter((f) => f.start >= offset)
      .map((f) => ({ ...f, start: f.start - offset, end: f.end - offset }));
    let safe = final ? h.pending.length : safeEnd(h.pending, this.policy.responseWindow);
    // Never cut through a match: it may still grow, and a half-redacted secret is a leaked one.
    for (let moved = true; moved && !final; ) {
      moved = false;
      for (const f of found) {
        if (f.start < safe && f.end > safe) {
          safe = f.start;
          moved = true;
        }
      }
    }
    if (safe === 0) return [];
    const released = found.filter((f) => f.end <= safe);
    const text = h.pending.slice(0, safe);
    h.context = (h.context + text).slice(-CONTEXT);
    h.pending = h.pending.slice(safe);
    for (const f of released) this.findings.push({ ...f, start: f.start + h.released, end: f.end + h.released });
    h.released += safe;
    const block = firstBlock(released);
    if (block) return this.block(block);
    const out = released.length ? redactSpans(text, released) : text;
    return this.pass([deltaOf(h.type, index, out)]);
  }

  private block(f: Finding): IrStreamEvent[] {
    this.dead = true;
    this.done();
    const error = guardrailBlocked(f, 'response');
    // Nothing reached the client yet: the whole reply becomes the standard 400.
    if (!this.emitted) throw error;
    return [{ type: 'error', status: 400, message: error.message, errorType: error.type, code: error.code }];
  }

  /** Notes whether content went out (after which a block can only end the stream). */
  private pass(events: IrStreamEvent[]): IrStreamEvent[] {
    if (!this.emitted) {
      this.emitted = events.some(
        (e) =>
          ((e.type === 'text_delta' || e.type === 'refusal_delta' || e.type === 'thinking_delta') && e.text.length > 0) ||
          (e.type === 'tool_call_delta' && e.argumentsDelta.length > 0) ||
          e.type === 'tool_call_start' ||
          e.type === 'redacted_thinking',
      );
    }
    return events;
  }

  private done(): void {
    if (this.reported) return;
    this.reported = true;
    this.report(this.findings);
  }
}
