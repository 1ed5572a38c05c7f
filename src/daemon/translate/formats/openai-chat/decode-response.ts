import type { IrPart, IrResponse } from '../../ir.js';
import { CodecError } from '../../errors.js';
import { randomId } from '../../util/ids.js';
import { isRecord } from '../../util/json.js';
import { decodeChatFinish, decodeChatUsage } from './usage.js';

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function thinkingParts(message: Record<string, unknown>): IrPart[] {
  const blocks = Array.isArray(message.thinking_blocks) ? message.thinking_blocks.filter(isRecord) : [];
  if (blocks.length) {
    return blocks.map((b): IrPart =>
      b.type === 'redacted_thinking'
        ? { type: 'redacted_thinking', data: str(b.data) ?? '' }
        : { type: 'thinking', text: str(b.thinking) ?? '', ...(str(b.signature) ? { signature: str(b.signature), issuer: 'anthropic' as const } : {}) },
    );
  }
  // DeepSeek and vLLM use `reasoning_content`; OpenRouter and Ollama use `reasoning`.
  const text = str(message.reasoning_content) ?? str(message.reasoning);
  return text ? [{ type: 'thinking', text }] : [];
}

function toolCallParts(message: Record<string, unknown>): IrPart[] {
  const calls = Array.isArray(message.tool_calls) ? message.tool_calls.filter(isRecord) : [];
  return calls.map((c): IrPart => {
    const fn = isRecord(c.function) ? c.function : {};
    return { type: 'tool_call', id: str(c.id) || randomId('call_'), name: str(fn.name) ?? '', arguments: str(fn.arguments) ?? '' };
  });
}

/** The assistant message of a `chat.completion` as IR parts, in the order they were produced. */
export function decodeChatMessage(message: Record<string, unknown>): IrPart[] {
  const parts = thinkingParts(message);
  const content = str(message.content);
  if (content) parts.push({ type: 'text', text: content });
  const refusal = str(message.refusal);
  if (refusal) parts.push({ type: 'refusal', text: refusal });
  parts.push(...toolCallParts(message));
  return parts;
}

/**
 * `chat.completion` -> IR. Only the first choice is read (router never asks for more). A reply with tool
 * calls is a tool turn even when a server says `stop`, as some OpenAI-compatible servers do.
 */
export function decodeChatResponse(body: unknown): IrResponse {
  const choice = isRecord(body) && Array.isArray(body.choices) ? body.choices.find(isRecord) : undefined;
  if (!isRecord(body) || !choice) throw new CodecError(502, 'The upstream reply has no choices.');
  const parts = decodeChatMessage(isRecord(choice.message) ? choice.message : {});
  let finishReason = decodeChatFinish(choice.finish_reason);
  if (finishReason === 'stop' && parts.some((p) => p.type === 'tool_call')) finishReason = 'tool_calls';
  const response: IrResponse = { id: str(body.id) ?? '', model: str(body.model) ?? '', parts, finishReason };
  if (typeof body.created === 'number') response.created = body.created;
  const usage = decodeChatUsage(body.usage);
  if (usage) response.usage = usage;
  return response;
}
