import type { ClientCodec, UpstreamCodec } from '../../codec.js';
import { decodeResponsesRequest } from './decode-request.js';
import { decodeResponsesResponse } from './decode-response.js';
import { encodeResponsesRequest } from './encode-request.js';
import { encodeOpenAiError } from '../openai-chat/errors.js';
import { encodeResponsesResponse } from './encode-response.js';
import { encodeResponsesStreamError } from './errors.js';
import { createResponsesStreamDecoder } from './stream-decoder.js';
import { createResponsesStreamEncoder } from './stream-encoder.js';
import { parseDataModels, readOpenAiError } from '../../util/shapes.js';

export { assertResponsesStatePortable, STATEFUL_FIELDS } from './passthrough.js';

/** OpenAI Responses (`POST /v1/responses`) as a client format. */
export const openAiResponsesClient: ClientCodec = {
  format: 'openai-responses',
  decodeRequest: decodeResponsesRequest,
  encodeResponse: encodeResponsesResponse,
  createStreamEncoder: createResponsesStreamEncoder,
  encodeError: encodeOpenAiError,
  encodeStreamError: (error, position) => encodeResponsesStreamError(error, position),
  // Responses streams end with usage in response.completed, but their text is read for the reply anyway.
  usageReported: () => false,
};

/** OpenAI Responses as an upstream format. */
export const openAiResponsesUpstream: UpstreamCodec = {
  format: 'openai-responses',
  encodeRequest: encodeResponsesRequest,
  decodeResponse: decodeResponsesResponse,
  createStreamDecoder: createResponsesStreamDecoder,
  path: () => 'responses',
  modelsPath: 'models',
  parseModels: parseDataModels,
  readError: readOpenAiError,
};
