import type { DocumentPart, ImagePart, IrMessage, IrPart, ThinkingPart, ToolResultPart } from '../../ir.js';
import { dataUrl } from '../../util/media.js';
import { systemText } from '../../util/system.js';
import { signedBy } from '../../util/signature.js';

type Item = Record<string, unknown>;

function imageUrl(part: ImagePart): Item {
  const s = part.source;
  const detail = part.detail ?? 'auto';
  if (s.kind === 'file') return { type: 'input_image', file_id: s.fileId, detail };
  const url = s.kind === 'base64' ? dataUrl(s.mediaType, s.data) : s.kind === 'url' ? s.url : dataUrl(s.mediaType ?? 'text/plain', Buffer.from(s.text).toString('base64'));
  return { type: 'input_image', image_url: url, detail };
}

/** The API requires a filename with `file_data`; one is made up from the media type when IR has none. */
function inputFile(part: DocumentPart): Item {
  const s = part.source;
  if (s.kind === 'text') return { type: 'input_text', text: s.text };
  if (s.kind === 'file') return { type: 'input_file', file_id: s.fileId };
  if (s.kind === 'url') return { type: 'input_file', file_url: s.url };
  const filename = part.filename ?? part.title ?? (s.mediaType === 'application/pdf' ? 'document.pdf' : 'document');
  return { type: 'input_file', filename, file_data: dataUrl(s.mediaType, s.data) };
}

/** One user-side content part; parts a user turn cannot hold (tool calls, thinking) yield nothing. */
function inputPart(part: IrPart): Item | undefined {
  switch (part.type) {
    case 'text':
      return { type: 'input_text', text: part.text };
    case 'image':
      return imageUrl(part);
    case 'document':
      return inputFile(part);
    case 'audio':
      return { type: 'input_audio', input_audio: { data: part.data, format: part.format } };
    default:
      return undefined;
  }
}

/** Text-only results travel as a string (what every client sends); images need the content-list form. */
function toolOutput(part: ToolResultPart): Item {
  const onlyText = part.content.every((c) => c.type === 'text');
  const output = onlyText
    ? part.content.map((c) => (c.type === 'text' ? c.text : '')).join('\n')
    : part.content.map((c) => inputPart(c)).filter((c) => c !== undefined);
  return { type: 'function_call_output', call_id: part.toolCallId, output };
}

/**
 * A thinking part replays as a reasoning item only when it carries `encrypted_content` OpenAI issued (its
 * signature; another family's would be rejected, util/signature.ts).
 * Item ids are never sent: ids router hands to clients are its own, and OpenAI answers an unknown id with
 * 404 "item not found"; the encrypted content alone is enough for a stateless replay.
 */
function reasoningItem(part: ThinkingPart): Item | undefined {
  if (!signedBy(part, 'openai')) return undefined;
  const summary = part.text ? [{ type: 'summary_text', text: part.text }] : [];
  return { type: 'reasoning', summary, encrypted_content: part.signature };
}

/** An assistant turn: runs of text/refusal become one message item; calls and reasoning their own items. */
function assistantItems(message: IrMessage): Item[] {
  const items: Item[] = [];
  let content: Item[] = [];
  const flush = () => {
    if (content.length) items.push({ type: 'message', role: 'assistant', content });
    content = [];
  };
  for (const part of message.parts) {
    if (part.type === 'text') content.push({ type: 'output_text', text: part.text });
    else if (part.type === 'refusal') content.push({ type: 'refusal', refusal: part.text });
    else if (part.type === 'tool_call') {
      flush();
      items.push({ type: 'function_call', call_id: part.id, name: part.name, arguments: part.arguments });
    } else if (part.type === 'thinking') {
      flush();
      const item = reasoningItem(part);
      if (item) items.push(item);
    }
    // redacted_thinking has no Responses form (it is Anthropic's own encrypted block): dropped.
  }
  flush();
  return items;
}

/** IR messages as Responses `input` items. */
export function encodeInput(messages: IrMessage[]): Item[] {
  const items: Item[] = [];
  for (const message of messages) {
    if (message.role === 'system') {
      const content = systemText(message.parts).map((p) => ({ type: 'input_text', text: p.text }));
      items.push({ type: 'message', role: message.developer ? 'developer' : 'system', content });
    } else if (message.role === 'assistant') items.push(...assistantItems(message));
    else if (message.role === 'tool') {
      for (const part of message.parts) if (part.type === 'tool_result') items.push(toolOutput(part));
    } else {
      const content = message.parts.map(inputPart).filter((p) => p !== undefined);
      if (content.length) items.push({ type: 'message', role: 'user', content });
    }
  }
  return items;
}
