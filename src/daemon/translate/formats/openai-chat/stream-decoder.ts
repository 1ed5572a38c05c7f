import type { StreamDecoder } from '../../codec.js';
import type { IrFinishReason, IrStreamEvent, IrUsage, SseMessage } from '../../ir.js';
import { randomId } from '../../util/ids.js';
import { isRecord, tryParseJson } from '../../util/json.js';
import { decodeChatFinish, decodeChatUsage } from './usage.js';

type Kind = 'text' | 'thinking' | 'refusal';
type Rec = Record<string, unknown>;

/**
 * A field that makes a chunk matter beyond its text: any tool call, error, reasoning or thinking blocks
 * (whatever their value), or usage, finish_reason or refusal set to anything but null. One regular
 * expression on the raw text: a quoted name inside a string value is escaped (\"usage\") and never matches.
 * (A regex, not several `includes`: each `includes` of a multi-character pattern costs about as much here.)
 */
const NOT_SKIPPABLE_RE = /"(?:tool_calls|error|reasoning[a-z_]*|thinking_blocks)"|"(?:usage|finish_reason|refusal)"\s*:(?!\s*null)/;

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * `chat.completion.chunk` SSE -> IR events. Fields of one delta are read in the order a model produces them
 * (reasoning, content, refusal, tool calls), so text and a tool call in one chunk keep their order. Tool
 * calls are keyed by their `index` and stay open until the reply ends, since parallel calls interleave.
 * The finish is held back until the stream ends because the usage chunk comes after `finish_reason`.
 */
export class ChatStreamDecoder implements StreamDecoder {
  private started = false;
  private done = false;
  private failed = false;
  private nextIndex = 0;
  private open: { kind: Kind; index: number } | undefined;
  private readonly tools = new Map<number, number>();
  private readonly openTools: number[] = [];
  private finishReason: IrFinishReason | undefined;
  private usage: IrUsage | undefined;

  /**
   * A `chat.completion.chunk` that only adds text: no usage, non-null finish_reason, error, tool call,
   * reasoning, refusal or thinking blocks (each test errs towards "not skippable"). Checked on the raw
   * text, so a skipped chunk is never parsed.
   */
  skippable(message: SseMessage): boolean {
    const d = message.data;
    if (!this.started || this.failed || d.length === 0 || d.charCodeAt(0) !== 123 /* { */) return false;
    return !NOT_SKIPPABLE_RE.test(d);
  }

  skippedText(message: SseMessage): string {
    const chunk = tryParseJson(message.data);
    const choices = isRecord(chunk) && Array.isArray(chunk.choices) ? chunk.choices.filter(isRecord) : [];
    const delta = choices.find((c) => (c.index ?? 0) === 0)?.delta;
    return isRecord(delta) ? str(delta.content) : '';
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
      out.push({ type: 'start', id: str(chunk.id), model: str(chunk.model), ...(typeof chunk.created === 'number' ? { created: chunk.created } : {}) });
    }
    const usage = decodeChatUsage(chunk.usage);
    if (usage) this.usage = usage;
    const choices = Array.isArray(chunk.choices) ? chunk.choices.filter(isRecord) : [];
    const choice = choices.find((c) => (c.index ?? 0) === 0);
    if (choice) this.readChoice(choice, out);
    return out;
  }

  end(): IrStreamEvent[] {
    if (this.failed) return [];
    const hasContent = this.nextIndex > 0;
    if (!this.started || (!hasContent && this.finishReason === undefined)) {
      return [{ type: 'error', status: 502, message: 'The upstream stream was empty: it ended without any content.' }];
    }
    if (this.finishReason === undefined && !this.done) {
      return [{ type: 'error', status: 502, message: 'The upstream stream ended before the reply was finished.' }];
    }
    const out = this.closeAll();
    let finishReason = this.finishReason ?? 'stop';
    if (finishReason === 'stop' && this.tools.size > 0) finishReason = 'tool_calls';
    out.push({ type: 'finish', finishReason, ...(this.usage ? { usage: this.usage } : {}) });
    return out;
  }

  private readChoice(choice: Rec, out: IrStreamEvent[]): void {
    const delta = isRecord(choice.delta) ? choice.delta : {};
    this.textField(out, 'thinking', str(delta.reasoning_content) || str(delta.reasoning));
    if (Array.isArray(delta.thinking_blocks)) this.thinkingBlocks(delta.thinking_blocks.filter(isRecord), out);
    this.textField(out, 'text', str(delta.content));
    this.textField(out, 'refusal', str(delta.refusal));
    if (Array.isArray(delta.tool_calls)) delta.tool_calls.filter(isRecord).forEach((c, i) => this.toolCall(c, i, out));
    if (choice.finish_reason != null) {
      this.finishReason = decodeChatFinish(choice.finish_reason);
      out.push(...this.closeAll());
    }
  }

  private textField(out: IrStreamEvent[], kind: Kind, text: string): void {
    if (!text) return;
    const index = this.openBlock(kind, out);
    const type = kind === 'text' ? 'text_delta' : kind === 'thinking' ? 'thinking_delta' : 'refusal_delta';
    out.push({ type, index, text });
  }

  /** LiteLLM-style complete blocks: a signature closes the thinking block it signs; redacted is its own block. */
  private thinkingBlocks(blocks: Rec[], out: IrStreamEvent[]): void {
    for (const b of blocks) {
      if (b.type === 'redacted_thinking') {
        const index = this.newBlock(out);
        out.push({ type: 'redacted_thinking', index, data: str(b.data) }, { type: 'block_stop', index });
      } else if (str(b.signature)) {
        const fresh = this.open?.kind !== 'thinking';
        const index = this.openBlock('thinking', out);
        if (fresh && str(b.thinking)) out.push({ type: 'thinking_delta', index, text: str(b.thinking) });
        // LiteLLM's thinking_blocks are Anthropic's blocks, signed by Anthropic.
        out.push({ type: 'thinking_signature', index, signature: str(b.signature), issuer: 'anthropic' });
      }
    }
  }

  private toolCall(call: Rec, position: number, out: IrStreamEvent[]): void {
    const key = typeof call.index === 'number' ? call.index : position;
    const fn = isRecord(call.function) ? call.function : {};
    let index = this.tools.get(key);
    if (index === undefined) {
      this.closeOpen(out);
      index = this.nextIndex++;
      this.tools.set(key, index);
      this.openTools.push(index);
      out.push({ type: 'tool_call_start', index, id: str(call.id) || randomId('call_'), name: str(fn.name) });
    }
    const args = str(fn.arguments);
    if (args) out.push({ type: 'tool_call_delta', index, argumentsDelta: args });
  }

  /** The open block of this kind, or a new one after closing whatever was open (tool calls included). */
  private openBlock(kind: Kind, out: IrStreamEvent[]): number {
    if (this.open?.kind === kind) return this.open.index;
    const index = this.newBlock(out);
    this.open = { kind, index };
    return index;
  }

  private newBlock(out: IrStreamEvent[]): number {
    this.closeOpen(out);
    out.push(...this.closeTools());
    return this.nextIndex++;
  }

  private closeOpen(out: IrStreamEvent[]): void {
    if (this.open) out.push({ type: 'block_stop', index: this.open.index });
    this.open = undefined;
  }

  private closeTools(): IrStreamEvent[] {
    return this.openTools.splice(0).map((index): IrStreamEvent => ({ type: 'block_stop', index }));
  }

  private closeAll(): IrStreamEvent[] {
    const out: IrStreamEvent[] = [];
    this.closeOpen(out);
    out.push(...this.closeTools());
    return out;
  }

  private fail(error: unknown): IrStreamEvent[] {
    this.failed = true;
    const e = isRecord(error) ? error : {};
    const message = str(e.message) || 'The upstream provider reported an error mid-stream.';
    return [{ type: 'error', status: 502, message, ...(str(e.type) ? { errorType: str(e.type) } : {}), ...(e.code != null ? { code: String(e.code) } : {}) }];
  }
}
