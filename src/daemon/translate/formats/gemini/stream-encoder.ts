import type { EncodeOptions, StreamEncoder } from '../../codec.js';
import type { IrError, IrFinishReason, IrRequest, IrStreamEvent, IrUsage, SseMessage } from '../../ir.js';
import { idFactory, replyModel } from '../../util/ids.js';
import { argumentsToObject } from '../../util/json.js';
import { encodeGeminiStreamError } from './errors.js';
import { encodeFinish, encodeUsage } from './usage.js';
import { signatureForClient } from '../../util/signature.js';

type Part = Record<string, unknown>;

interface Block {
  kind: 'text' | 'thinking' | 'tool';
  /** Thinking: the last delta, held back so the block's signature can ride on it (Gemini's own layout). */
  held?: string;
  hadText?: boolean;
  id?: string;
  name?: string;
  args?: string;
}

/**
 * IR stream -> Gemini SSE (`data:` lines only, no `[DONE]`). Each chunk is a partial GenerateContentResponse
 * with one part. Function calls are sent whole when their block closes (Gemini never splits them). The
 * last chunk carries `finishReason` and usage with a non-empty part: the SDK's chat sessions discard a
 * streamed turn containing an empty `parts` list.
 */
class GeminiStreamEncoder implements StreamEncoder {
  private out: SseMessage[] = [];
  private readonly blocks = new Map<number, Block>();
  private model = '';
  private responseId?: string;
  private pendingSignature?: string;
  private usage: Partial<IrUsage> = {};
  private done = false;

  constructor(
    private readonly request: IrRequest,
    private readonly options?: EncodeOptions,
  ) {}

  write(event: IrStreamEvent): SseMessage[] {
    if (this.done) return [];
    this.responseId ??= idFactory(this.options)('');
    if (event.type === 'start') {
      this.model = replyModel(event.model, this.request);
      if (event.usage) Object.assign(this.usage, event.usage);
    } else if (event.type === 'usage') Object.assign(this.usage, event.usage);
    else if (event.type === 'finish') this.finish(event.finishReason, event.usage);
    else if (event.type === 'error') this.error(event);
    else this.block(event);
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

  private chunk(parts: Part[] | undefined, finish?: { reason: string; usage?: IrUsage }): void {
    const candidate: Record<string, unknown> = parts ? { content: { role: 'model', parts } } : {};
    if (finish) candidate.finishReason = finish.reason;
    candidate.index = 0;
    const body: Record<string, unknown> = { candidates: [candidate] };
    if (finish) this.addUsage(body, finish.usage);
    body.modelVersion = this.model;
    body.responseId = this.responseId;
    this.out.push({ data: JSON.stringify(body) });
  }

  private addUsage(body: Record<string, unknown>, usage: IrUsage | undefined): void {
    const u = usage ?? this.usage;
    if (u.inputTokens === undefined && u.outputTokens === undefined) return;
    body.usageMetadata = encodeUsage({ ...u, inputTokens: u.inputTokens ?? 0, outputTokens: u.outputTokens ?? 0 });
  }

  /** Sends one part, with a signature waiting for a carrier (from an empty thinking block) attached. */
  private part(part: Part): void {
    if (this.pendingSignature) part.thoughtSignature = this.pendingSignature;
    this.pendingSignature = undefined;
    this.chunk([part]);
  }

  private block(event: Extract<IrStreamEvent, { index: number }>): void {
    const block = this.blocks.get(event.index);
    switch (event.type) {
      case 'text_delta':
      case 'refusal_delta':
        if (!block) this.blocks.set(event.index, { kind: 'text' });
        if (event.text) this.part({ text: event.text });
        return;
      case 'thinking_delta':
        return this.thinkingDelta(event.index, block, event.text);
      case 'thinking_signature':
        return this.thinkingStop(event.index, block, signatureForClient('gemini', event.issuer, event.signature));
      case 'tool_call_start':
        this.blocks.set(event.index, { kind: 'tool', id: event.id, name: event.name, args: '' });
        return;
      case 'tool_call_delta':
        if (block?.kind === 'tool') block.args += event.argumentsDelta;
        return;
      case 'block_stop':
        return this.stop(event.index, block);
      case 'redacted_thinking':
        // Anthropic's encrypted thinking rides in an empty thought, wrapped, so it can go back to Anthropic.
        return this.chunk([{ text: '', thought: true, thoughtSignature: signatureForClient('gemini', 'anthropic', event.data, true) }]);
    }
  }

  private thinkingDelta(index: number, block: Block | undefined, text: string): void {
    const b: Block = block ?? { kind: 'thinking' };
    if (!block) this.blocks.set(index, b);
    if (!text) return;
    if (b.held !== undefined) this.part({ text: b.held, thought: true });
    b.held = text;
    b.hadText = true;
  }

  /** Ends a thinking block's output: the held delta goes out, carrying the signature if there is one. */
  private thinkingStop(index: number, block: Block | undefined, signature?: string): void {
    const b: Block = block ?? { kind: 'thinking' };
    if (!block) this.blocks.set(index, b);
    if (!b.hadText) {
      // An empty thinking block is a signature belonging to the next part (see decode-parts.ts).
      if (signature) this.pendingSignature = signature;
      return;
    }
    if (b.held === undefined && !signature) return;
    this.chunk([{ text: b.held ?? '', thought: true, ...(signature ? { thoughtSignature: signature } : {}) }]);
    b.held = undefined;
  }

  private stop(index: number, block: Block | undefined): void {
    this.blocks.delete(index);
    if (block?.kind === 'thinking') this.thinkingStop(index, block);
    if (block?.kind === 'tool') this.part({ functionCall: { id: block.id, name: block.name, args: argumentsToObject(block.args ?? '') } });
  }

  private finish(reason: IrFinishReason, usage?: IrUsage): void {
    for (const [index, block] of [...this.blocks]) this.stop(index, block);
    const tail: Part = { text: '', ...(this.pendingSignature ? { thoughtSignature: this.pendingSignature } : {}) };
    // A filtered reply carries no content, as Gemini sends it.
    const parts = reason === 'content_filter' && !this.pendingSignature ? undefined : [tail];
    this.chunk(parts, { reason: encodeFinish(reason), usage });
    this.done = true;
  }

  /** Gemini's error chunk (`{error: {code, message, status}}`); the SDK throws it as an ApiError. */
  private error(error: IrError): void {
    this.out.push(...encodeGeminiStreamError(error));
    this.done = true;
  }
}

/** Creates the stream encoder for one Gemini reply. */
export function createGeminiStreamEncoder(request: IrRequest, options?: EncodeOptions): StreamEncoder {
  return new GeminiStreamEncoder(request, options);
}
