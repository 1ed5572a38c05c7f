import type { IrPart } from '../../ir.js';
import { isRecord } from '../../util/json.js';
import { filePart, inlinePart } from './media.js';
import { thinkingFromClient } from '../../util/signature.js';

/** Picks the id of a function call: its own when Gemini sent one, else a generated one. */
export type CallIdSource = (explicit: string | undefined) => string;

const text = (v: unknown): string => (typeof v === 'string' ? v : '');

/**
 * Stable ids for function calls that have none (Gemini before v3 sends none): `call_<n>` in order of
 * appearance, with an optional prefix (a reply's `responseId`) so ids of different replies never collide;
 * Anthropic, for one, rejects a conversation that repeats a tool-use id.
 */
export function callIdCounter(prefix = ''): CallIdSource {
  let n = 0;
  const head = prefix ? `call_${prefix}_` : 'call_';
  return (explicit) => explicit || `${head}${n++}`;
}

/**
 * One part of a model turn as IR parts. `thought: true` parts are thinking; a thought signature on any
 * other part (Gemini puts them on function calls and on the last text part) becomes an empty thinking part
 * just before it, which the encoder folds back onto the following part. Signatures are Gemini's, unless a
 * client sends back one router wrapped for it (util/signature.ts); Gemini replies never hold those.
 */
export function decodeModelPart(part: Record<string, unknown>, callId: CallIdSource): IrPart[] {
  const signature = text(part.thoughtSignature);
  if (part.thought === true) {
    if (!text(part.text) && !signature) return [];
    return [signature ? thinkingFromClient('gemini', text(part.text), signature) : { type: 'thinking', text: text(part.text) }];
  }
  const out: IrPart[] = signature ? [thinkingFromClient('gemini', '', signature)] : [];
  if (text(part.text)) out.push({ type: 'text', text: text(part.text) });
  const call = part.functionCall;
  if (isRecord(call)) {
    const args = isRecord(call.args) ? call.args : {};
    out.push({ type: 'tool_call', id: callId(text(call.id) || undefined), name: text(call.name), arguments: JSON.stringify(args) });
  }
  if (isRecord(part.inlineData)) out.push(inlinePart(part.inlineData as { mimeType: string; data: string }));
  if (isRecord(part.fileData)) out.push(filePart(part.fileData as { mimeType?: string; fileUri: string }));
  return out;
}

/** All parts of a model turn. */
export function decodeModelParts(parts: unknown, callId: CallIdSource): IrPart[] {
  if (!Array.isArray(parts)) return [];
  return parts.filter(isRecord).flatMap((p) => decodeModelPart(p, callId));
}
