import type { StreamDecoder, StreamPosition } from '../../codec.js';
import type { IrStreamEvent, SseMessage } from '../../ir.js';
import { isRecord, tryParseJson } from '../../util/json.js';
import { BlockTracker } from './stream-blocks.js';
import { decodeUsage, finishFor, statusForErrorCode, type ResponsesUsage } from './usage.js';

type Data = Record<string, unknown>;

const EMPTY = 'The upstream stream was empty: it ended without any content.';
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * Responses SSE -> IR events. Output items map to IR blocks (message content parts, reasoning items and
 * function calls each one block). Providers that skip deltas and only send `done` events or whole items
 * are handled too: whatever text a block has not streamed yet is emitted when it closes.
 */
class ResponsesStreamDecoder implements StreamDecoder {
  private readonly blocks = new BlockTracker();
  private started = false;
  private ended = false;
  /** The `sequence_number` the next event would carry (a passthrough error event continues the numbering). */
  private nextSequence = 0;

  push(message: SseMessage): IrStreamEvent[] {
    if (this.ended) return [];
    const data = tryParseJson(message.data);
    if (!isRecord(data)) return [];
    if (typeof data.sequence_number === 'number') this.nextSequence = data.sequence_number + 1;
    const type = str(data.type) || str(message.event);
    this.dispatch(type, data);
    return this.blocks.take();
  }

  position(): StreamPosition {
    return { nextSequence: this.nextSequence };
  }

  end(): IrStreamEvent[] {
    if (!this.ended) {
      this.ended = true;
      // Same wording as the other decoders: an empty stream is not a truncated one.
      const message = this.blocks.opened ? 'The upstream stream ended before the response completed.' : EMPTY;
      this.blocks.out.push({ type: 'error', status: 502, message });
    }
    return this.blocks.take();
  }

  private dispatch(type: string, data: Data): void {
    const b = this.blocks;
    const oi = Number(data.output_index ?? -1);
    const key = `${oi}:${String(data.content_index ?? 0)}`;
    switch (type) {
      case 'response.created':
      case 'response.queued':
      case 'response.in_progress':
        return this.start(data.response);
      case 'response.output_item.added':
        return isRecord(data.item) ? b.itemAdded(oi, data.item) : undefined;
      case 'response.output_item.done':
        return isRecord(data.item) ? b.itemDone(oi, data.item) : undefined;
      case 'response.output_text.delta':
        return b.textDelta(key, oi, 'text', str(data.delta));
      case 'response.refusal.delta':
        return b.textDelta(key, oi, 'refusal', str(data.delta));
      case 'response.output_text.done':
        return b.textDone(key, oi, 'text', str(data.text));
      case 'response.refusal.done':
        return b.textDone(key, oi, 'refusal', str(data.refusal));
      case 'response.content_part.done':
        return this.partDone(key, oi, data.part);
      case 'response.reasoning_summary_part.added':
        return b.summaryPart(oi, Number(data.summary_index ?? 0));
      case 'response.reasoning_summary_text.delta':
      case 'response.reasoning_text.delta':
        return b.thinkingDelta(oi, str(data.delta));
      case 'response.function_call_arguments.delta':
        return b.toolDelta(oi, str(data.delta));
      case 'response.function_call_arguments.done':
        return b.toolArgumentsDone(oi, str(data.arguments));
      case 'response.completed':
      case 'response.incomplete':
        return this.complete(data.response);
      case 'response.failed':
        return this.failed(data.response);
      case 'error':
        return this.error(isRecord(data.error) ? data.error : data);
    }
  }

  private start(response: unknown): void {
    if (this.started || !isRecord(response)) return;
    this.started = true;
    const created = typeof response.created_at === 'number' ? { created: response.created_at } : {};
    this.blocks.out.push({ type: 'start', id: str(response.id), model: str(response.model), ...created });
  }

  private partDone(key: string, oi: number, part: unknown): void {
    if (!isRecord(part)) return;
    if (part.type === 'output_text') this.blocks.textDone(key, oi, 'text', str(part.text));
    else if (part.type === 'refusal') this.blocks.textDone(key, oi, 'refusal', str(part.refusal));
  }

  private complete(response: unknown): void {
    if (!isRecord(response)) return;
    this.start(response);
    this.blocks.closeAll();
    const reason = isRecord(response.incomplete_details) ? response.incomplete_details.reason : undefined;
    const finishReason = finishFor(response.status, reason, this.blocks.sawToolCall);
    const usage = isRecord(response.usage) ? { usage: decodeUsage(response.usage as ResponsesUsage) } : {};
    this.blocks.out.push({ type: 'finish', finishReason, ...usage });
    this.ended = true;
  }

  private failed(response: unknown): void {
    const error = isRecord(response) && isRecord(response.error) ? response.error : {};
    this.error(error);
  }

  private error(error: Data): void {
    const code = typeof error.code === 'string' ? { code: error.code } : {};
    const message = str(error.message) || 'The upstream response failed.';
    this.blocks.out.push({ type: 'error', status: statusForErrorCode(error.code), message, ...code });
    this.ended = true;
  }
}

/** Creates the stream decoder for one Responses upstream reply. */
export function createResponsesStreamDecoder(): StreamDecoder {
  return new ResponsesStreamDecoder();
}
