import type { ClientCodec, UpstreamCodec } from '../../codec.js';
import { decodeChatRequest } from './decode-request.js';
import { decodeChatResponse } from './decode-response.js';
import { encodeChatRequest } from './encode-request.js';
import { encodeChatResponse } from './encode-response.js';
import { encodeOpenAiError, encodeOpenAiStreamError } from './errors.js';
import { ChatStreamDecoder } from './stream-decoder.js';
import { ChatStreamEncoder } from './stream-encoder.js';
import { parseDataModels, readOpenAiError } from '../../util/shapes.js';

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
};
