import type { EncodeOptions, StreamEncoder } from '../../codec.js';
import type { IrRequest, IrStreamEvent, IrUsage, SseMessage } from '../../ir.js';
import { idFactory, nowSeconds } from '../../util/ids.js';
import { encodeOpenAiStreamError } from './errors.js';
import { encodeChatFinish, encodeChatUsage } from './usage.js';
import { signatureForClient } from '../../util/signature.js';

type Delta = Record<string, unknown>;

/** Usage collected from partial updates, when both counts are known. */
function completeUsage(u: Partial<IrUsage>): IrUsage | undefined {
  if (u.inputTokens === undefined || u.outputTokens === undefined) return undefined;
  return { ...u, inputTokens: u.inputTokens, outputTokens: u.outputTokens };
}

/**
 * IR events -> `chat.completion.chunk` SSE. Text, refusal and thinking (`reasoning_content`) map to delta
 * fields; each tool call gets the next `tool_calls[].index`; a thinking signature or redacted block is sent
 * as one complete LiteLLM-style `thinking_blocks` entry. The usage chunk (`choices: []`) is sent only when
 * the client asked for it with `stream_options.include_usage`; `[DONE]` ends a stream that completed.
 */
export class ChatStreamEncoder implements StreamEncoder {
  private readonly id: string;
  private readonly created: number;
  private model: string;
  private started = false;
  private readonly toolIndex = new Map<number, number>();
  private readonly thinkingText = new Map<number, string>();
  private usage: Partial<IrUsage> = {};
  private failed = false;

  constructor(private readonly request: IrRequest, options?: EncodeOptions) {
    this.id = idFactory(options)('chatcmpl-');
    this.created = nowSeconds(options);
    this.model = request.model;
  }

  write(event: IrStreamEvent): SseMessage[] {
    if (event.type === 'error') {
      this.failed = true;
      return encodeOpenAiStreamError(event);
    }
    const out = this.ensureStarted(event);
    switch (event.type) {
      case 'text_delta':
        return event.text ? [...out, this.chunk({ content: event.text })] : out;
      case 'refusal_delta':
        return event.text ? [...out, this.chunk({ refusal: event.text })] : out;
      case 'thinking_delta':
        this.thinkingText.set(event.index, (this.thinkingText.get(event.index) ?? '') + event.text);
        return event.text ? [...out, this.chunk({ reasoning_content: event.text })] : out;
      case 'thinking_signature': {
        const signature = signatureForClient('openai-chat', event.issuer, event.signature);
        const block = { type: 'thinking', thinking: this.thinkingText.get(event.index) ?? '', signature };
        return [...out, this.chunk({ thinking_blocks: [block] })];
      }
      case 'redacted_thinking':
        return [...out, this.chunk({ thinking_blocks: [{ type: 'redacted_thinking', data: event.data }] })];
      case 'tool_call_start':
      case 'tool_call_delta':
        return [...out, ...this.tool(event)];
      case 'usage':
        Object.assign(this.usage, event.usage);
        return out;
      case 'finish':
        return [...out, ...this.finish(event)];
      default:
        return out;
    }
  }

  /** `[DONE]` marks a completed stream; after an error the stream just ends, as OpenAI's does. */
  end(): SseMessage[] {
    return this.failed ? [] : [{ data: '[DONE]' }];
  }

  /** The first chunk announces the assistant role, as OpenAI's does; `start` supplies the model. */
  private ensureStarted(event: IrStreamEvent): SseMessage[] {
    if (this.started) return [];
    this.started = true;
    if (event.type === 'start') {
      if (event.model) this.model = event.model;
      if (event.usage) Object.assign(this.usage, event.usage);
    }
    return [this.chunk({ role: 'assistant', content: '' })];
  }

  private tool(event: Extract<IrStreamEvent, { type: 'tool_call_start' | 'tool_call_delta' }>): SseMessage[] {
    let index = this.toolIndex.get(event.index);
    if (event.type === 'tool_call_start') {
      index = this.toolIndex.size;
      this.toolIndex.set(event.index, index);
      const call = { index, id: event.id, type: 'function', function: { name: event.name, arguments: '' } };
      return [this.chunk({ tool_calls: [call] })];
    }
    // A delta for a call never started cannot be placed; it would corrupt another call's arguments.
    if (index === undefined || !event.argumentsDelta) return [];
    return [this.chunk({ tool_calls: [{ index, function: { arguments: event.argumentsDelta } }] })];
  }

  private finish(event: Extract<IrStreamEvent, { type: 'finish' }>): SseMessage[] {
    const out = [this.chunk({}, encodeChatFinish(event.finishReason))];
    const usage = event.usage ?? completeUsage(this.usage);
    if (this.request.includeUsage && usage) {
      const body = { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: encodeChatUsage(usage) };
      out.push({ data: JSON.stringify(body) });
    }
    return out;
  }

  private chunk(delta: Delta, finishReason: string | null = null): SseMessage {
    const body: Record<string, unknown> = {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    };
    // OpenAI sends `usage: null` on every chunk once usage was requested; some clients look for the key.
    if (this.request.includeUsage) body.usage = null;
    return { data: JSON.stringify(body) };
  }
}
