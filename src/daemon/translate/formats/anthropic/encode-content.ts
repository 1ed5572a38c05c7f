import type { CacheMarker, DocumentPart, ImagePart, IrMessage, IrPart, IrRequest, MediaSource, ToolResultPart } from '../../ir.js';
import { noteDropped } from '../../util/dropped.js';
import { argumentsToObject } from '../../util/json.js';
import { signedBy } from '../../util/signature.js';

type Block = Record<string, unknown>;

/** IR cache marker -> `cache_control` (spread into a block). */
export function cacheControl(cache: CacheMarker | undefined): { cache_control?: CacheMarker } {
  return cache ? { cache_control: { ...cache } } : {};
}

function source(s: MediaSource): Block {
  switch (s.kind) {
    case 'base64':
      return { type: 'base64', media_type: s.mediaType, data: s.data };
    case 'url':
      return { type: 'url', url: s.url };
    case 'file':
      return { type: 'file', file_id: s.fileId };
    case 'text':
      return { type: 'text', media_type: 'text/plain', data: s.text };
  }
}

function image(part: ImagePart, request: IrRequest): Block | undefined {
  if (part.source.kind === 'text') {
    noteDropped(request, 'text image source');
    return undefined;
  }
  if (part.detail) noteDropped(request, 'image detail');
  return { type: 'image', source: source(part.source), ...cacheControl(part.cache) };
}

/** A document's title: its own, else the file name Chat Completions gave it. */
function documentBlock(part: DocumentPart): Block {
  const title = part.title ?? part.filename;
  return { type: 'document', source: source(part.source), ...(title ? { title } : {}), ...cacheControl(part.cache) };
}

function toolResult(part: ToolResultPart, request: IrRequest): Block {
  const only = part.content[0];
  const plain = part.content.length === 1 && only?.type === 'text' && !only.cache;
  const content = plain ? only.text : encodeParts(part.content, request);
  const block: Block = { type: 'tool_result', tool_use_id: part.toolCallId, content };
  if (part.isError) block.is_error = true;
  return { ...block, ...cacheControl(part.cache) };
}

/**
 * One IR part -> a content block; `undefined` when Messages cannot carry it: audio, and thinking without an
 * Anthropic signature (none, or another family's: util/signature.ts), which the API would reject.
 */
export function encodePart(part: IrPart, request: IrRequest): Block | undefined {
  switch (part.type) {
    case 'text':
      return { type: 'text', text: part.text, ...cacheControl(part.cache) };
    case 'refusal':
      return { type: 'text', text: part.text };
    case 'image':
      return image(part, request);
    case 'document':
      return documentBlock(part);
    case 'tool_call':
      return { type: 'tool_use', id: part.id, name: part.name, input: argumentsToObject(part.arguments), ...cacheControl(part.cache) };
    case 'tool_result':
      return toolResult(part, request);
    case 'thinking':
      if (signedBy(part, 'anthropic')) return { type: 'thinking', thinking: part.text, signature: part.signature };
      noteDropped(request, part.signature ? `thinking signed by ${part.issuer ?? 'an unknown issuer'}` : 'thinking without signature');
      return undefined;
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: part.data };
    case 'audio':
      noteDropped(request, 'audio input');
      return undefined;
  }
}

/** Parts -> blocks, skipping what `encodePart` cannot carry. */
export function encodeParts(parts: IrPart[], request: IrRequest): Block[] {
  return parts.flatMap((p): Block[] => {
    const block = encodePart(p, request);
    return block ? [block] : [];
  });
}

/** A lone uncached text part is sent as a string, the most compact form the API accepts. */
function content(parts: IrPart[], request: IrRequest): string | Block[] {
  const only = parts[0];
  if (parts.length === 1 && only?.type === 'text' && !only.cache) return only.text;
  return encodeParts(parts, request);
}

/**
 * IR messages -> Messages turns. `tool` messages become user turns of `tool_result` blocks, and adjacent
 * turns of one role are merged (tool results and the user's next words share one user turn, results first).
 * `system` messages stay `system` turns at their place: callers fold them first when the client did not ask
 * for the mid-conversation system beta (util/system.ts).
 */
export function encodeTurns(messages: IrMessage[], request: IrRequest): Block[] {
  const out: Array<{ role: 'user' | 'assistant' | 'system'; parts: IrPart[] }> = [];
  for (const m of messages) {
    const role = m.role === 'assistant' || m.role === 'system' ? m.role : 'user';
    const last = out[out.length - 1];
    if (last?.role === role && role !== 'system') last.parts.push(...m.parts);
    else out.push({ role, parts: [...m.parts] });
  }
  return out.map((t) => ({ role: t.role, content: content(t.parts, request) }));
}
