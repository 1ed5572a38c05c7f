import type { EncodeOptions, StreamEncoder } from '../../codec.js';
import type { IrError, IrFinishReason, IrRequest, IrStreamEvent, IrUsage, SseMessage } from '../../ir.js';
import { encodeResponsesStreamError, responsesErrorCode } from './errors.js';
import { idFactory, nowSeconds, replyModel } from '../../util/ids.js';
import { responseId, responseObject, type ResponseState } from './encode-response.js';
import { ItemWriter, type Emit } from './stream-items.js';
import { signatureForClient } from '../../util/signature.js';

/**
 * IR stream -> Responses SSE. Every event carries `event:` and an increasing `sequence_number`, and follows
 * the documented lifecycle (created, in_progress, item added/deltas/done, completed) that the OpenAI SDK's
 * `responses.stream()` accumulates into a final response.
 */
class ResponsesStreamEncoder implements StreamEncoder {
  private seq = 0;
  private out: SseMessage[] = [];
  private state?: ResponseState;
  private items?: ItemWriter;
  private usage: Partial<IrUsage> = {};
  private done = false;
  private readonly newId;

  constructor(
    private readonly request: IrRequest,
    private readonly options?: EncodeOptions,
  ) {
    this.newId = idFactory(options);
  }

  private readonly emit: Emit = (type, payload) => {
    this.out.push({ event: type, data: JSON.stringify({ type, sequence_number: this.seq++, ...payload }) });
  };

  write(event: IrStreamEvent): SseMessage[] {
    if (this.done) return [];
    if (event.type === 'start') this.start(event.id, event.model, event.usage);
    else if (event.type === 'error') this.fail(event);
    else this.content(event);
    return this.take();
  }

  end(): SseMessage[] {
    return this.take();
  }

  private take(): SseMessage[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  private start(id: string, model: string, usage?: Partial<IrUsage>): void {
    if (this.state) return;
    const state: ResponseState = { id: responseId(id, this.newId), createdAt: nowSeconds(this.options), model: replyModel(model, this.request), output: [] };
    this.state = state;
    this.items = new ItemWriter(state.output, this.newId, this.emit);
    if (usage) Object.assign(this.usage, usage);
    const response = responseObject(state, this.request);
    this.emit('response.created', { response });
    this.emit('response.in_progress', { response });
  }

  private content(event: Exclude<IrStreamEvent, { type: 'start' | 'error' }>): void {
    if (!this.items) this.start('', '');
    const items = this.items as ItemWriter;
    switch (event.type) {
      case 'text_delta':
        return items.textDelta(event.index, 'text', event.text);
      case 'refusal_delta':
        return items.textDelta(event.index, 'refusal', event.text);
      case 'thinking_delta':
        return items.thinkingDelta(event.index, event.text);
      case 'thinking_signature':
        return items.thinkingSignature(event.index, signatureForClient('openai-responses', event.issuer, event.signature));
      case 'redacted_thinking':
        return items.thinkingSignature(event.index, signatureForClient('openai-responses', 'anthropic', event.data, true));
      case 'tool_call_start':
        return items.toolStart(event.index, event.id, event.name);
      case 'tool_call_delta':
        return items.toolDelta(event.index, event.argumentsDelta);
      case 'block_stop':
        return items.stop(event.index);
      case 'usage':
        Object.assign(this.usage, event.usage);
        return;
      case 'finish':
        return this.finish(event.finishReason, event.usage);
    }
  }

  private finalUsage(usage?: IrUsage): IrUsage | undefined {
    if (usage) return usage;
    const u = this.usage;
    if (u.inputTokens === undefined && u.outputTokens === undefined) return undefined;
    return { ...u, inputTokens: u.inputTokens ?? 0, outputTokens: u.outputTokens ?? 0 };
  }

  private finish(reason: IrFinishReason, usage?: IrUsage): void {
    const state = this.state as ResponseState;
    (this.items as ItemWriter).closeAll(reason === 'length' ? 'incomplete' : 'completed');
    state.finish = reason;
    const final = this.finalUsage(usage);
    if (final) state.usage = final;
    const response = responseObject(state, this.request);
    const type = response.status === 'completed' ? 'response.completed' : response.status === 'failed' ? 'response.failed' : 'response.incomplete';
    this.emit(type, { response });
    this.done = true;
  }

  /**
   * An `error` event, then `response.failed` as the terminal event (errors.ts, the format's one error writer).
   * Before any response exists (a stream that never started) there is nothing to fail: the error event alone.
   */
  private fail(error: IrError): void {
    const state = this.state;
    if (state) {
      state.finish = 'error';
      state.error = { code: responsesErrorCode(error), message: error.message };
    }
    const all = encodeResponsesStreamError(error, { nextSequence: this.seq }, state && responseObject(state, this.request));
    const messages = state ? all : all.slice(0, 1);
    this.seq += messages.length;
    this.out.push(...messages);
    this.done = true;
  }
}

/** Creates the stream encoder for one Responses reply. */
export function createResponsesStreamEncoder(request: IrRequest, options?: EncodeOptions): StreamEncoder {
  return new ResponsesStreamEncoder(request, options);
}
