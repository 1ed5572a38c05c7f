import type { ClientCodec } from '../../codec.js';
import { decodeCompletionRequest } from './decode-request.js';
import { encodeOpenAiError, encodeOpenAiStreamError } from '../openai-chat/errors.js';
import { encodeCompletionResponse } from './encode-response.js';
import { CompletionStreamEncoder } from './stream-encoder.js';

/** Legacy OpenAI Completions (`POST /v1/completions`), a client format only: no provider is called this way. */
export const openAiCompletionsClient: ClientCodec = {
  format: 'openai-completions',
  decodeRequest: decodeCompletionRequest,
  encodeResponse: encodeCompletionResponse,
  createStreamEncoder: (request, options) => new CompletionStreamEncoder(request, options),
  encodeError: encodeOpenAiError,
  encodeStreamError: encodeOpenAiStreamError,
  usageReported: () => false,
};
