import { createHash } from 'node:crypto';
import type { IrRequest } from '../translate/ir.js';

/** Bumped whenever the normalization changes, so old entries simply stop matching. */
const KEY_VERSION = 1;

/** JSON with sorted keys and without undefined values: equal meaning, equal text, whatever the field order. */
function canonical(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical(obj[k])}`).join(',')}}`;
}

/** A part or tool without its prompt-cache marker (it changes the upstream's billing, not the answer). */
function unmarked<T extends object>(item: T): T {
  if (!('cache' in item)) return item;
  const { cache: _cache, ...rest } = item as T & { cache?: unknown };
  return rest as T;
}

/**
 * The cache key of a request sent to a target: sha256 of the normalized IR request (model as resolved,
 * system, messages, tools, every sampling and output parameter) and the target provider. Left out: the
 * stream flag (a streaming request may be served a cached reply), usage options, end-user id and metadata,
 * the dropped-field notes, prompt-cache markers, and the API key (the cache is shared by every key that
 * opts in).
 */
export function cacheKey(request: IrRequest, provider: string): string {
  const { stream: _stream, includeUsage: _usage, user: _user, metadata: _metadata, dropped: _dropped, ...rest } = request;
  const normalized = {
    ...rest,
    v: KEY_VERSION,
    provider,
    system: rest.system.map(unmarked),
    messages: rest.messages.map((m) => ({ ...m, parts: m.parts.map(unmarked) })),
    tools: rest.tools?.map(unmarked),
  };
  return createHash('sha256').update(canonical(normalized)).digest('hex');
}
