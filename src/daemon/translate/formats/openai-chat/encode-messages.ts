import type { DocumentPart, ImagePart, IrMessage, IrPart, IrRequest, TextPart, ToolResultPart } from '../../ir.js';
import { noteDropped } from '../../util/dropped.js';
import { dataUrl } from '../../util/media.js';
import { systemText } from '../../util/system.js';

type ChatPart = Record<string, unknown>;
type ChatMessageOut = Record<string, unknown>;

function imagePart(part: ImagePart, request: IrRequest): ChatPart | undefined {
  const s = part.source;
  const detail = part.detail ? { detail: part.detail } : {};
  if (s.kind === 'url') return { type: 'image_url', image_url: { url: s.url, ...detail } };
  if (s.kind === 'base64') return { type: 'image_url', image_url: { url: dataUrl(s.mediaType, s.data), ...detail } };
  noteDropped(request, `image source ${s.kind}`);
  return undefined;
}

/** Documents become `file` parts; plain-text documents become text, which Chat Completions reads best. */
function documentPart(part: DocumentPart, request: IrRequest): ChatPart | undefined {
  const s = part.source;
  const filename = part.filename ?? part.title;
  const name = filename ? { filename } : {};
  if (s.kind === 'file') return { type: 'file', file: { file_id: s.fileId, ...name } };
  if (s.kind === 'base64') return { type: 'file', file: { file_data: dataUrl(s.mediaType, s.data), ...name } };
  if (s.kind === 'text') return { type: 'text', text: s.text };
  noteDropped(request, 'document url (Chat Completions takes files only as data or file ids)');
  return undefined;
}

/** One user content part; parts Chat Completions cannot hold are noted and skipped. */
export function encodeUserPart(part: IrPart, request: IrRequest): ChatPart | undefined {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text };
    case 'image':
      return imagePart(part, request);
    case 'document':
      return documentPart(part, request);
    case 'audio':
      return { type: 'input_audio', input_audio: { data: part.data, format: part.format } };
    default:
      noteDropped(request, `${part.type} in a user message`);
      return undefined;
  }
}

/** A lone text part is sent as a plain string, the form every OpenAI-compatible server accepts. */
function userContent(parts: IrPart[], request: IrRequest): string | ChatPart[] {
  const only = parts[0];
  if (parts.length === 1 && only?.type === 'text') return only.text;
  return parts.flatMap((p): ChatPart[] => {
    const encoded = encodeUserPart(p, request);
    return encoded ? [encoded] : [];
  });
}

/** Assistant turn: text joined into `content`; thinking is not sent (OpenAI rejects unknown fields). */
function assistantMessage(message: IrMessage, request: IrRequest): ChatMessageOut {
  const text = message.parts.flatMap((p) => (p.type === 'text' ? [p.text] : []));
  const refusal = message.parts.flatMap((p) => (p.type === 'refusal' ? [p.text] : []));
  const calls = message.parts.flatMap((p) => (p.type === 'tool_call' ? [p] : []));
  if (message.parts.some((p) => p.type === 'thinking' || p.type === 'redacted_thinking')) noteDropped(request, 'assistant thinking');
  const out: ChatMessageOut = { role: 'assistant', content: text.length ? text.join('') : null };
  if (refusal.length) out.refusal = refusal.join('');
  if (calls.length) out.tool_calls = calls.map((c) => ({ id: c.id, type: 'function', function: { name: c.name, arguments: c.arguments } }));
  if (message.name) out.name = message.name;
  return out;
}

/** One `tool` message per result. Only text fits in a tool message; `is_error` has no field. */
function toolMessages(message: IrMessage, request: IrRequest): ChatMessageOut[] {
  return message.parts.flatMap((p) => {
    if (p.type !== 'tool_result') return [];
    return [{ role: 'tool', tool_call_id: p.toolCallId, content: toolContent(p, request) }];
  });
}

function toolContent(part: ToolResultPart, request: IrRequest): string | TextPart[] {
  if (part.isError) noteDropped(request, 'tool_result.is_error');
  const texts = part.content.flatMap((c) => (c.type === 'text' ? [{ type: 'text' as const, text: c.text }] : []));
  if (texts.length < part.content.length) noteDropped(request, 'non-text tool result content');
  const only = texts[0];
  if (texts.length === 1 && only) return only.text;
  return texts.length ? texts : '';
}

/** System text as one `system` message (a string when it is a single part). */
export function systemMessage(system: TextPart[]): ChatMessageOut[] {
  if (!system.length) return [];
  const only = system[0];
  if (system.length === 1 && only) return [{ role: 'system', content: only.text }];
  return [{ role: 'system', content: system.map((p) => ({ type: 'text', text: p.text })) }];
}

/**
 * A system message later in the conversation, at its place. A `developer` message keeps that role only for
 * servers that know it (`developerRole`, OpenAI's own API); other Chat Completions servers get `system`,
 * since chat templates of open models reject roles they do not know.
 */
function positionalSystem(message: IrMessage, developerRole: boolean): ChatMessageOut {
  const text = systemText(message.parts);
  const only = text[0];
  const content = text.length === 1 && only ? only.text : text.map((p) => ({ type: 'text', text: p.text }));
  return { role: message.developer && developerRole ? 'developer' : 'system', content };
}

/** IR conversation -> Chat Completions `messages`. */
export function encodeMessages(request: IrRequest, developerRole = true): ChatMessageOut[] {
  const out = systemMessage(request.system);
  for (const m of request.messages) {
    if (m.role === 'system') out.push(positionalSystem(m, developerRole));
    else if (m.role === 'assistant') out.push(assistantMessage(m, request));
    else if (m.role === 'tool') out.push(...toolMessages(m, request));
    else out.push({ role: 'user', content: userContent(m.parts, request), ...(m.name ? { name: m.name } : {}) });
  }
  return out;
}
