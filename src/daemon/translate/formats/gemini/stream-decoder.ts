import type { StreamDecoder } from '../../codec.js';
import type { IrStreamEvent, SseMessage } from '../../ir.js';
import { isRecord, tryParseJson } from '../../util/json.js';
import { callIdCounter, type CallIdSource } from './decode-parts.js';
import { firstCandidate, promptBlocked } from './decode-response.js';
import { decodeFinish, decodeUsage } from './usage.js';

type Part = Record<string, unknown>;
const EMPTY = 'The upstream stream was empty: it ended without any content.';
const str = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * Gemini SSE -> IR events. Every `data:` is a partial GenerateContentResponse; there is no `[DONE]`, so the
 * reply is finished when the stream ends, with the last `finishReason` and `usageMetadata` seen. Parts
 * follow the non-streaming rules (decode-parts.ts): a signature on a non-thought part is an empty thinking
 * block of its own, function calls arrive whole.
 */
class GeminiStreamDecoder implements StreamDecoder {
  private out: IrStreamEvent[] = [];
  private started = false;
  private ended = false;
  private next = 0;
  private current?: { index: number; kind: 'text' | 'thinking' };
  private callId: CallIdSource = callIdCounter();
  private finishReason?: unknown;
  private usage?: unknown;
  private blocked = false;
  private sawCandidate = false;
  private sawToolCall = false;

  push(message: SseMessage): IrStreamEvent[] {
    const data = this.ended ? undefined : tryParseJson(message.data);
    if (!isRecord(data)) return this.take();
    if (isRecord(data.error)) return this.error(data.error);
    this.start(data);
    const candidate = firstCandidate(data);
    if (candidate) this.candidate(candidate);
    if (data.usageMetadata !== undefined) this.usage = data.usageMetadata;
    if (promptBlocked(data)) this.blocked = true;
    return this.take();
  }

  end(): IrStreamEvent[] {
    if (this.ended) return this.take();
    this.ended = true;
    this.close();
    if (this.finishReason === undefined && !this.blocked) {
      // Same wording as the other decoders: an empty stream is not a truncated one.
      const message = this.next > 0 ? 'The upstream stream ended before a finishReason.' : EMPTY;
      this.out.push({ type: 'error', status: 502, message });
    } else {
      const reason = this.blocked && !this.sawCandidate ? 'content_filter' : decodeFinish(this.finishReason, this.sawToolCall);
      const usage = decodeUsage(this.usage);
      this.out.push({ type: 'finish', finishReason: reason, ...(usage ? { usage } : {}) });
    }
    return this.take();
  }

  private take(): IrStreamEvent[] {
    const out = this.out;
    this.out = [];
    return out;
  }

  private start(data: Record<string, unknown>): void {
    if (this.started) return;
    this.started = true;
    const id = str(data.responseId);
    this.callId = callIdCounter(id);
    this.out.push({ type: 'start', id, model: str(data.modelVersion) });
  }

  private candidate(candidate: Record<string, unknown>): void {
    this.sawCandidate = true;
    const parts = isRecord(candidate.content) && Array.isArray(candidate.content.parts) ? candidate.content.parts : [];
    for (const part of parts) if (isRecord(part)) this.part(part);
    if (candidate.finishReason !== undefined) this.finishReason = candidate.finishReason;
  }

  private open(kind: 'text' | 'thinking'): number {
    if (this.current?.kind === kind) return this.current.index;
    this.close();
    this.current = { index: this.next++, kind };
    return this.current.index;
  }

  private close(): void {
    if (this.current) this.out.push({ type: 'block_stop', index: this.current.index });
    this.current = undefined;
  }

  private part(part: Part): void {
    const text = str(part.text);
    const signature = str(part.thoughtSignature);
    if (part.thought === true) {
      if (text) this.out.push({ type: 'thinking_delta', index: this.open('thinking'), text });
      // A signature ends its thought block: later thoughts open a new one.
      if (signature) this.signature(this.open('thinking'), signature);
      return;
    }
    if (signature) {
      this.close();
      this.signature(this.open('thinking'), signature);
    }
    if (text) this.out.push({ type: 'text_delta', index: this.open('text'), text });
    if (isRecord(part.functionCall)) this.functionCall(part.functionCall);
  }

  private signature(index: number, signature: string): void {
    this.out.push({ type: 'thinking_signature', index, signature, issuer: 'gemini' });
    this.close();
  }

  private functionCall(call: Record<string, unknown>): void {
    this.close();
    const index = this.next++;
    const args = isRecord(call.args) ? call.args : {};
    this.sawToolCall = true;
    this.out.push({ type: 'tool_call_start', index, id: this.callId(str(call.id) || undefined), name: str(call.name) });
    this.out.push({ type: 'tool_call_delta', index, argumentsDelta: JSON.stringify(args) });
    this.out.push({ type: 'block_stop', index });
  }

  private error(error: Record<string, unknown>): IrStreamEvent[] {
    const status = typeof error.code === 'number' && error.code >= 400 ? error.code : 502;
    const code = typeof error.status === 'string' ? { code: error.status } : {};
    this.out.push({ type: 'error', status, message: str(error.message) || 'The upstream stream failed.', ...code });
    this.ended = true;
    return this.take();
  }
}

/** Creates the stream decoder for one Gemini upstream reply. */
export function createGeminiStreamDecoder(): StreamDecoder {
  return new GeminiStreamDecoder();
}
