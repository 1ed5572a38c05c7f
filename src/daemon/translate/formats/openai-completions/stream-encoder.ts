import type { EncodeOptions, StreamEncoder } from '../../codec.js';
import type { IrRequest, IrStreamEvent, IrUsage, SseMessage } from '../../ir.js';
import { idFactory, nowSeconds } from '../../util/ids.js';
import { encodeOpenAiStreamError } from '../openai-chat/errors.js';
import { completionFinish, completionUsage } from './encode-response.js';

/**
 * IR events -> legacy `text_completion` chunks, shaped like OpenAI's: `{id, object, created, choices, model}`
 * with `choices[0].text`, `logprobs: null` and `finish_reason` on the last text chunk. A usage chunk with
 * `choices: []` follows only when `stream_options.include_usage` was set; `[DONE]` ends the stream.
 */
export class CompletionStreamEncoder implements StreamEncoder {
  private readonly id: string;
  private readonly created: number;
  private model: string;
  private started = false;
  private failed = false;

  constructor(private readonly request: IrRequest, options?: EncodeOptions) {
    this.id = idFactory(options)('cmpl-');
    this.created = nowSeconds(options);
    this.model = request.model;
  }

  write(event: IrStreamEvent): SseMessage[] {
    if (event.type === 'error') {
      this.failed = true;
      return encodeOpenAiStreamError(event);
    }
    const out = this.ensureStarted(event);
    if ((event.type === 'text_delta' || event.type === 'refusal_delta') && event.text) out.push(this.chunk(event.text, null));
    if (event.type === 'finish') {
      out.push(this.chunk('', completionFinish(event.finishReason)));
      if (this.request.includeUsage && event.usage) out.push(this.usageChunk(event.usage));
    }
    return out;
  }

  /** `[DONE]` marks a completed stream; after an error the stream just ends, as OpenAI's does. */
  end(): SseMessage[] {
    return this.failed ? [] : [{ data: '[DONE]' }];
  }

  /** Takes the model from `start`; with `echo`, the prompt is the first text the client sees. */
  private ensureStarted(event: IrStreamEvent): SseMessage[] {
    if (this.started) return [];
    this.started = true;
    if (event.type === 'start' && event.model) this.model = event.model;
    const echo = this.request.legacy?.echo ? this.request.legacy.prompt : '';
    return echo ? [this.chunk(echo, null)] : [];
  }

  private chunk(text: string, finishReason: string | null): SseMessage {
    const body: Record<string, unknown> = {
      id: this.id,
      object: 'text_completion',
      created: this.created,
      choices: [{ text, index: 0, logprobs: null, finish_reason: finishReason }],
      model: this.model,
    };
    if (this.request.includeUsage) body.usage = null;
    return { data: JSON.stringify(body) };
  }

  private usageChunk(usage: IrUsage): SseMessage {
    const body = { id: this.id, object: 'text_completion', created: this.created, model: this.model, usage: completionUsage(usage), choices: [] };
    return { data: JSON.stringify(body) };
  }
}
