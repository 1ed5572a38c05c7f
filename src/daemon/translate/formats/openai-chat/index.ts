import type { ClientCodec, UpstreamCodec } from '../../codec.js';
import { decodeChatRequest } from './decode-request.js';
import { decodeChatResponse } from './decode-response.js';
import { encodeChatRequest } from './encode-request.js';
import { encodeChatResponse } from './encode-response.js';
import { encodeOpenAiError, encodeOpenAiStreamError } from './errors.js';
import { ChatStreamDecoder } from './stream-decoder.js';
import { ChatStreamEncoder } from './stream-encoder.js';
import { parseDataModels, readOpenAiError } from '../../util/shapes.js';

/**
 * Chat Completions fields only OpenAI itself accepts: OpenAI-compatible servers reject several of them with a
 * 400, so a same-format passthrough to anyone but OpenAI leaves them out (spec "Proxy endpoints": client-only
 * fields the upstream rejects are stripped on native passthrough).
 */
const OPENAI_ONLY_CHAT_FIELDS = ['store', 'metadata', 'prompt_cache_key', 'safety_identifier', 'service_tier', 'prediction'];

/** OpenAI Chat Completions as clients speak it (`POST /v1/chat/completions`). */
export const openAiChatClient: ClientCodec = {
  format: 'openai-chat',
  decodeRequest: decodeChatRequest,
  encodeResponse: encodeChatResponse,
  createStreamEncoder: (request, options) => new ChatStreamEncoder(request, options),
  encodeError: encodeOpenAiError,
  encodeStreamError: encodeOpenAiStreamError,
  usageReported: (raw) => (raw.stream_options as { include_usage?: unknown } | undefined)?.include_usage === true,
};

/** OpenAI Chat Completions as an upstream (OpenAI and the many OpenAI-compatible providers). */
export const openAiChatUpstream: UpstreamCodec = {
  format: 'openai-chat',
  encodeRequest: encodeChatRequest,
  decodeResponse: decodeChatResponse,
  createStreamDecoder: () => new ChatStreamDecoder(),
  path: () => 'chat/completions',
  modelsPath: 'models',
  parseModels: parseDataModels,
  readError: readOpenAiError,
  nativeBody: (raw, model, providerId) => {
    const body: Record<string, unknown> = { ...raw, model };
    if (providerId !== 'openai') for (const f of OPENAI_ONLY_CHAT_FIELDS) delete body[f];
    return body;
  },
};
