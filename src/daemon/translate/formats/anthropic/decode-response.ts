import type { IrPart, IrResponse } from '../../ir.js';
import { CodecError } from '../../errors.js';
import { isRecord } from '../../util/json.js';
import { completeUsage, decodeAnthropicUsage, decodeStopReason } from './usage.js';

function str(value: unknown): string {
  return typeof value === 'string' ? value : '';
}

/**
 * One reply content block -> IR part. Server tool blocks (`server_tool_use`, `web_search_tool_result`...)
 * have no IR form and are skipped: their effect is already in the text that follows them.
 */
export function replyPart(block: Record<string, unknown>): IrPart | undefined {
  switch (block.type) {
    case 'text':
      return str(block.text) ? { type: 'text', text: str(block.text) } : undefined;
    case 'thinking':
      return { type: 'thinking', text: str(block.thinking), ...(str(block.signature) ? { signature: str(block.signature), issuer: 'anthropic' } : {}) };
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: str(block.data) };
    case 'tool_use':
      return { type: 'tool_call', id: str(block.id), name: str(block.name), arguments: JSON.stringify(block.input ?? {}) };
    default:
      return undefined;
  }
}

/** Messages `message` -> IR reply. */
export function decodeMessagesResponse(body: unknown): IrResponse {
  if (!isRecord(body) || !Array.isArray(body.content)) throw new CodecError(502, 'The upstream reply is not a message.');
  const parts = body.content.filter(isRecord).flatMap((b): IrPart[] => {
    const part = replyPart(b);
    return part ? [part] : [];
  });
  const response: IrResponse = { id: str(body.id), model: str(body.model), parts, finishReason: decodeStopReason(body.stop_reason) };
  if (str(body.stop_sequence)) response.stopSequence = str(body.stop_sequence);
  if (isRecord(body.usage)) response.usage = completeUsage(decodeAnthropicUsage(body.usage));
  return response;
}
