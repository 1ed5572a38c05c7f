import type { CacheMarker, IrPart } from '../ir.js';
import { isRecord } from './json.js';

/**
 * Prompt-cache markers sent by clients of formats that have none of their own. OpenAI-format clients of
 * Anthropic-backed gateways (LiteLLM, OpenRouter, Vercel's AI SDK) put Anthropic's `cache_control` on content
 * parts, messages and tools; carried in the IR, the marker reaches an Anthropic upstream as the client meant
 * it. Anything but Anthropic's shape is ignored (OpenAI itself caches without markers).
 */
export function cacheMarkerOf(control: unknown): { cache?: CacheMarker } {
  if (!isRecord(control) || control.type !== 'ephemeral') return {};
  return { cache: { type: 'ephemeral', ...(typeof control.ttl === 'string' && control.ttl ? { ttl: control.ttl } : {}) } };
}

/** The parts a cache marker can sit on (Anthropic's cacheable blocks). */
type CacheablePart = Extract<IrPart, { cache?: CacheMarker }>;

function cacheable(part: IrPart | undefined): part is CacheablePart {
  return part !== undefined && (part.type === 'text' || part.type === 'image' || part.type === 'document' || part.type === 'tool_call' || part.type === 'tool_result');
}

/**
 * A message-level `cache_control` (LiteLLM's form for string content): the cache breakpoint is the end of
 * the message, so the marker goes on its last part that can hold one. Mutates `parts`' last part.
 */
export function markLastPart(parts: IrPart[], control: unknown): void {
  const { cache } = cacheMarkerOf(control);
  if (!cache) return;
  const last = parts.findLast(cacheable);
  if (last) last.cache = cache;
}
