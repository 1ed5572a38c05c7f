import type { StreamDecoder } from '../../codec.js';
import type { IrFinishReason, IrStreamEvent, IrUsage, SseMessage } from '../../ir.js';
import { isRecord, tryParseJson } from '../../util/json.js';
import { completeUsage, decodeAnthropicUsage, decodeStopReason } from './usage.js';
import { ANTHROPIC_ERROR_STATUS } from './errors.js';

type Rec = Record<string, unknown>;
interface Block {
  kind: string;
  irIndex?: number;
  hasInput?: boolean;
}

const ERROR_STATUS = ANTHROPIC_ERROR_STATUS;

const EMPTY = 'The upstream stream was empty: it ended without any content.';

/** The start of a text delta event's data as Anthropic writes it (see MessagesStreamDecoder.skippable). */
const TEXT_DELTA_RE = /^\{"type":"content_block_delta","index":\d+,"delta":\{"type":"text_delta","text":"/;

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * Messages SSE -> IR events. IR block indices are assigned when a block first produces something, so
 * empty text blocks and skipped server-tool blocks leave no gap. A stream that never starts, or starts and
 * ends with neither content nor a stop reason, yields a 502 error event, never a synthetic success.
 */
export class MessagesStreamDecoder implements StreamDecoder {
  private started = false;
  private finished = false;
  private failed = false;
  private nextIndex = 0;
  private readonly blocks = new Map<number, Block>();
  private usage: Partial<IrUsage> = {};
  /** Raw usage fields merged across events: `message_delta` totals replace `message_start` ones field by field. */
  private rawUsage: Rec = {};
  private stopReason: IrFinishReason | undefined;
  private stopSequence: string | undefined;

  /**
   * A `content_block_delta` carrying a `text_delta`, as Anthropic serializes it (field order and no
   * spaces; anything written differently is simply not skipped). Only text: thinking, signatures and tool
   * input are always decoded.
   */
  skippable(message: SseMessage): boolean {
    return this.started && !this.failed && !this.finished && TEXT_DELTA_RE.test(message.data);
  }

  skippedText(message: SseMessage): string {
    const data = tryParseJson(message.data);
    return isRecord(data) && isRecord(data.delta) ? str(data.delta.text) : '';
  }

  push(message: SseMessage): IrStreamEvent[] {
    const data = tryParseJson(message.data);
    if (!isRecord(data) || this.failed || this.finished) return [];
    switch (data.type ?? message.event) {
      case 'message_start':
        return this.start(isRecord(data.message) ? data.message : {});
      case 'content_block_start':
        return this.blockStart(Number(data.index), isRecord(data.content_block) ? data.content_block : {});
      case 'content_block_delta':
        return this.blockDelta(Number(data.index), isRecord(data.delta) ? data.delta : {});
      case 'content_block_stop':
        return this.blockStop(Number(data.index));
      case 'message_delta':
        this.messageDelta(data);
        return [];
      case 'message_stop':
        return this.finish();
      case 'error':
        return this.fail(isRecord(data.error) ? data.error : {});
      default:
        return []; // ping, and event types added after this was written
    }
  }

  end(): IrStreamEvent[] {
    if (this.failed || this.finished) return [];
    if (!this.started) return [{ type: 'error', status: 502, message: EMPTY }];
    if (this.stopReason !== undefined) return this.finish();
    const message = this.blocks.size ? 'The upstream stream ended before message_stop.' : EMPTY;
    return [{ type: 'error', status: 502, message }];
  }

  private start(message: Rec): IrStreamEvent[] {
    if (this.started) return [];
    this.started = true;
    this.rawUsage = isRecord(message.usage) ? { ...message.usage } : {};
    this.usage = decodeAnthropicUsage(this.rawUsage);
    return [{ type: 'start', id: str(message.id), model: str(message.model), usage: { ...this.usage } }];
  }

  private allocate(block: Block): number {
    block.irIndex ??= this.nextIndex++;
    return block.irIndex;
  }

  private blockStart(index: number, cb: Rec): IrStreamEvent[] {
    const block: Block = { kind: str(cb.type) };
    this.blocks.set(index, block);
    switch (block.kind) {
      case 'text':
        return this.blockDelta(index, { type: 'text_delta', text: cb.text });
      case 'thinking':
        return [...this.blockDelta(index, { type: 'thinking_delta', thinking: cb.thinking }), ...this.blockDelta(index, { type: 'signature_delta', signature: cb.signature })];
      case 'redacted_thinking':
        return [{ type: 'redacted_thinking', index: this.allocate(block), data: str(cb.data) }];
      case 'tool_use':
        return [{ type: 'tool_call_start', index: this.allocate(block), id: str(cb.id), name: str(cb.name) }];
      default:
        return [];
    }
  }

  private blockDelta(index: number, delta: Rec): IrStreamEvent[] {
    const block = this.blocks.get(index) ?? this.implicitBlock(index, delta);
    switch (delta.type) {
      case 'text_delta':
        return str(delta.text) ? [{ type: 'text_delta', index: this.allocate(block), text: str(delta.text) }] : [];
      case 'thinking_delta':
        return str(delta.thinking) ? [{ type: 'thinking_delta', index: this.allocate(block), text: str(delta.thinking) }] : [];
      case 'signature_delta':
        return str(delta.signature) ? [{ type: 'thinking_signature', index: this.allocate(block), signature: str(delta.signature), issuer: 'anthropic' }] : [];
      case 'input_json_delta':
        if (!str(delta.partial_json) || block.kind !== 'tool_use') return [];
        block.hasInput = true;
        return [{ type: 'tool_call_delta', index: this.allocate(block), argumentsDelta: str(delta.partial_json) }];
      default:
        return []; // citations_delta and server-tool deltas have no IR form
    }
  }

  /** A delta without its `content_block_start` (seen from some proxies): infer the block from the delta. */
  private implicitBlock(index: number, delta: Rec): Block {
    const kind = delta.type === 'thinking_delta' || delta.type === 'signature_delta' ? 'thinking' : 'text';
    const block: Block = { kind };
    this.blocks.set(index, block);
    return block;
  }

  /** Closes a block; a tool call that streamed no input gets `{}`, its actual (empty) arguments. */
  private blockStop(index: number): IrStreamEvent[] {
    const block = this.blocks.get(index);
    if (block?.irIndex === undefined) return [];
    const out: IrStreamEvent[] = [];
    if (block.kind === 'tool_use' && !block.hasInput) out.push({ type: 'tool_call_delta', index: block.irIndex, argumentsDelta: '{}' });
    block.hasInput = true;
    out.push({ type: 'block_stop', index: block.irIndex });
    block.irIndex = undefined;
    return out;
  }

  private messageDelta(data: Rec): void {
    const delta = isRecord(data.delta) ? data.delta : {};
    if (delta.stop_reason != null) this.stopReason = decodeStopReason(delta.stop_reason);
    if (str(delta.stop_sequence)) this.stopSequence = str(delta.stop_sequence);
    if (isRecord(data.usage)) Object.assign(this.rawUsage, data.usage);
    this.usage = decodeAnthropicUsage(this.rawUsage);
  }

  private finish(): IrStreamEvent[] {
    if (!this.started || (this.blocks.size === 0 && this.stopReason === undefined)) {
      this.failed = true;
      return [{ type: 'error', status: 502, message: EMPTY }];
    }
    this.finished = true;
    const out = [...this.blocks.keys()].flatMap((i) => this.blockStop(i));
    const finishReason = this.stopReason ?? 'stop';
    out.push({ type: 'finish', finishReason, ...(this.stopSequence ? { stopSequence: this.stopSequence } : {}), usage: completeUsage(this.usage) });
    return out;
  }

  private fail(error: Rec): IrStreamEvent[] {
    this.failed = true;
    const errorType = str(error.type) || 'api_error';
    const message = str(error.message) || 'The upstream provider reported an error mid-stream.';
    return [{ type: 'error', status: ERROR_STATUS[errorType] ?? 502, message, errorType }];
  }
}
