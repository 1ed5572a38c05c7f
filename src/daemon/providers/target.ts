import type { ProviderDef, Credential, UpstreamFormat } from './types.js';
import type { UpstreamEncodeOptions, UpstreamWireFormat } from '../translate/codec.js';
import { getUpstreamCodec } from '../translate/registry.js';
import { modelCapabilities } from './capabilities.js';

/** One place a request can be sent: a provider, the model id it knows, and the account to use. */
export interface Target {
  provider: ProviderDef;
  /** Model id as the upstream expects it (no provider prefix). */
  model: string;
  /** The model as the client named it, e.g. `openai/gpt-4o` (for logs and usage). */
  publicModel: string;
  /** Connection id; undefined for no-auth providers used without a stored connection. */
  connectionId?: string;
  credential: Credential;
  baseUrl: string;
  /** Extra headers from a provider node or connection. */
  headers: Record<string, string>;
  /** Wire format for chat-like requests to this target. */
  format: UpstreamFormat;
  /** The combo entry this target came from (`<comboId>#<index>`), when routed through a combo. */
  comboEntry?: string;
  /** The connection's outbound proxy (`providerSpecificData.proxy`): a URL, null for none, undefined to inherit. */
  proxy?: string | null;
  /** Code Assist project of the connection (Gemini CLI, Antigravity), sent in the request envelope. */
  project?: string;
  /** When the connection's access token expires (epoch ms), for OAuth connections that say so. */
  expiresAt?: number;
}

/**
 * How requests to this target are spelled where servers of one format differ: OpenAI takes
 * `max_completion_tokens`, every other Chat Completions server `max_tokens` (ProviderDef.chatTokenLimit), a
 * provider node what its `tokenLimitField` says (`auto`: by model, OpenAI's reasoning models refuse `max_tokens`);
 * and what its model accepts (providers/capabilities.ts): `reasoning_effort`, its output maximum.
 */
export function encodeOptionsFor(target: Target): UpstreamEncodeOptions {
  const caps = modelCapabilities(target.provider, target.model);
  return {
    tokenLimitField: target.provider.chatTokenLimit ?? (target.provider.chatTokenLimitByModel && caps.completionTokensOnly ? 'max_completion_tokens' : 'max_tokens'),
    // OpenAI's own API is the Chat Completions server known to take the `developer` role.
    developerRole: target.provider.id === 'openai',
    reasoningEffort: caps.reasoningEffort,
    ...(caps.maxOutputTokens ? { maxOutputTokens: caps.maxOutputTokens } : {}),
    ...(target.project ? { project: target.project } : {}),
  };
}

/** Joins a base URL and a path without doubling slashes. */
export function joinUrl(base: string, path: string): string {
  return `${base.replace(/\/+$/, '')}/${path.replace(/^\/+/, '')}`;
}

/** The URL of a chat-like call in the target's wire format (the codec knows its paths). */
export function chatUrl(target: Target, format: UpstreamWireFormat, stream: boolean): string {
  return joinUrl(target.baseUrl, getUpstreamCodec(format).path(target.model, stream));
}

/** Headers for a call to the target: content type, provider fixed headers, node headers, credential. */
export function targetHeaders(target: Target, accept?: string): Record<string, string> {
  const h: Record<string, string> = { 'content-type': 'application/json', ...target.provider.headers, ...target.headers };
  if (accept) h.accept = accept;
  Object.assign(h, target.provider.authHeaders(target.credential));
  return h;
}

/**
 * A target's headers plus a request's own (never mutating the shared target headers). `anthropic-beta`
 * lists are joined, so a provider's own flag (the OAuth beta) and the client's flags all reach Anthropic.
 */
export function withRequestHeaders(base: Record<string, string>, extra: Record<string, string> | undefined): Record<string, string> {
  if (!extra || Object.keys(extra).length === 0) return base;
  const out = { ...base, ...extra };
  const own = base['anthropic-beta'];
  const more = extra['anthropic-beta'];
  if (own && more) out['anthropic-beta'] = [...new Set([...own.split(','), ...more.split(',')].map((b) => b.trim()).filter(Boolean))].join(',');
  return out;
}

/** A copy of `headers` without the named ones (lower-case names; `headers` itself is shared and never changed). */
export function withoutHeaders(headers: Record<string, string>, remove: readonly string[] | undefined): Record<string, string> {
  if (!remove || remove.length === 0) return headers;
  const out: Record<string, string> = {};
  for (const k in headers) if (!remove.includes(k.toLowerCase())) out[k] = headers[k]!;
  return out;
}

/**
 * Request headers for a target (credential, provider and node headers, accept, identity encoding), built
 * once per target and kind: targets are shared until a connection changes (ProviderDirectory), and a
 * changed credential comes as a new target. Read-only for callers.
 */
const headerCache = new WeakMap<Target, { json?: Record<string, string>; sse?: Record<string, string> }>();

export function requestHeaders(target: Target, stream: boolean): Record<string, string> {
  let entry = headerCache.get(target);
  if (!entry) headerCache.set(target, (entry = {}));
  const kind = stream ? 'sse' : 'json';
  return (entry[kind] ??= { ...targetHeaders(target, stream ? 'text/event-stream' : 'application/json'), 'accept-encoding': 'identity' });
}

/** The secrets of a target's credential, for masking them in anything sent back or logged. */
export function credentialSecrets(target: Target): string[] {
  return Object.values(target.credential).filter((v): v is string => typeof v === 'string' && v.length > 0);
}
