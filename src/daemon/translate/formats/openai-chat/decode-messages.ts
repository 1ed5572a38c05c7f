import type { IrMessage, IrPart, TextPart, ToolResultPart } from '../../ir.js';
import { decodeError } from '../../errors.js';
import { cacheMarkerOf, markLastPart } from '../../util/cache.js';
import { sourceFromUrl } from '../../util/media.js';
import { splitLeadingSystem } from '../../util/system.js';
import type { ChatAssistantMessage, ChatMessage, ChatThinkingBlock, ChatUserPart } from './schema.js';
import { thinkingFromClient } from '../../util/signature.js';

/** The conversation of a Chat Completions request, split the IR way: system text apart from the turns. */
export interface DecodedConversation {
  system: TextPart[];
  messages: IrMessage[];
}

/** Text of a `string | text part[]` content as IR text parts (empty strings dropped; cache markers kept). */
export function textParts(content: string | Array<{ text: string; cache_control?: unknown }>): TextPart[] {
  const parts = typeof content === 'string' ? [{ text: content }] : content;
  return parts.filter((p) => p.text !== '').map((p) => ({ type: 'text', text: p.text, ...cacheMarkerOf(p.cache_control) }));
}

/** One user content part. A file part needs `file_id` or `file_data`. */
export function decodeUserPart(part: ChatUserPart, param: string): IrPart {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text, ...cacheMarkerOf(part.cache_control) };
    case 'image_url': {
      const detail = part.image_url.detail ?? undefined;
      return { type: 'image', source: sourceFromUrl(part.image_url.url, 'image/png'), ...(detail ? { detail } : {}), ...cacheMarkerOf(part.cache_control) };
    }
    case 'input_audio':
      return { type: 'audio', data: part.input_audio.data, format: part.input_audio.format };
    case 'file': {
      const { file_id, file_data, filename } = part.file;
      const flags = { ...(filename ? { filename } : {}), ...cacheMarkerOf(part.cache_control) };
      if (file_id) return { type: 'document', source: { kind: 'file', fileId: file_id }, ...flags };
      if (file_data) return { type: 'document', source: sourceFromUrl(file_data, 'application/pdf'), ...flags };
      throw decodeError("A file content part needs 'file_id' or 'file_data'.", `${param}.file`);
    }
  }
}

function thinkingFromBlocks(blocks: ChatThinkingBlock[]): IrPart[] {
  return blocks.map((b) => {
    if (b.type !== 'thinking') return { type: 'redacted_thinking', data: b.data };
    return b.signature ? thinkingFromClient('openai-chat', b.thinking, b.signature) : { type: 'thinking', text: b.thinking };
  });
}

/** Assistant turn: thinking first (it came first), then text, refusal, tool calls. */
export function decodeAssistant(message: ChatAssistantMessage): IrPart[] {
  const parts: IrPart[] = [];
  if (message.thinking_blocks?.length) parts.push(...thinkingFromBlocks(message.thinking_blocks));
  else {
    const reasoning = message.reasoning_content ?? message.reasoning;
    if (reasoning) parts.push({ type: 'thinking', text: reasoning });
  }
  const content = message.content ?? [];
  for (const p of typeof content === 'string' ? [{ type: 'text' as const, text: content }] : content) {
    if (p.type === 'text' && p.text !== '') parts.push({ type: 'text', text: p.text, ...cacheMarkerOf(p.cache_control) });
    if (p.type === 'refusal') parts.push({ type: 'refusal', text: p.refusal });
  }
  if (message.refusal) parts.push({ type: 'refusal', text: message.refusal });
  for (const call of message.tool_calls ?? []) {
    parts.push({ type: 'tool_call', id: call.id, name: call.function.name, arguments: call.function.arguments });
  }
  return parts;
}

function userParts(content: string | ChatUserPart[], param: string): IrPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return content.map((p, i) => decodeUserPart(p, `${param}[${i}]`));
}

/**
 * Converts `messages`. System and developer messages that open the conversation are its system prompt;
 * later ones stay `system` messages at their position (util/system.ts); consecutive
 * `tool` messages become one IR `tool` message; tool results get their tool's name from the assistant
 * call with the same id, since Chat Completions does not repeat it and Gemini needs it.
 */
export function decodeMessages(input: ChatMessage[]): DecodedConversation {
  const messages: IrMessage[] = [];
  const toolNames = new Map<string, string>();
  input.forEach((m, i) => {
    const param = `messages[${i}].content`;
    const name = 'name' in m && typeof m.name === 'string' && m.name ? { name: m.name } : {};
    if (m.role === 'system' || m.role === 'developer') {
      const parts = textParts(m.content);
      markLastPart(parts, m.cache_control);
      if (parts.length) messages.push({ role: 'system', parts, ...(m.role === 'developer' ? { developer: true } : {}) });
    } else if (m.role === 'user') {
      const parts = userParts(m.content, param);
      markLastPart(parts, m.cache_control);
      messages.push({ role: 'user', parts, ...name });
    } else if (m.role === 'assistant') {
      for (const c of m.tool_calls ?? []) toolNames.set(c.id, c.function.name);
      const parts = decodeAssistant(m);
      markLastPart(parts, m.cache_control);
      messages.push({ role: 'assistant', parts, ...name });
    } else if (m.role === 'tool') {
      const part = toolResult(m.tool_call_id, m.content, toolNames);
      markLastPart([part], m.cache_control);
      appendToolResult(messages, part);
    }
  });
  return splitLeadingSystem(messages);
}

function toolResult(id: string, content: string | Array<{ text: string; cache_control?: unknown }>, names: Map<string, string>): ToolResultPart {
  const name = names.get(id);
  return { type: 'tool_result', toolCallId: id, ...(name ? { name } : {}), content: textParts(content) };
}

function appendToolResult(messages: IrMessage[], part: ToolResultPart): void {
  const last = messages[messages.length - 1];
  if (last?.role === 'tool') last.parts.push(part);
  else messages.push({ role: 'tool', parts: [part] });
}
