import type { IrPart, IrResponse } from '../../ir.js';
import { CodecError } from '../../errors.js';
import { isRecord } from '../../util/json.js';
import { decodeUsage, finishFor, statusForErrorCode, type ResponsesUsage } from './usage.js';

type Item = Record<string, unknown>;

function texts(list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.flatMap((s) => (isRecord(s) && typeof s.text === 'string' ? [s.text] : []));
}

/** A reasoning item as a thinking part: summaries (or raw reasoning text) joined, encrypted content as signature. */
export function reasoningPart(item: Item): IrPart | undefined {
  const summary = texts(item.summary);
  const text = (summary.length ? summary : texts(item.content)).join('\n\n');
  const signature = typeof item.encrypted_content === 'string' ? item.encrypted_content : undefined;
  if (!text && !signature) return undefined;
  return { type: 'thinking', text, ...(signature ? { signature, issuer: 'openai' as const } : {}) };
}

function messageParts(item: Item): IrPart[] {
  if (!Array.isArray(item.content)) return [];
  return item.content.flatMap((c): IrPart[] => {
    if (!isRecord(c)) return [];
    if (c.type === 'output_text' && typeof c.text === 'string' && c.text !== '') return [{ type: 'text', text: c.text }];
    if (c.type === 'refusal' && typeof c.refusal === 'string') return [{ type: 'refusal', text: c.refusal }];
    return [];
  });
}

/** One output item as IR parts. Built-in tool records (web_search_call...) have no IR form and are skipped. */
function itemParts(item: Item): IrPart[] {
  switch (item.type) {
    case 'message':
      return messageParts(item);
    case 'reasoning': {
      const part = reasoningPart(item);
      return part ? [part] : [];
    }
    case 'function_call':
      return [{ type: 'tool_call', id: String(item.call_id ?? item.id ?? ''), name: String(item.name ?? ''), arguments: String(item.arguments ?? '') }];
    default:
      return [];
  }
}

/** Response object (non-streaming reply of a Responses upstream) -> IR. A `failed` response is an error. */
export function decodeResponsesResponse(body: unknown): IrResponse {
  if (!isRecord(body)) throw new CodecError(502, 'The upstream returned a reply that is not a response object.');
  if (body.status === 'failed' && isRecord(body.error)) {
    const message = typeof body.error.message === 'string' ? body.error.message : 'The upstream response failed.';
    throw new CodecError(statusForErrorCode(body.error.code), message, { code: String(body.error.code ?? 'upstream_error') });
  }
  const items = Array.isArray(body.output) ? body.output.filter(isRecord) : [];
  const parts = items.flatMap(itemParts);
  const incomplete = isRecord(body.incomplete_details) ? body.incomplete_details.reason : undefined;
  const response: IrResponse = {
    id: typeof body.id === 'string' ? body.id : '',
    model: typeof body.model === 'string' ? body.model : '',
    parts,
    finishReason: finishFor(body.status, incomplete, parts.some((p) => p.type === 'tool_call')),
  };
  if (typeof body.created_at === 'number') response.created = body.created_at;
  if (isRecord(body.usage)) response.usage = decodeUsage(body.usage as ResponsesUsage);
  return response;
}
