import type { StreamDecoder } from '../../codec.js';
import type { IrFinishReason, IrStreamEvent, IrUsage, SseMessage } from '../../ir.js';
import { isRecord, tryParseJson } from '../../util/json.js';
import { decodeChatFinish, decodeChatUsage } from '../openai-chat/usage.js';
import { firstChoice } from './decode-response.js';

/** Fields that make a chunk matter beyond its text (checked on the raw text, erring towards "matters"). */
const NOT_SKIPPABLE_RE = /"error"|"(?:usage|finish_reason)"\s*:(?!\s*null)/;

/**
 * Legacy `text_completion` SSE -> IR events: one text block from the first choice's `text`; the finish
 * is held back until the stream ends, since the usage chunk (`stream_options.include_usage`) follows it.
 */
export class CompletionStreamDecoder implements StreamDecoder {
  private started = false;
  private done = false;
  private failed = false;
  private hasText = false;
  private finishReason: IrFinishReason | undefined;
  private usage: IrUsage | undefined;

  skippable(message: SseMessage): boolean {
    const d = message.data;
    if (!this.started || this.failed || d.length === 0 || d.charCodeAt(0) !== 123 /* { */) return false;
    return !NOT_SKIPPABLE_RE.test(d);
  }

  skippedText(message: SseMessage): string {
    const chunk = tryParseJson(message.data);
    const choice = isRecord(chunk) ? firstChoice(chunk) : undefined;
    return typeof choice?.text === 'string' ? choice.text : '';
  }

  push(message: SseMessage): IrStreamEvent[] {
    if (message.data.trim() === '[DONE]') {
      this.done = true;
      return [];
    }
    const chunk = tryParseJson(message.data);
    if (!isRecord(chunk) || this.failed) return [];
    if (chunk.error !== undefined) return this.fail(chunk.error);
    const out: IrStreamEvent[] = [];
    if (!this.started) {
      this.started = true;
      const id = typeof chunk.id === 'string' ? chunk.id : '';
      const model = typeof chunk.model === 'string' ? chunk.model : '';
      out.push({ type: 'start', id, model, ...(typeof chunk.created === 'number' ? { created: chunk.created } : {}) });
    }
    const usage = decodeChatUsage(chunk.usage);
    if (usage) this.usage = usage;
    const choice = firstChoice(chunk);
    if (!choice) return out;
    if (typeof choice.text === 'string' && choice.text) {
      this.hasText = true;
      out.push({ type: 'text_delta', index: 0, text: choice.text });
    }
    if (choice.finish_reason != null) this.finishReason = decodeChatFinish(choice.finish_reason);
    return out;
  }

  end(): IrStreamEvent[] {
    if (this.failed) return [];
    if (!this.started || (!this.hasText && this.finishReason === undefined)) {
      return [{ type: 'error', status: 502, message: 'The upstream stream was empty: it ended without any content.' }];
    }
    if (this.finishReason === undefined && !this.done) {
      return [{ type: 'error', status: 502, message: 'The upstream stream ended before the reply was finished.' }];
    }
    const out: IrStreamEvent[] = this.hasText ? [{ type: 'block_stop', index: 0 }] : [];
    out.push({ type: 'finish', finishReason: this.finishReason ?? 'stop', ...(this.usage ? { usage: this.usage } : {}) });
    return out;
  }

  private fail(error: unknown): IrStreamEvent[] {
    this.failed = true;
    const e = isRecord(error) ? error : {};
    const message = typeof e.message === 'string' && e.message ? e.message : 'The upstream provider reported an error mid-stream.';
    return [
      {
        type: 'error',
        status: 502,
        message,
        ...(typeof e.type === 'string' ? { errorType: e.type } : {}),
        ...(e.code != null ? { code: String(e.code) } : {}),
      },
    ];
  }
}
