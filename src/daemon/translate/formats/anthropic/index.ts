import type { ClientCodec, UpstreamCodec } from '../../codec.js';
import { decodeMessagesRequest } from './decode-request.js';
import { decodeMessagesResponse } from './decode-response.js';
import { encodeMessagesRequest, messagesRequestHeaders } from './encode-request.js';
import { encodeMessagesResponse } from './encode-response.js';
import { encodeAnthropicError, encodeAnthropicStreamError } from './errors.js';
import { MessagesStreamDecoder } from './stream-decoder.js';
import { MessagesStreamEncoder } from './stream-encoder.js';
import { parseDataModels } from '../../util/shapes.js';
import { readAnthropicError } from './errors.js';

/** Anthropic Messages as clients speak it (`POST /v1/messages`). */
export const anthropicClient: ClientCodec = {
  format: 'anthropic',
  decodeRequest: decodeMessagesRequest,
  encodeResponse: encodeMessagesResponse,
  createStreamEncoder: (request, options) => new MessagesStreamEncoder(request, options),
  encodeError: encodeAnthropicError,
  encodeStreamError: encodeAnthropicStreamError,
  usageReported: () => true,
  countTokens: {
    // A count request is a Messages request without `max_tokens`.
    decodeRequest: (body, headers) => decodeMessagesRequest({ max_tokens: 1, ...body }, headers),
    encodeReply: (tokens) => ({ input_tokens: tokens }),
  },
};

/** Anthropic Messages as an upstream. */
export const anthropicUpstream: UpstreamCodec = {
  format: 'anthropic',
  encodeRequest: encodeMessagesRequest,
  requestHeaders: messagesRequestHeaders,
  decodeResponse: decodeMessagesResponse,
  createStreamDecoder: () => new MessagesStreamDecoder(),
  path: () => 'messages',
  countTokensPath: () => 'messages/count_tokens',
  modelsPath: 'models',
  parseModels: parseDataModels,
  readError: readAnthropicError,
  // Anthropic's beta flags gate body fields (context_management, mid-conversation system turns...).
  nativeHeaders: (clientHeaders) => {
    const beta = clientHeaders.get('anthropic-beta');
    return beta ? { 'anthropic-beta': beta } : undefined;
  },
};
