import type { ClientCodec, UpstreamCodec } from '../../codec.js';
import { parseDataModels, readOpenAiError } from '../../util/shapes.js';
import { decodeCompletionResponse } from './decode-response.js';
import { encodeCompletionRequest } from './encode-request.js';
import { CompletionStreamDecoder } from './stream-decoder.js';
import { decodeCompletionRequest } from './decode-request.js';
import { encodeOpenAiError, encodeOpenAiStreamError } from '../openai-chat/errors.js';
import { encodeCompletionResponse } from './encode-response.js';
import { CompletionStreamEncoder } from './stream-encoder.js';

/** Legacy OpenAI Completions as clients speak it (`POST /v1/completions`). */
export const openAiCompletionsClient: ClientCodec = {
  format: 'openai-completions',
  decodeRequest: decodeCompletionRequest,
  encodeResponse: encodeCompletionResponse,
  createStreamEncoder: (request, options) => new CompletionStreamEncoder(request, options),
  encodeError: encodeOpenAiError,
  encodeStreamError: encodeOpenAiStreamError,
  usageReported: () => false,
};

/**
 * Legacy Completions as an upstream: providers whose `endpoints.completions` is set (OpenAI, compatible
 * nodes, vLLM, llama.cpp, Ollama...) serve `/v1/completions` clients with it, natively or, when request
 * stages rewrote the request, encoded from IR.
 */
export const openAiCompletionsUpstream: UpstreamCodec = {
  format: 'openai-completions',
  encodeRequest: encodeCompletionRequest,
  decodeResponse: decodeCompletionResponse,
  createStreamDecoder: () => new CompletionStreamDecoder(),
  path: () => 'completions',
  modelsPath: 'models',
  parseModels: parseDataModels,
  readError: readOpenAiError,
};
