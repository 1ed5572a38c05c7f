import type { CacheMarker, DocumentPart, ImagePart, IrMessage, IrPart, IrRequest, MediaSource, TextPart } from '../../ir.js';
import { noteDropped } from '../../util/dropped.js';
import { isRecord } from '../../util/json.js';
import { thinkingFromClient } from '../../util/signature.js';
import { parseAt } from '../../util/validate.js';
import { blockSchemas, type AnthropicBlock, type AnthropicCacheControl } from './schema.js';

type Source = AnthropicImageSource;
type AnthropicImageSource = Extract<AnthropicBlock, { type: 'image' }>['source'];

/** `cache_control` -> IR cache marker (spread into a part). */
export function cacheOf(control: AnthropicCacheControl): { cache?: CacheMarker } {
  if (!control) return {};
  return { cache: { type: 'ephemeral', ...(control.ttl ? { ttl: control.ttl } : {}) } };
}

function mediaSource(source: Source): MediaSource {
  switch (source.type) {
    case 'base64':
      return { kind: 'base64', mediaType: source.media_type, data: source.data };
    case 'url':
      return { kind: 'url', url: source.url };
    case 'file':
      return { kind: 'file', fileId: source.file_id };
    case 'text':
      return { kind: 'text', text: source.data, ...(source.media_type ? { mediaType: source.media_type } : {}) };
    case 'content': {
      // Custom-content documents: their text blocks, joined, are what the model reads.
      const blocks = typeof source.content === 'string' ? [{ type: 'text', text: source.content }] : source.content;
      const text = blocks.map((b) => (typeof b.text === 'string' ? b.text : '')).join('\n');
      return { kind: 'text', mediaType: 'text/plain', text };
    }
  }
}

type ResultContent = TextPart | ImagePart | DocumentPart;

function resultContent(content: unknown, param: string, request: IrRequest): ResultContent[] {
  if (content == null) return [];
  if (typeof content === 'string') return content ? [{ type: 'text', text: content }] : [];
  if (!Array.isArray(content)) return [];
  return content.flatMap((block, i): ResultContent[] => {
    const part = decodeBlock(block, `${param}[${i}]`, request, new Map());
    if (part && (part.type === 'text' || part.type === 'image' || part.type === 'document')) return [part];
    return [];
  });
}

/**
 * One content block -> IR part; `undefined` for block types the IR has no place for (server tool calls
 * and results, search results...), which are noted in `dropped`. `toolNames` resolves tool-result names.
 */
export function decodeBlock(raw: unknown, param: string, request: IrRequest, toolNames: Map<string, string>): IrPart | undefined {
  const type = isRecord(raw) && typeof raw.type === 'string' ? raw.type : '';
  if (!(type in blockSchemas)) {
    noteDropped(request, `content block ${type || '(untyped)'}`);
    return undefined;
  }
  const block = parseAt(blockSchemas[type as keyof typeof blockSchemas], raw, param) as AnthropicBlock;
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text, ...cacheOf(block.cache_control) };
    case 'image':
      return { type: 'image', source: mediaSource(block.source), ...cacheOf(block.cache_control) };
    case 'document':
      return { type: 'document', source: mediaSource(block.source), ...(block.title ? { title: block.title } : {}), ...cacheOf(block.cache_control) };
    case 'tool_use':
      toolNames.set(block.id, block.name);
      return { type: 'tool_call', id: block.id, name: block.name, arguments: JSON.stringify(block.input), ...cacheOf(block.cache_control) };
    case 'tool_result': {
      const name = toolNames.get(block.tool_use_id);
      const content = resultContent(block.content, `${param}.content`, request);
      const flags = { ...(name ? { name } : {}), ...(block.is_error ? { isError: true } : {}), ...cacheOf(block.cache_control) };
      return { type: 'tool_result', toolCallId: block.tool_use_id, content, ...flags };
    }
    case 'thinking':
      return thinkingFromClient('anthropic', block.thinking, block.signature);
    case 'redacted_thinking':
      return { type: 'redacted_thinking', data: block.data };
  }
}

/**
 * One Messages turn -> IR messages. A user turn's tool results go into `tool` messages and its other
 * blocks into `user` messages, keeping their order (the IR keeps tool results out of user turns).
 */
export function decodeTurn(role: 'user' | 'assistant', content: string | unknown[], param: string, request: IrRequest, toolNames: Map<string, string>): IrMessage[] {
  if (typeof content === 'string') return [{ role, parts: [{ type: 'text', text: content }] }];
  const out: IrMessage[] = [];
  content.forEach((raw, i) => {
    const part = decodeBlock(raw, `${param}[${i}]`, request, toolNames);
    if (!part) return;
    const target = role === 'user' && part.type === 'tool_result' ? 'tool' : role;
    const last = out[out.length - 1];
    if (last?.role === target) last.parts.push(part);
    else out.push({ role: target, parts: [part] });
  });
  return out;
}
