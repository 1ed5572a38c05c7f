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

/**
 * `models/<id>`, the id encoded as one path segment: a `/` or `..` in it must never address another
 * resource (providers/model-id.ts refuses such ids before a request is planned; this is the second wall).
 */
export function geminiModelPath(model: string): string {
  // Every use appends `:<action>`, so even an id of `..` never forms a dot segment.
  return `models/${encodeURIComponent(model)}`;
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
  path: (model, stream) => `${geminiModelPath(model)}:${stream ? 'streamGenerateContent?alt=sse' : 'generateContent'}`,
  countTokensPath: (model) => `${geminiModelPath(model)}:countTokens`,
  modelsPath: 'models',
  parseModels: parseGeminiModels,
  readError: readGeminiError,
  // The model is in the path, never in the body.
  nativeBody: (raw) => {
    const { model: _model, ...body } = raw;
    return body;
  },
};
