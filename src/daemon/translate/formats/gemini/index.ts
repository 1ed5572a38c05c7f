import type { ClientCodec, UpstreamCodec } from '../../codec.js';
import { decodeGeminiClientBody } from './decode-request.js';
import { decodeGeminiResponse } from './decode-response.js';
import { encodeGeminiRequest } from './encode-request.js';
import { encodeGeminiResponse } from './encode-response.js';
import { encodeGeminiError, encodeGeminiStreamError, readGeminiError } from './errors.js';
import { parseGeminiModels } from './models.js';
import { createGeminiStreamDecoder } from './stream-decoder.js';
import { createGeminiStreamEncoder } from './stream-encoder.js';

export { decodeGeminiRequest } from './decode-request.js';

/** `models/<id>`: model ids may hold `/` (tuned models, node prefixes) but nothing else that would change the path. */
function modelPath(model: string): string {
  return `models/${encodeURIComponent(model).replace(/%2F/g, '/')}`;
}

/**
 * Gemini `models/{model}:generateContent` / `:streamGenerateContent?alt=sse` as a client format. The model
 * and the streaming flag live in the URL: the route passes them as `model` and `stream` fields added to the
 * body (or calls `decodeGeminiRequest(body, model, stream)` directly).
 */
export const geminiClient: ClientCodec = {
  format: 'gemini',
  decodeRequest: decodeGeminiClientBody,
  encodeResponse: encodeGeminiResponse,
  createStreamEncoder: createGeminiStreamEncoder,
  encodeError: encodeGeminiError,
  encodeStreamError: encodeGeminiStreamError,
  usageReported: () => false,
  countTokens: {
    decodeRequest: (body) => decodeGeminiClientBody({ ...body, stream: false }),
    encodeReply: (tokens) => ({ totalTokens: tokens }),
  },
};

/**
 * Gemini as an upstream. The encoded body holds neither model nor stream flag: the caller builds the URL
 * from `request.model` and uses `:streamGenerateContent?alt=sse` when `request.stream` is set.
 */
export const geminiUpstream: UpstreamCodec = {
  format: 'gemini',
  encodeRequest: encodeGeminiRequest,
  decodeResponse: decodeGeminiResponse,
  createStreamDecoder: createGeminiStreamDecoder,
  path: (model, stream) => `${modelPath(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
  countTokensPath: (model) => `${modelPath(model)}:countTokens`,
  modelsPath: 'models',
  parseModels: parseGeminiModels,
  readError: readGeminiError,
  // The model is in the path, never in the body.
  nativeBody: (raw) => {
    const { model: _model, ...body } = raw;
    return body;
  },
};
