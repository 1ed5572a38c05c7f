import type { EncodeOptions, StreamEncoder } from '../../codec.js';
import type { IrRequest, IrStreamEvent, IrUsage, SseMessage } from '../../ir.js';
import { idFactory } from '../../util/ids.js';
import { signatureForClient } from '../../util/signature.js';
import { replyStopReason } from './encode-response.js';
import { encodeAnthropicStreamError } from './errors.js';
import { encodeAnthropicUsage } from './usage.js';

type Ev<T extends IrStreamEvent['type']> = Extract<IrStreamEvent, { type: T }>;

function sse(event: string, data: Record<string, unknown>): SseMessage {
  return { event, data: JSON.stringify({ type: event, ...data }) };
}

/**
 * IR events -> Messages SSE, as the API sends it: `message_start` (with the input usage known so far), a
 * `ping`, then per block `content_block_start` / `_delta`s / `content_block_stop`, then `message_delta`
 * (stop reason and final usage) and `message_stop`. Blocks are opened on their first non-empty event, so
 * an empty text block is never emitted; IR indices are renumbered to the blocks actually sent.
 *
 * Messages streams never interleave blocks, but the IR lets parallel tool calls interleave (Chat
 * Completions may stream them so). Events of a block that arrive while another is open are queued and
 * replayed, in order, once that block closes.
 */
export class MessagesStreamEncoder implements StreamEncoder {
  private readonly id: string;
  private model: string;
  private started = false;
  private finished = false;
  private nextIndex = 0;
  private readonly blocks = new Map<number, { index: number; open: boolean }>();
  private calledTools = false;
  private refused = false;
  /** IR index of the block currently open on the wire. */
  private active: number | undefined;
  private readonly queued = new Map<number, IrStreamEvent[]>();
  private usage: Partial<IrUsage> = {};

  constructor(request: IrRequest, options?: EncodeOptions) {
    this.id = idFactory(options)('msg_');
    this.model = request.model;
  }

  write(event: IrStreamEvent): SseMessage[] {
    if (event.type === 'error') {
      return encodeAnthropicStreamError(event);
    }
    if (this.finished) return [];
    const out = this.ensureStarted(event);
    out.push(...this.route(event));
    return out;
  }

  /** Sends a block event now, or queues it while another block is open. */
  private route(event: IrStreamEvent): SseMessage[] {
    if (!('index' in event)) return this.content(event);
    const waiting = this.queued.get(event.index);
    if (waiting) waiting.push(event);
    else if (this.active === undefined || this.active === event.index || this.blocks.has(event.index)) return this.content(event);
    else this.queued.set(event.index, [event]);
    return [];
  }

  /** Replays queued blocks after the open one closed, until one of them stays open. */
  private flush(): SseMessage[] {
    const out: SseMessage[] = [];
    for (const [index, events] of this.queued) {
      if (this.active !== undefined) break;
      this.queued.delete(index);
      for (const ev of events) out.push(...this.content(ev));
    }
    return out;
  }

  end(): SseMessage[] {
    return [];
  }

  private content(event: IrStreamEvent): SseMessage[] {
    switch (event.type) {
      case 'refusal_delta':
        this.refused = true;
        return event.text ? this.delta(event.index, { type: 'text', text: '' }, { type: 'text_delta', text: event.text }) : [];
      case 'text_delta':
        return event.text ? this.delta(event.index, { type: 'text', text: '' }, { type: 'text_delta', text: event.text }) : [];
      case 'thinking_delta':
        return event.text ? this.delta(event.index, thinkingStart, { type: 'thinking_delta', thinking: event.text }) : [];
      case 'thinking_signature':
        return this.delta(event.index, thinkingStart, { type: 'signature_delta', signature: signatureForClient('anthropic', event.issuer, event.signature) });
      case 'redacted_thinking':
        return this.open(event.index, { type: 'redacted_thinking', data: event.data });
      case 'tool_call_start':
        this.calledTools = true;
        return this.open(event.index, { type: 'tool_use', id: event.id, name: event.name, input: {} });
      case 'tool_call_delta':
        return event.argumentsDelta ? this.delta(event.index, null, { type: 'input_json_delta', partial_json: event.argumentsDelta }) : [];
      case 'block_stop':
        return this.stop(event.index);
      case 'usage':
        Object.assign(this.usage, event.usage);
        return [];
      case 'finish':
        return this.finish(event);
      default:
        return [];
    }
  }

  private ensureStarted(event: IrStreamEvent): SseMessage[] {
    if (this.started) return [];
    this.started = true;
    if (event.type === 'start') {
      if (event.model) this.model = event.model;
      Object.assign(this.usage, event.usage);
    }
    const message = {
      id: this.id,
      type: 'message',
      role: 'assistant',
      model: this.model,
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: encodeAnthropicUsage({ ...this.usage, outputTokens: this.usage.outputTokens ?? 0, reasoningTokens: undefined }),
    };
    return [sse('message_start', { message }), sse('ping', {})];
  }

  /** Opens the block for an IR index once; later calls are no-ops. */
  private open(irIndex: number, block: Record<string, unknown>): SseMessage[] {
    if (this.blocks.has(irIndex)) return [];
    const index = this.nextIndex++;
    this.blocks.set(irIndex, { index, open: true });
    this.active = irIndex;
    return [sse('content_block_start', { index, content_block: block })];
  }

  /** A delta for an IR block, opening it first if needed (`start` null: only an open block may take it). */
  private delta(irIndex: number, start: Record<string, unknown> | null, delta: Record<string, unknown>): SseMessage[] {
    const out = start ? this.open(irIndex, start) : [];
    const block = this.blocks.get(irIndex);
    if (!block) return out;
    out.push(sse('content_block_delta', { index: block.index, delta }));
    return out;
  }

  private stop(irIndex: number): SseMessage[] {
    const block = this.blocks.get(irIndex);
    if (!block?.open) return [];
    block.open = false;
    const out = [sse('content_block_stop', { index: block.index })];
    if (this.active === irIndex) {
      this.active = undefined;
      out.push(...this.flush());
    }
    return out;
  }

  /** Closes the open block and every queued one, in order (at the end of the reply). */
  private closeAll(): SseMessage[] {
    const out: SseMessage[] = [];
    for (let guard = 0; guard < 10_000 && (this.active !== undefined || this.queued.size); guard++) {
      if (this.active !== undefined) out.push(...this.stop(this.active));
      else out.push(...this.flush());
    }
    return out;
  }

  private finish(event: Ev<'finish'>): SseMessage[] {
    this.finished = true;
    const out = this.closeAll();
    const usage = { ...this.usage, ...event.usage };
    const stopReason = replyStopReason(event.finishReason, this.calledTools, this.refused);
    const delta = { stop_reason: stopReason, stop_sequence: stopReason === 'stop_sequence' ? (event.stopSequence ?? null) : null };
    out.push(sse('message_delta', { delta, usage: encodeAnthropicUsage(usage) }), sse('message_stop', {}));
    return out;
  }
}

const thinkingStart = { type: 'thinking', thinking: '', signature: '' };
