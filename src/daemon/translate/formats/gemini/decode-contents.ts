import type { DocumentPart, ImagePart, IrMessage, IrPart, IrRequest, TextPart, ToolResultPart } from '../../ir.js';
import { noteDropped } from '../../util/dropped.js';
import { isRecord } from '../../util/json.js';
import { callIdCounter, decodeModelParts, type CallIdSource } from './decode-parts.js';
import { filePart, inlinePart } from './media.js';
import type { GeminiContent, GeminiPart } from './schema.js';

type FunctionResponse = NonNullable<GeminiPart['functionResponse']>;
type ResultContent = ToolResultPart['content'];

/**
 * A function response's payload as tool-result content. Gemini documents `{output}` and `{error}` as the
 * conventional keys; those unwrap to their text (an `error` marks the result as an error), anything else
 * travels as JSON text. Multimodal responses (`parts` with media) add images/documents.
 */
function resultContent(fr: FunctionResponse): { content: ResultContent; isError: boolean } {
  const response = fr.response ?? {};
  const keys = Object.keys(response);
  const only = keys.length === 1 ? keys[0] : undefined;
  const value = only === 'output' || only === 'error' ? response[only] : response;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  const content: ResultContent = [{ type: 'text', text }];
  for (const p of fr.parts ?? []) {
    const media = p.inlineData ? inlinePart(p.inlineData) : p.fileData ? filePart(p.fileData) : undefined;
    if (media && media.type !== 'audio') content.push(media as ImagePart | DocumentPart);
  }
  return { content, isError: only === 'error' };
}

/**
 * Matches function responses to the calls they answer: by id when the client echoed one, else the oldest
 * unanswered call of the same name (Gemini answers calls in order, by name).
 */
class CallLedger {
  private readonly pending: Array<{ id: string; name: string }> = [];
  readonly callId: CallIdSource = callIdCounter();

  called(parts: IrPart[]): void {
    for (const p of parts) if (p.type === 'tool_call') this.pending.push({ id: p.id, name: p.name });
  }

  answer(fr: FunctionResponse): string {
    const at = this.pending.findIndex((c) => (fr.id ? c.id === fr.id : c.name === fr.name));
    if (at < 0) return fr.id || this.callId(undefined);
    const [call] = this.pending.splice(at, 1);
    return call?.id ?? '';
  }
}

function userPart(part: GeminiPart, param: string, request: IrRequest): IrPart | undefined {
  if (part.text !== undefined && part.thought !== true) return part.text === '' ? undefined : { type: 'text', text: part.text };
  if (part.inlineData) return inlinePart(part.inlineData);
  if (part.fileData) return filePart(part.fileData);
  noteDropped(request, param);
  return undefined;
}

/** A user turn: function responses become one `tool` message (first), the rest one `user` message. */
function userTurn(content: GeminiContent, param: string, ledger: CallLedger, request: IrRequest): IrMessage[] {
  const results: ToolResultPart[] = [];
  const parts: IrPart[] = [];
  content.parts.forEach((part, i) => {
    const fr = part.functionResponse;
    if (!fr) {
      const decoded = userPart(part, `${param}.parts[${i}]`, request);
      if (decoded) parts.push(decoded);
      return;
    }
    const { content: resultParts, isError } = resultContent(fr);
    results.push({ type: 'tool_result', toolCallId: ledger.answer(fr), name: fr.name, content: resultParts, ...(isError ? { isError } : {}) });
  });
  const out: IrMessage[] = [];
  if (results.length) out.push({ role: 'tool', parts: results });
  if (parts.length) out.push({ role: 'user', parts });
  return out;
}

/** Gemini `contents` as IR messages (function calls without ids get `call_<n>`, see CallLedger). */
export function decodeContents(contents: GeminiContent[], request: IrRequest): IrMessage[] {
  const ledger = new CallLedger();
  const messages: IrMessage[] = [];
  contents.forEach((content, i) => {
    if (content.role !== 'model') return messages.push(...userTurn(content, `contents[${i}]`, ledger, request));
    const parts = decodeModelParts(content.parts.filter(isRecord), ledger.callId);
    ledger.called(parts);
    if (parts.length) messages.push({ role: 'assistant', parts });
  });
  return messages;
}

/** `systemInstruction` (a content, or a plain string as the SDKs accept) as IR system parts. */
export function decodeSystem(system: string | { parts: GeminiPart[] } | undefined): TextPart[] {
  if (system === undefined) return [];
  if (typeof system === 'string') return system ? [{ type: 'text', text: system }] : [];
  return system.parts.flatMap((p): TextPart[] => (p.text ? [{ type: 'text', text: p.text }] : []));
}
