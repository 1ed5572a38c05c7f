import type { EncodeOptions } from '../../codec.js';
import type { IrFinishReason, IrPart, IrRequest, IrResponse } from '../../ir.js';
import { idFactory, replyModel } from '../../util/ids.js';
import { signatureForClient } from '../../util/signature.js';
import { argumentsToObject } from '../../util/json.js';
import { encodeAnthropicUsage, encodeStopReason, type AnthropicStopReason } from './usage.js';

type Block = Record<string, unknown>;

/** One reply part -> a Messages content block (refusal text is text: Messages has no refusal block). */
function replyBlock(part: IrPart): Block | undefined {
  switch (part.type) {
    case 'text':
    case 'refusal':
      return part.text ? { type: 'text', text: part.text } : undefined;
    case 'thinking':
      return { type: 'thinking', thinking: part.text, signature: part.signature ? signatureForClient('anthropic', part.issuer, part.signature) : '' };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: part.data };
    case 'tool_call':
      return { type: 'tool_use', id: part.id, name: part.name, input: argumentsToObject(part.arguments) };
    default:
      return undefined;
  }
}

/**
 * `stop_reason` for a finished reply: a turn that called tools always ends with `tool_use`, and one that
 * carried an OpenAI-style refusal ends with `refusal` (its text is sent as a text block).
 */
export function replyStopReason(reason: IrFinishReason, calledTools: boolean, refused = false): AnthropicStopReason {
  const mapped = encodeStopReason(reason);
  if (mapped !== 'end_turn') return mapped;
  if (calledTools) return 'tool_use';
  return refused ? 'refusal' : mapped;
}

/** IR reply -> Messages `message`. The id is router's own; the model is the one the upstream reported (else the one asked for). */
export function encodeMessagesResponse(response: IrResponse, request: IrRequest, options?: EncodeOptions): Record<string, unknown> {
  const content = response.parts.flatMap((p): Block[] => {
    const block = replyBlock(p);
    return block ? [block] : [];
  });
  const calledTools = response.parts.some((p) => p.type === 'tool_call');
  const refused = response.parts.some((p) => p.type === 'refusal');
  const stopReason = replyStopReason(response.finishReason, calledTools, refused);
  return {
    id: idFactory(options)('msg_'),
    type: 'message',
    role: 'assistant',
    model: replyModel(response.model, request),
    content,
    stop_reason: stopReason,
    stop_sequence: stopReason === 'stop_sequence' ? (response.stopSequence ?? null) : null,
    usage: encodeAnthropicUsage(response.usage ?? {}),
  };
}
