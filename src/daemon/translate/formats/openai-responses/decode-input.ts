import type { IrMessage, IrPart, IrRequest, TextPart, ToolResultPart } from '../../ir.js';
import { decodeError } from '../../errors.js';
import { noteDropped } from '../../util/dropped.js';
import { splitLeadingSystem } from '../../util/system.js';
import { decodeContent, decodeToolOutput, systemText } from './decode-content.js';
import {
  functionCallItemSchema,
  functionCallOutputItemSchema,
  messageItemSchema,
  reasoningItemSchema,
} from './schema.js';
import { parseAt } from './validate.js';
import { thinkingFromClient } from '../../util/signature.js';

/** The conversation of a Responses request, split the IR way. */
export interface DecodedInput {
  system: TextPart[];
  messages: IrMessage[];
}

/** Walks the input items, merging consecutive assistant-side items into one assistant turn. */
class InputBuilder {
  readonly system: TextPart[] = [];
  readonly messages: IrMessage[] = [];
  private readonly toolNames = new Map<string, string>();

  constructor(private readonly request: IrRequest) {}

  /** Appends to the trailing message of `role`, or opens a new one (user turns are never merged). */
  private push(role: IrMessage['role'], part: IrPart): void {
    const last = this.messages[this.messages.length - 1];
    if (last && last.role === role && role !== 'user') last.parts.push(part);
    else this.messages.push({ role, parts: [part] });
  }

  item(raw: Record<string, unknown>, param: string): void {
    const type = typeof raw.type === 'string' ? raw.type : 'message';
    switch (type) {
      case 'message':
        return this.message(raw, param);
      case 'function_call': {
        const call = parseAt(functionCallItemSchema, raw, param);
        this.toolNames.set(call.call_id, call.name);
        return this.push('assistant', { type: 'tool_call', id: call.call_id, name: call.name, arguments: call.arguments });
      }
      case 'function_call_output':
        return this.toolOutput(raw, param);
      case 'reasoning':
        return this.reasoning(raw, param);
      case 'item_reference':
        // A reference names an item stored by OpenAI; router cannot fetch it, and no other format could use it.
        throw decodeError('item_reference input items are not supported; send the referenced items in full.', `${param}.type`);
      default:
        // Built-in tool call records (web_search_call, computer_call...) have no IR equivalent.
        noteDropped(this.request, `${param} (${type})`);
    }
  }

  private message(raw: Record<string, unknown>, param: string): void {
    const item = parseAt(messageItemSchema, raw, param);
    const parts = decodeContent(item.content, `${param}.content`);
    if (item.role === 'system' || item.role === 'developer') {
      const text = systemText(parts);
      if (text.length) this.messages.push({ role: 'system', parts: text, ...(item.role === 'developer' ? { developer: true } : {}) });
    }
    else if (item.role === 'assistant') for (const part of parts) this.push('assistant', part);
    else this.messages.push({ role: 'user', parts });
  }

  private toolOutput(raw: Record<string, unknown>, param: string): void {
    const item = parseAt(functionCallOutputItemSchema, raw, param);
    const name = this.toolNames.get(item.call_id);
    const part: ToolResultPart = {
      type: 'tool_result',
      toolCallId: item.call_id,
      ...(name ? { name } : {}),
      content: decodeToolOutput(item.output, `${param}.output`),
    };
    this.push('tool', part);
  }

  /** Summaries (or raw reasoning text) joined as the thinking text; `encrypted_content` is the signature. */
  private reasoning(raw: Record<string, unknown>, param: string): void {
    const item = parseAt(reasoningItemSchema, raw, param);
    const texts = item.summary?.length ? item.summary : (item.content ?? []);
    const text = texts.map((s) => s.text).join('\n\n');
    // A reasoning item with neither text nor encrypted content only makes sense as a stored reference.
    if (text === '' && !item.encrypted_content) return noteDropped(this.request, `${param} (reasoning without content)`);
    const part: IrPart = item.encrypted_content ? thinkingFromClient('openai-responses', text, item.encrypted_content) : { type: 'thinking', text };
    this.push('assistant', part);
  }
}

/**
 * Converts `instructions` + `input` into IR system parts and messages. System and developer messages that
 * open the input join `instructions` as the system prompt; later ones stay at their position (IR `system`
 * messages, util/system.ts); tool results get their tool's
 * name from the earlier `function_call` with the same `call_id` (Gemini needs it).
 */
export function decodeInput(
  instructions: string | null | undefined,
  input: string | Array<Record<string, unknown>> | undefined,
  request: IrRequest,
): DecodedInput {
  const builder = new InputBuilder(request);
  if (instructions) builder.system.push({ type: 'text', text: instructions });
  if (typeof input === 'string') builder.messages.push({ role: 'user', parts: [{ type: 'text', text: input }] });
  else (input ?? []).forEach((item, i) => builder.item(item, `input[${i}]`));
  const { system, messages } = splitLeadingSystem(builder.messages);
  return { system: [...builder.system, ...system], messages };
}
