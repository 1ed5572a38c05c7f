import type { IrPart } from '../../ir.js';
import { signatureForClient } from '../../util/signature.js';

/** One output item of a response object. */
export type OutputItem = Record<string, unknown> & { type: string; id: string };

/** A message content part: `output_text` (with the `annotations` the SDK expects) or `refusal`. */
export function textContent(text: string): Record<string, unknown> {
  return { type: 'output_text', text, annotations: [] };
}

/** A refusal content part. */
export function refusalContent(text: string): Record<string, unknown> {
  return { type: 'refusal', refusal: text };
}

/** A reasoning item; the thinking text is its one summary, the signature its `encrypted_content`. */
export function reasoningItem(id: string, text: string, signature: string | undefined): OutputItem {
  return {
    id,
    type: 'reasoning',
    summary: text ? [{ type: 'summary_text', text }] : [],
    ...(signature ? { encrypted_content: signature } : {}),
  };
}

/** A finished function-call item. */
export function functionCallItem(id: string, callId: string, name: string, args: string, status = 'completed'): OutputItem {
  return { id, type: 'function_call', status, arguments: args, call_id: callId, name };
}

/** An assistant message item. */
export function messageItem(id: string, content: Array<Record<string, unknown>>, status: string): OutputItem {
  return { id, type: 'message', status, role: 'assistant', content };
}

/**
 * IR reply parts as output items, in order: consecutive text and refusal parts share one message item;
 * thinking (and Anthropic's redacted thinking, as encrypted content) becomes reasoning items; tool calls
 * become function-call items. Parts a Responses reply cannot hold (images, audio) are left out.
 */
export function outputItems(parts: IrPart[], messageStatus: string, newId: (prefix: string) => string): OutputItem[] {
  const items: OutputItem[] = [];
  let message: OutputItem | undefined;
  const content = (): Array<Record<string, unknown>> => {
    message ??= messageItem(newId('msg_'), [], messageStatus);
    if (!items.includes(message)) items.push(message);
    return message.content as Array<Record<string, unknown>>;
  };
  for (const part of parts) {
    if (part.type === 'text') content().push(textContent(part.text));
    else if (part.type === 'refusal') content().push(refusalContent(part.text));
    else {
      message = undefined;
      const sig = part.type === 'thinking' && part.signature ? signatureForClient('openai-responses', part.issuer, part.signature) : undefined;
      if (part.type === 'thinking') items.push(reasoningItem(newId('rs_'), part.text, sig));
      else if (part.type === 'redacted_thinking') items.push(reasoningItem(newId('rs_'), '', signatureForClient('openai-responses', 'anthropic', part.data, true)));
      else if (part.type === 'tool_call') items.push(functionCallItem(newId('fc_'), part.id, part.name, part.arguments));
    }
  }
  return items;
}
