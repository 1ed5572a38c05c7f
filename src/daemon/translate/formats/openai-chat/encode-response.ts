import type { EncodeOptions } from '../../codec.js';
import type { IrPart, IrRequest, IrResponse } from '../../ir.js';
import { idFactory, nowSeconds, replyModel } from '../../util/ids.js';
import { encodeChatFinish, encodeChatUsage } from './usage.js';
import { signatureForClient } from '../../util/signature.js';

/** The assistant message of a `chat.completion`, with the reasoning extensions OpenAI-compatible APIs use. */
export interface ChatReplyMessage {
  role: 'assistant';
  content: string | null;
  refusal: string | null;
  reasoning_content?: string;
  thinking_blocks?: Array<Record<string, string>>;
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>;
}

/**
 * Thinking for an OpenAI-format client: `reasoning_content` (DeepSeek's field, read by most OpenAI-compatible
 * clients) and, when there is a signature or redacted block to hand back later, LiteLLM's `thinking_blocks`.
 */
function addThinking(message: ChatReplyMessage, parts: IrPart[]): void {
  const thinking = parts.filter((p) => p.type === 'thinking' || p.type === 'redacted_thinking');
  const text = thinking.map((p) => (p.type === 'thinking' ? p.text : '')).join('');
  if (text) message.reasoning_content = text;
  if (!thinking.some((p) => p.type === 'redacted_thinking' || p.signature)) return;
  message.thinking_blocks = thinking.map((p): Record<string, string> => {
    if (p.type === 'redacted_thinking') return { type: 'redacted_thinking', data: p.data };
    const block: Record<string, string> = { type: 'thinking', thinking: p.type === 'thinking' ? p.text : '' };
    if (p.type === 'thinking' && p.signature) block.signature = signatureForClient('openai-chat', p.issuer, p.signature);
    return block;
  });
}

/** Builds the assistant message from IR parts (text parts are concatenated into `content`). */
export function chatReplyMessage(parts: IrPart[]): ChatReplyMessage {
  const text = parts.flatMap((p) => (p.type === 'text' ? [p.text] : []));
  const refusal = parts.flatMap((p) => (p.type === 'refusal' ? [p.text] : []));
  const message: ChatReplyMessage = {
    role: 'assistant',
    content: text.length ? text.join('') : null,
    refusal: refusal.length ? refusal.join('') : null,
  };
  addThinking(message, parts);
  const calls = parts.flatMap((p) => (p.type === 'tool_call' ? [p] : []));
  if (calls.length) {
    message.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  }
  return message;
}

/**
 * IR reply -> `chat.completion`. The id and `created` are router's own (the client talks to router); the
 * model is the one the upstream reported (else the one asked for).
 */
export function encodeChatResponse(response: IrResponse, request: IrRequest, options?: EncodeOptions): Record<string, unknown> {
  const body: Record<string, unknown> = {
    id: idFactory(options)('chatcmpl-'),
    object: 'chat.completion',
    created: nowSeconds(options),
    model: replyModel(response.model, request),
    choices: [{ index: 0, message: chatReplyMessage(response.parts), logprobs: null, finish_reason: encodeChatFinish(response.finishReason) }],
  };
  if (response.usage) body.usage = encodeChatUsage(response.usage);
  return body;
}
