import type { ChatCall } from './chat.js';
import type { Target } from './target.js';

/**
 * Chat Completions fields only OpenAI itself accepts: OpenAI-compatible providers reject several of
 * them with a 400, so they are stripped on native passthrough to anyone but OpenAI (spec, proxy endpoints: client-only fields the upstream rejects are stripped on native passthrough).
 */
const OPENAI_ONLY_CHAT_FIELDS = ['store', 'metadata', 'prompt_cache_key', 'safety_identifier', 'service_tier', 'prediction'];

/**
 * The upstream body for same-format passthrough: the client's body with the model rewritten to the
 * upstream's id and client-only fields removed. Everything else, built-in tools included, passes untouched.
 */
export function nativeBody(call: ChatCall, target: Target): Record<string, unknown> {
  const body: Record<string, unknown> = { ...call.raw };
  if (call.clientFormat === 'gemini') {
    delete body.model;
    return body;
  }
  body.model = target.model;
  if (call.clientFormat === 'openai-chat' && target.provider.id !== 'openai') {
    for (const f of OPENAI_ONLY_CHAT_FIELDS) delete body[f];
  }
  return body;
}

/**
 * Client headers a same-format upstream needs: Anthropic's `anthropic-beta` flags, which gate body fields
 * (context_management, mid-conversation system messages...) and header-only features.
 */
export function nativeHeaders(call: ChatCall, headers: Headers): Record<string, string> | undefined {
  if (call.clientFormat !== 'anthropic') return undefined;
  const beta = headers.get('anthropic-beta');
  return beta ? { 'anthropic-beta': beta } : undefined;
}
